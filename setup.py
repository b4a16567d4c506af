"""Builds the Python package `wattcut` with CMake for the interpreter that runs pip.

    python3 -m venv --system-site-packages VENV
    VENV/bin/pip install --no-build-isolation .      # from the repository root

The package is what python/CMakeLists.txt assembles (target wattcut_python): the pure-Python files
of python/wattcut, the pybind11 module _wattcut, its type stub, py.typed, the generated _version.py
and the frequency watchdog executable wattcut-freq-setter. This file configures CMake for
sys.executable, builds only those targets and copies the assembled folder into the wheel.

Environment:
    CMAKE_ARGS                   extra CMake configure arguments (split like a shell would),
                                 after this file's own, so they win: e.g. -DCMAKE_BUILD_TYPE=Debug
    WATTCUT_CMAKE_BUILD_DIR      the CMake build folder (default: build/pip-cp311 for CPython 3.11;
                                 kept between builds, so a second build is incremental)
    CMAKE_BUILD_PARALLEL_LEVEL   parallel compile jobs (CMake's own variable; default: Ninja's)
The version is the one of project(wattcut VERSION ...) in CMakeLists.txt. docs/python.md, "Installing
with pip", tells the rest.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.editable_wheel import editable_wheel
from setuptools.errors import SetupError

SOURCE_DIR = Path(__file__).resolve().parent
# The targets the package needs; wattcut_python copies the other two beside the .py files.
PACKAGE_TARGETS = ["_wattcut", "wattcut-freq-setter", "wattcut_python"]
INSTALL_DEPS_HINT = "install the build dependencies with `sudo bash scripts/install-deps.sh` (Debian 12)"
# At most this many lines of a failed CMake configure's log are shown (its errors first).
CONFIGURE_LOG_TAIL_LINES = 40


def project_version():
    """The version of project(wattcut VERSION x.y.z) in the top-level CMakeLists.txt."""
    cmake_lists = SOURCE_DIR / "CMakeLists.txt"
    text = cmake_lists.read_text(encoding="utf-8")
    match = re.search(r"^\s*project\s*\(\s*wattcut\s+VERSION\s+([0-9]+(?:\.[0-9]+)*)", text,
                      re.MULTILINE | re.IGNORECASE)
    if match is None:
        raise SetupError(f"{cmake_lists}: no line 'project(wattcut VERSION x.y.z ...)' to take the "
                         "package's version from")
    return match.group(1)


def cmake_build_dir():
    """WATTCUT_CMAKE_BUILD_DIR, or build/pip-cpXY in the source tree (never build/ itself)."""
    configured = os.environ.get("WATTCUT_CMAKE_BUILD_DIR", "").strip()
    if configured:
        return Path(configured).expanduser().resolve()
    tag = f"{sys.implementation.name[:2]}{sys.version_info.major}{sys.version_info.minor}"
    return SOURCE_DIR / "build" / f"pip-{tag}"


def require_tools():
    """A clear error, before CMake starts, when a build tool is missing."""
    missing = [tool for tool in ("cmake", "ninja") if shutil.which(tool) is None]
    compiler = os.environ.get("CXX", "c++")
    if shutil.which(shlex.split(compiler)[0] if compiler.strip() else "c++") is None:
        missing.append(f"a C++ compiler ({compiler})")
    if missing:
        raise SetupError(f"building wattcut needs {', '.join(missing)}, not found on PATH; "
                         f"{INSTALL_DEPS_HINT}")


def cmake_error_blocks(lines):
    """The "CMake Error ..." lines of a configure log with their indented continuation lines."""
    shown = []
    in_error = False
    for line in lines:
        if line.startswith("CMake Error"):
            in_error = True
        elif line and not line[0].isspace():
            in_error = False
        if in_error and (line.strip() or (shown and shown[-1].strip())):
            shown.append(line)
    return shown


def run_logged(command, log_path, what):
    """Runs a CMake configure with its output in log_path; on failure, raises with its errors."""
    with open(log_path, "w", encoding="utf-8") as log:
        result = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
    if result.returncode == 0:
        return
    lines = Path(log_path).read_text(encoding="utf-8", errors="replace").splitlines()
    shown = cmake_error_blocks(lines) or lines[-CONFIGURE_LOG_TAIL_LINES:]
    shown = shown[:CONFIGURE_LOG_TAIL_LINES]
    raise SetupError(f"{what} failed (exit status {result.returncode}); its messages "
                     f"({log_path}):\n    " + "\n    ".join(shown) +
                     f"\nA package missing? {INSTALL_DEPS_HINT}")


EDITABLE_REFUSED = ("an editable install (pip install -e) is not supported: it would build into "
                    "python/wattcut; install normally, or put a CMake build's python/ folder on "
                    "PYTHONPATH (docs/python.md)")


class NoEditableWheel(editable_wheel):
    """pip install -e: refused with one line (setuptools would wrap build_ext's error in a traceback)."""

    def run(self):
        raise SetupError(EDITABLE_REFUSED)


class CMakeBuild(build_ext):
    """build_ext that builds the package with CMake and copies the assembled folder into build_lib."""

    def run(self):
        if self.inplace:
            raise SetupError(EDITABLE_REFUSED)
        require_tools()
        build_dir = cmake_build_dir()
        if build_dir in (SOURCE_DIR, (SOURCE_DIR / "build").resolve()):
            raise SetupError(f"WATTCUT_CMAKE_BUILD_DIR={build_dir} is the source tree or the "
                             "developers' CMake build folder; choose another one (the default is "
                             "build/pip-cpXY)")
        build_dir.mkdir(parents=True, exist_ok=True)
        configure = ["cmake", "-S", str(SOURCE_DIR), "-B", str(build_dir),
                     f"-DPython_EXECUTABLE={sys.executable}", "-DBUILD_TESTING=OFF",
                     "-DCMAKE_BUILD_TYPE=Release"]
        if not (build_dir / "CMakeCache.txt").exists():
            configure += ["-G", "Ninja"]
        configure += shlex.split(os.environ.get("CMAKE_ARGS", ""))
        print(f"wattcut: configuring CMake in {build_dir} for {sys.executable}", flush=True)
        run_logged(configure, build_dir / "pip-configure.log", "CMake configure")

        build = ["cmake", "--build", str(build_dir), "--target", *PACKAGE_TARGETS]
        if self.parallel:
            build += ["--parallel", str(self.parallel)]
        print(f"wattcut: building {', '.join(PACKAGE_TARGETS)}", flush=True)
        if subprocess.run(build, check=False).returncode != 0:
            raise SetupError(f"the CMake build in {build_dir} failed (its compiler messages are "
                             f"above); a package missing? {INSTALL_DEPS_HINT}")

        assembled = build_dir / "python" / "wattcut"
        self.copy_package(assembled, Path(self.build_lib) / "wattcut")

    def copy_package(self, assembled, destination):
        """Copies the files of CMake's assembled package, keeping their modes (the helper's x bit)."""
        # The module's name for this interpreter (_wattcut.cpython-311-x86_64-linux-gnu.so); a build
        # folder used by another interpreter before may hold others, which are not copied.
        extension = Path(self.get_ext_fullpath("wattcut._wattcut")).name
        helper = assembled / "wattcut-freq-setter"
        if not (assembled / extension).is_file() or not os.access(helper, os.X_OK):
            raise SetupError(f"{assembled}: the CMake build left no {extension} or no executable "
                             "wattcut-freq-setter")
        destination.mkdir(parents=True, exist_ok=True)
        for source in sorted(assembled.iterdir()):
            other_module = source.name.startswith("_wattcut.") and source.suffix == ".so"
            if source.is_file() and (source.name == extension or not other_module):
                shutil.copy2(source, destination / source.name)


# setuptools' own files (build/lib, bdist, egg-info) go under the CMake build folder, not into the
# source tree; egg_info wants its folder to exist already.
SETUPTOOLS_DIR = cmake_build_dir() / "setuptools"
SETUPTOOLS_DIR.mkdir(parents=True, exist_ok=True)

setup(
    name="wattcut",
    version=project_version(),
    description="Energy-optimal GPU frequency plans for pipeline-parallel training (Perseus)",
    python_requires=">=3.11",
    packages=["wattcut"],
    package_dir={"": "python"},
    package_data={"wattcut": ["py.typed", "_wattcut.pyi"]},
    # Built by CMakeBuild; declaring it makes the wheel platform-specific (cp311-cp311-linux_x86_64).
    ext_modules=[Extension("wattcut._wattcut", sources=[])],
    cmdclass={"build_ext": CMakeBuild, "editable_wheel": NoEditableWheel},
    options={"build": {"build_base": str(SETUPTOOLS_DIR)}, "egg_info": {"egg_base": str(SETUPTOOLS_DIR)}},
    zip_safe=False,
)
