"""pip install of wattcut into a fresh virtual environment, offline (issue 16, "What must be true" 1).

A `/usr/bin/python3 -m venv --system-site-packages` venv, `pip install --no-build-isolation
--no-index <repository root>`, then `import wattcut` from another folder without PYTHONPATH: Debian's
torch is visible, the version is CMake's project() version, the frequency-setter helper is
installed and runs, and the compiled module loads a frontier the CLI wrote. `pip wheel` makes a
platform wheel holding the module and the helper; `pip uninstall` removes it all; a missing build
tool or -dev package is a short error naming scripts/install-deps.sh; `pip install -e` is refused
in one line.

Environment (set by tests/install/CMakeLists.txt):
    WATTCUT_SOURCE_DIR          the repository root (what pip installs)
    WATTCUT_VERSION             CMake's PROJECT_VERSION
    WATTCUT_BINARY              the build's `wattcut` (writes the frontier the module loads)
    WATTCUT_BUILD_PYTHON_DIR    the build's assembled python/ folder (the tests' PYTHONPATH)
    WATTCUT_PIP_CMAKE_BUILD_DIR the CMake build folder pip's builds share (kept: a rerun is
                                incremental)
    WATTCUT_PIP_CMAKE_ARGS      CMAKE_ARGS for those builds (a quick unoptimised build)
"""

import csv
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import unittest
import zipfile

SOURCE_DIR = os.environ["WATTCUT_SOURCE_DIR"]
VERSION = os.environ["WATTCUT_VERSION"]
WATTCUT_BINARY = os.environ["WATTCUT_BINARY"]
BUILD_PYTHON_DIR = os.environ["WATTCUT_BUILD_PYTHON_DIR"]
PIP_CMAKE_BUILD_DIR = os.environ["WATTCUT_PIP_CMAKE_BUILD_DIR"]
PIP_CMAKE_ARGS = os.environ.get("WATTCUT_PIP_CMAKE_ARGS", "")
# The interpreter the venv is made from: Debian's, whose torch the venv sees.
BASE_PYTHON = "/usr/bin/python3"
# The compile jobs of pip's CMake build (the test is registered with PROCESSORS 2).
BUILD_JOBS = "2"
# Each pip step is bounded, below ctest's default 1500 s, so a hang fails with pip's output (a build is
# about a minute and a half on two idle cores).
PIP_STEP_LIMIT_S = 1200

# What the check in the venv prints, one "name=value" per line.
IMPORT_CHECK = r"""
import os, sys
import wattcut, wattcut._wattcut as native
from wattcut.pipeline_frequency import _packaged_freq_setter
frontier = wattcut.Frontier.load(sys.argv[1])
try:
    wattcut.Frontier.load(os.path.join(sys.argv[1], "no-such-folder"))
    error = "none"
except wattcut.WattcutError as e:
    error = type(e).__name__
import importlib.metadata, importlib.util
torch = importlib.util.find_spec("torch")  # Debian's, through --system-site-packages (not imported)
print("torch=" + (torch.origin if torch else "none"))
print("file=" + wattcut.__file__)
print("native=" + native.__file__)
print("version=" + wattcut.__version__)
print("metadata_version=" + importlib.metadata.version("wattcut"))
print("freq_setter=" + _packaged_freq_setter())
print("num_points=%d" % len(frontier.points))
print("num_stages=%d" % frontier.num_stages)
print("missing_folder_error=" + error)
"""


def clean_environment(**extra):
    """The environment without PYTHONPATH (or any PYTHON* variable) and without pip's config files."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.update(extra)
    return env


def run(command, cwd, env, what):
    """Runs command; returns its output (stdout and stderr), or fails the test with it."""
    result = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, timeout=PIP_STEP_LIMIT_S, check=False)
    if result.returncode != 0:
        raise AssertionError(f"{what} failed (exit status {result.returncode}): {' '.join(command)}\n"
                             f"{result.stdout[-8000:]}")
    return result.stdout


def parse_lines(output):
    return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)


class PipInstallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wattcut-pip-")
        cls.venv = os.path.join(cls.tmp, "venv")
        cls.elsewhere = os.path.join(cls.tmp, "elsewhere")
        os.mkdir(cls.elsewhere)
        run([BASE_PYTHON, "-m", "venv", "--system-site-packages", cls.venv], cls.tmp, clean_environment(),
            "creating the venv")
        cls.pip = os.path.join(cls.venv, "bin", "pip")
        cls.python = os.path.join(cls.venv, "bin", "python")
        cls.build_env = clean_environment(WATTCUT_CMAKE_BUILD_DIR=PIP_CMAKE_BUILD_DIR, CMAKE_ARGS=PIP_CMAKE_ARGS,
                                          CMAKE_BUILD_PARALLEL_LEVEL=BUILD_JOBS)
        # A small frontier for the compiled module to load.
        cls.frontier_dir = os.path.join(cls.tmp, "frontier")
        run([WATTCUT_BINARY, "frontier", "--stages", "4", "--microbatches", "4", "--out", cls.frontier_dir],
            cls.tmp, clean_environment(), "wattcut frontier")
        with open(os.path.join(cls.frontier_dir, "frontier.csv"), newline="") as f:
            cls.frontier_rows = len(list(csv.DictReader(f)))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def site_packages(self):
        out = run([self.python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], self.elsewhere,
                  clean_environment(), "asking the venv for its site-packages")
        return out.strip()

    def assert_no_build_files_in_source_tree(self):
        for folder in (SOURCE_DIR, os.path.join(SOURCE_DIR, "python")):
            left = [name for name in os.listdir(folder) if name.endswith(".egg-info")]
            self.assertEqual(left, [], f"pip's build left {left} in {folder}")

    def test_install_import_from_another_folder_then_uninstall(self):
        run([self.pip, "install", "--no-build-isolation", "--no-index", "--no-cache-dir", SOURCE_DIR], self.elsewhere,
            self.build_env, "pip install")
        self.assert_no_build_files_in_source_tree()

        site = self.site_packages()
        package = os.path.join(site, "wattcut")
        out = run([self.python, "-c", IMPORT_CHECK, self.frontier_dir], self.elsewhere, clean_environment(),
                  "import wattcut in the venv")
        found = parse_lines(out)
        self.assertEqual(found["file"], os.path.join(package, "__init__.py"))
        self.assertEqual(os.path.dirname(found["native"]), package)
        self.assertEqual(found["version"], VERSION)
        self.assertEqual(found["metadata_version"], VERSION)
        self.assertEqual(int(found["num_points"]), self.frontier_rows)
        self.assertEqual(int(found["num_stages"]), 4)
        self.assertEqual(found["missing_folder_error"], "WattcutError")
        self.assertTrue(found["torch"].startswith("/usr/lib/python3/dist-packages/torch/"), found["torch"])
        for name in ("_wattcut.pyi", "py.typed", "_version.py"):
            self.assertTrue(os.path.isfile(os.path.join(package, name)), name)

        # The helper the package starts: installed beside the module, executable, and it runs.
        helper = os.path.join(package, "wattcut-freq-setter")
        self.assertEqual(found["freq_setter"], helper)
        self.assertTrue(os.stat(helper).st_mode & stat.S_IXUSR, f"{helper} is not executable")
        refused = subprocess.run([helper, "--not-an-option"], cwd=self.elsewhere, env=clean_environment(),
                                 capture_output=True, text=True, timeout=60, check=False)
        self.assertEqual(refused.returncode, 2, refused.stderr)
        self.assertIn("wattcut-freq-setter: unknown argument '--not-an-option'", refused.stderr)

        run([self.pip, "uninstall", "-y", "wattcut"], self.elsewhere, clean_environment(), "pip uninstall")
        self.assertFalse(os.path.exists(package), f"pip uninstall left {package}")
        listed = run([self.pip, "list", "--local", "--format=freeze"], self.elsewhere, clean_environment(), "pip list")
        self.assertNotIn("wattcut==", listed)

    def test_wheel_is_platform_specific_and_holds_module_and_helper(self):
        wheels = os.path.join(self.tmp, "wheels")
        run([self.pip, "wheel", "--no-build-isolation", "--no-index", "--no-deps", "--no-cache-dir", "-w", wheels,
             SOURCE_DIR], self.elsewhere, self.build_env, "pip wheel")
        self.assert_no_build_files_in_source_tree()
        names = os.listdir(wheels)
        self.assertEqual(len(names), 1, names)
        tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
        self.assertTrue(names[0].startswith(f"wattcut-{VERSION}-{tag}-{tag}-linux_"), names[0])
        with zipfile.ZipFile(os.path.join(wheels, names[0])) as wheel:
            members = {info.filename: info for info in wheel.infolist()}
        extension = "wattcut/_wattcut" + sysconfig.get_config_var("EXT_SUFFIX")
        for name in (extension, "wattcut/wattcut-freq-setter", "wattcut/__init__.py", "wattcut/_version.py",
                     "wattcut/_wattcut.pyi", "wattcut/py.typed", f"wattcut-{VERSION}.dist-info/RECORD"):
            self.assertIn(name, members)
        helper_mode = members["wattcut/wattcut-freq-setter"].external_attr >> 16
        self.assertTrue(helper_mode & stat.S_IXUSR, f"the wheel's helper has mode {oct(helper_mode)}")

    def test_build_tree_package_has_the_version(self):
        out = run([BASE_PYTHON, "-c", "import wattcut; print(wattcut.__version__)"], self.elsewhere,
                  clean_environment(PYTHONPATH=BUILD_PYTHON_DIR), "import wattcut from the build tree")
        self.assertEqual(out.strip(), VERSION)

    def failed_pip_output(self, pip_args, **env):
        """pip with a changed environment, expected to fail without a traceback; returns its output."""
        result = subprocess.run([self.pip, *pip_args, "--no-build-isolation", "--no-index", "--no-cache-dir"],
                                cwd=self.elsewhere, env=clean_environment(**env), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=PIP_STEP_LIMIT_S, check=False)
        self.assertNotEqual(result.returncode, 0, result.stdout)
        self.assertNotIn("Traceback", result.stdout)
        return result.stdout

    def failed_build_output(self, **env):
        """pip wheel with a changed environment, expected to fail naming install-deps.sh."""
        out = self.failed_pip_output(["wheel", "--no-deps", "-w", os.path.join(self.tmp, "no-wheels"), SOURCE_DIR],
                                     **env)
        self.assertIn("scripts/install-deps.sh", out)
        return out

    def test_missing_build_tool_is_a_short_error(self):
        empty_bin = os.path.join(self.tmp, "empty-bin")
        os.makedirs(empty_bin, exist_ok=True)
        out = self.failed_build_output(PATH=empty_bin, WATTCUT_CMAKE_BUILD_DIR=os.path.join(self.tmp, "no-tools"))
        self.assertIn("building wattcut needs cmake, ninja", out)

    def test_missing_dev_package_is_a_short_error(self):
        # As if nlohmann-json3-dev were not installed: CMake is told it may not find it.
        out = self.failed_build_output(WATTCUT_CMAKE_BUILD_DIR=os.path.join(self.tmp, "no-json"),
                                       CMAKE_ARGS="-DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON")
        self.assertIn("CMake configure failed", out)
        self.assertIn("nlohmann_json", out)
        self.assertLess(len(out.splitlines()), 120, out)

    def test_editable_install_is_refused_in_one_line(self):
        out = self.failed_pip_output(["install", "-e", SOURCE_DIR],
                                     WATTCUT_CMAKE_BUILD_DIR=os.path.join(self.tmp, "editable"))
        self.assertIn("error: an editable install (pip install -e) is not supported", out)
        built_in_source = [name for name in os.listdir(os.path.join(SOURCE_DIR, "python", "wattcut"))
                           if name.endswith(".so") or name == "wattcut-freq-setter"]
        self.assertEqual(built_in_source, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
