#!/usr/bin/env python3
"""The Debian package of a built tree (issue 16): cpack packs it into a temporary folder (nothing is
rebuilt: the build is done when ctest runs), `dpkg-deb` lists and extracts it, and from the
extracted root `wattcut --version` gives the CMake version, `import wattcut` works for Debian's
python3 from another folder and finds its frequency-setter helper, the bash completion completes
the CLI's own subcommands and flags, the manual pages name every flag, systemd reads both units,
and lintian reports no error and no warning that docs/install.md does not list with its reason.

Usage: deb_package_test.py --build-dir DIR --version X.Y.Z --source DIR --wattcut BIN [--cpack CPACK]"""

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ARGS = None
PACKAGE = {}  # filled once by setUpModule: deb, root, listing, fields


def run(argv, **kwargs):
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs.setdefault("timeout", 600)
    return subprocess.run(argv, **kwargs)


def cli_help(*path):
    out = run([ARGS.wattcut, *path, "--help"], timeout=60)
    if out.returncode != 0:
        raise AssertionError(f"wattcut {' '.join(path)} --help exited {out.returncode}: {out.stderr}")
    return out.stdout


def help_section(text, name):
    """The first words of the entries of one section (Subcommands, Options) of CLI11's help."""
    entries, inside = [], False
    for line in text.splitlines():
        if not line.startswith(" "):
            inside = line.rstrip() == name + ":"
            continue
        match = re.match(r"^  (\S+)", line)
        if inside and match:
            entries.append(match.group(1))
    return entries


def subcommands(*path):
    return help_section(cli_help(*path), "Subcommands")


def flags(*path):
    names = []
    for entry in help_section(cli_help(*path), "Options"):
        names += [n for n in entry.split(",") if n.startswith("-")]
    return names


def setUpModule():
    tmp = tempfile.mkdtemp(prefix="wattcut-deb-")
    PACKAGE["tmp"] = tmp
    out_dir = os.path.join(tmp, "out")
    packed = run([ARGS.cpack, "-G", "DEB", "-B", out_dir, "--config", os.path.join(ARGS.build_dir, "CPackConfig.cmake")],
                 cwd=ARGS.build_dir)
    if packed.returncode != 0:
        raise AssertionError(f"cpack exited {packed.returncode}:\n{packed.stdout}\n{packed.stderr}")
    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    deb = os.path.join(out_dir, f"wattcut_{ARGS.version}_{arch}.deb")
    if not os.path.isfile(deb):
        raise AssertionError(f"cpack made no {os.path.basename(deb)} in {out_dir}: {os.listdir(out_dir)}\n{packed.stdout}")
    PACKAGE["deb"] = deb
    listing = run(["dpkg-deb", "-c", deb])
    assert listing.returncode == 0, listing.stderr
    PACKAGE["listing"] = {}
    for line in listing.stdout.splitlines():
        # drwxr-xr-x root/root         0 2026-12-01 19:43 ./etc/
        fields = line.split(None, 5)
        path = fields[5].split(" -> ")[0].rstrip("/").removeprefix(".") or "/"
        PACKAGE["listing"][path] = (fields[0], fields[1])
    root = os.path.join(tmp, "root")
    extracted = run(["dpkg-deb", "-x", deb, root])
    assert extracted.returncode == 0, extracted.stderr
    PACKAGE["root"] = root
    control = os.path.join(tmp, "control")
    got = run(["dpkg-deb", "-e", deb, control])
    assert got.returncode == 0, got.stderr
    PACKAGE["control"] = control
    fields = run(["dpkg-deb", "-f", deb])
    assert fields.returncode == 0, fields.stderr
    PACKAGE["fields"] = {}
    key = None
    for line in fields.stdout.splitlines():
        if line.startswith(" ") and key:
            PACKAGE["fields"][key] += "\n" + line
        else:
            key, _, value = line.partition(":")
            PACKAGE["fields"][key] = value.strip()


def tearDownModule():
    if "tmp" in PACKAGE:
        shutil.rmtree(PACKAGE["tmp"], ignore_errors=True)


PYTHONDIR = "/usr/lib/python3/dist-packages/wattcut"


class Contents(unittest.TestCase):
    def test_every_expected_path_is_there(self):
        expected = [
            "/usr/bin/wattcut",
            PYTHONDIR + "/wattcut-freq-setter",
            "/lib/systemd/system/wattcut-server.service",
            "/lib/systemd/system/wattcut-agent.service",
            "/etc/wattcut/server.conf",
            "/etc/wattcut/agent.conf",
            "/usr/share/man/man1/wattcut.1.gz",
            "/usr/share/bash-completion/completions/wattcut",
            "/usr/share/doc/wattcut/copyright",
            "/usr/share/doc/wattcut/changelog.gz",
            "/usr/lib/wattcut/wattcut_spank.so",  # the Slurm SPANK plugin (docs/slurm.md)
        ]
        # Every file of the Python package's source, and the compiled module for this interpreter.
        source = os.path.join(ARGS.source, "python", "wattcut")
        expected += [PYTHONDIR + "/" + name for name in os.listdir(source)
                     if name.endswith((".py", ".pyi")) or name == "py.typed"]
        expected.append(PYTHONDIR + "/_version.py")  # generated by python/CMakeLists.txt
        # One manual page per subcommand of the CLI.
        expected += [f"/usr/share/man/man1/wattcut-{sub}.1.gz" for sub in subcommands()]
        listing = PACKAGE["listing"]
        missing = [path for path in expected if path not in listing]
        self.assertEqual(missing, [], "paths missing from the package")
        self.assertTrue(any(re.fullmatch(re.escape(PYTHONDIR) + r"/_wattcut\.cpython-\d+-[\w-]+\.so", p) for p in listing),
                        "no compiled module _wattcut")
        for path in ("/usr/bin/wattcut", PYTHONDIR + "/wattcut-freq-setter"):
            self.assertEqual(listing[path], ("-rwxr-xr-x", "root/root"), path)

    def test_nothing_from_test_runs_or_the_build_tree(self):
        for path, (mode, owner) in PACKAGE["listing"].items():
            self.assertNotIn("__pycache__", path)
            self.assertFalse(path.endswith((".pyc", ".a", ".o")), path)
            self.assertEqual(owner, "root/root", path)
            self.assertFalse(path.startswith("/usr/local"), path)

    def test_binaries_are_stripped(self):
        root = PACKAGE["root"]
        binaries = [p for p in PACKAGE["listing"] if p.endswith(".so") or p in ("/usr/bin/wattcut", PYTHONDIR + "/wattcut-freq-setter")]
        self.assertEqual(len(binaries), 4, binaries)  # the CLI, the helper, the module, the SPANK plugin
        for path in binaries:
            sections = run(["readelf", "-S", "-W", root + path]).stdout
            self.assertNotIn(".symtab", sections, f"{path} is not stripped")
            self.assertNotIn(".debug_info", sections, f"{path} has debug info")

    def test_control_fields(self):
        fields = PACKAGE["fields"]
        self.assertEqual(fields["Package"], "wattcut")
        self.assertEqual(fields["Version"], ARGS.version)
        for key in ("Maintainer", "Section", "Description", "Architecture"):
            self.assertTrue(fields.get(key), f"no {key}")
        depends = [d.strip() for d in fields["Depends"].split(",")]
        names = {re.split(r"[ (]", d, 1)[0] for d in depends}
        # From dpkg-shlibdeps: the libraries the binaries link (SQLite, cpp-httplib, libcurl, libc,
        # libstdc++); python3 for the module; adduser for postinst.
        for name in ("libc6", "libstdc++6", "libsqlite3-0", "libcurl4", "python3", "adduser"):
            self.assertIn(name, names, f"Depends: {fields['Depends']}")
        self.assertTrue(any(n.startswith("libcpp-httplib") for n in names), f"Depends: {fields['Depends']}")
        # The module is built for one Python ABI: the package must say which.
        self.assertIn("python3 (<< 3.12)", depends)

    def test_conffiles_are_every_file_in_etc(self):
        with open(os.path.join(PACKAGE["control"], "conffiles"), encoding="utf-8") as f:
            conffiles = sorted(line.strip() for line in f if line.strip())
        in_etc = sorted(p for p in PACKAGE["listing"] if p.startswith("/etc/") and PACKAGE["listing"][p][0].startswith("-"))
        self.assertEqual(conffiles, in_etc)
        for script in ("postinst", "prerm", "postrm"):
            path = os.path.join(PACKAGE["control"], script)
            self.assertTrue(os.access(path, os.X_OK), script)
            self.assertEqual(run(["sh", "-n", path]).returncode, 0, f"{script} is not valid sh")

    def test_changelog_is_of_this_version(self):
        with gzip.open(os.path.join(PACKAGE["root"], "usr/share/doc/wattcut/changelog.gz"), "rt", encoding="utf-8") as f:
            first = f.readline()
        self.assertRegex(first, r"^wattcut \(" + re.escape(ARGS.version) + r"\) ",
                         "deploy/debian/changelog's first entry is not the CMake project version")


class Extracted(unittest.TestCase):
    def test_version_is_the_cmake_version(self):
        out = run([os.path.join(PACKAGE["root"], "usr/bin/wattcut"), "--version"], timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.split(), ["wattcut", ARGS.version])

    def test_python_imports_the_packaged_module_from_another_folder(self):
        dist = os.path.join(PACKAGE["root"], "usr/lib/python3/dist-packages")
        code = ("import wattcut, wattcut.pipeline_frequency as p; print(wattcut.__file__); "
                "print(p._packaged_freq_setter()); print(wattcut.__version__)")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        env["PYTHONPATH"] = dist
        out = run(["/usr/bin/python3", "-c", code], cwd=PACKAGE["tmp"], env=env, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        module_file, helper, version = (out.stdout.splitlines() + ["", "", ""])[:3]
        self.assertEqual(os.path.realpath(module_file), os.path.realpath(os.path.join(dist, "wattcut/__init__.py")))
        self.assertEqual(os.path.realpath(helper), os.path.realpath(os.path.join(dist, "wattcut/wattcut-freq-setter")))
        # The package's __version__ (python/CMakeLists.txt writes _version.py) is the CMake one.
        self.assertEqual(version, ARGS.version)


class Completion(unittest.TestCase):
    def complete(self, *words):
        """What the packaged completion offers after `wattcut WORDS...` (the last word is the one
        being completed)."""
        script = os.path.join(PACKAGE["root"], "usr/share/bash-completion/completions/wattcut")
        quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in ("wattcut",) + words)
        code = (f"source '{script}'; COMP_WORDS=({quoted}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); "
                "_wattcut; printf '%s\\n' \"${COMPREPLY[@]}\"")
        out = run(["bash", "--norc", "--noprofile", "-c", code], cwd=PACKAGE["tmp"], timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        return [w for w in out.stdout.splitlines() if w]

    def test_subcommands_are_the_clis(self):
        top = subcommands()
        self.assertIn("serve", top)
        self.assertEqual(self.complete(""), top)
        for sub in top:
            nested = subcommands(sub)
            if nested:
                self.assertEqual(self.complete(sub, ""), nested, f"wattcut {sub}")

    def test_flags_are_the_clis(self):
        for path in (("serve",), ("agent",), ("gpu", "lock")):
            self.assertEqual(sorted(self.complete(*path, "-")), sorted(flags(*path)), " ".join(path))

    def test_a_flags_choices_and_a_value_is_skipped(self):
        self.assertEqual(self.complete("serve", "--sync", ""), ["full", "normal"])
        # --agent takes a value, so `lock` after it is still a subcommand of gpu.
        self.assertIn("--sm", self.complete("gpu", "--agent", "/run/wattcut/agent.sock", "lock", "--s"))


class ManualPages(unittest.TestCase):
    def page(self, name):
        with gzip.open(os.path.join(PACKAGE["root"], "usr/share/man/man1", name + ".1.gz"), "rt", encoding="utf-8") as f:
            return f.read()

    def test_every_flag_of_a_subcommand_is_on_its_page(self):
        for sub in subcommands():
            text = self.page("wattcut-" + sub)
            self.assertRegex(text, r"(?m)^\.SH NAME\nwattcut\\-" + re.escape(sub) + r" \\- \S")
            for path in [(sub,)] + [(sub, nested) for nested in subcommands(sub)]:
                for flag in flags(*path):
                    self.assertIn("\\fB" + flag.replace("-", "\\-") + "\\fR", text, f"{' '.join(path)} {flag}")

    def test_pages_render_without_warnings(self):
        if not shutil.which("man"):
            self.skipTest("man is not installed")
        directory = os.path.join(PACKAGE["root"], "usr/share/man/man1")
        env = dict(os.environ, LC_ALL="C.UTF-8", MANWIDTH="80")
        for name in sorted(os.listdir(directory)):
            out = run(["man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", os.path.join(directory, name)],
                      env=env, timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertEqual(out.stderr, "", name)


class Units(unittest.TestCase):
    @unittest.skipUnless(shutil.which("systemd-analyze"), "systemd-analyze is not installed")
    def test_systemd_reads_both_units(self):
        # verify checks that ExecStart's program exists: the copies run the extracted binary.
        wattcut = os.path.join(PACKAGE["root"], "usr/bin/wattcut")
        directory = os.path.join(PACKAGE["tmp"], "units")
        os.makedirs(directory, exist_ok=True)
        copies = []
        for unit in ("wattcut-server.service", "wattcut-agent.service"):
            with open(os.path.join(PACKAGE["root"], "lib/systemd/system", unit), encoding="utf-8") as f:
                text = f.read()
            self.assertIn("ExecStart=/usr/bin/wattcut ", text)
            copies.append(os.path.join(directory, unit))
            with open(copies[-1], "w", encoding="utf-8") as f:
                f.write(text.replace("ExecStart=/usr/bin/wattcut ", "ExecStart=" + wattcut + " "))
        # Documentation='s man: pages are looked up in the package's own man folder.
        env = dict(os.environ, MANPATH=os.path.join(PACKAGE["root"], "usr/share/man"))
        out = run(["systemd-analyze", "verify", *copies], env=env, timeout=120)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertEqual(out.stdout + out.stderr, "", "systemd-analyze verify complained")


class MaintainerScripts(unittest.TestCase):
    """The package's postinst and postrm run with every command they call replaced by a stub that
    logs its arguments (rm and rmdir too: nothing of this machine is touched)."""

    STUBS = ("getent", "addgroup", "adduser", "deb-systemd-helper", "deb-systemd-invoke", "systemctl", "rm", "rmdir")

    def run_script(self, script, args, existing=(), installed=False, enabled=False):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "log")
            for name in self.STUBS:
                if name == "getent":  # getent group|passwd NAME: found when "group"/"passwd" is in existing
                    body = 'case " $EXISTING " in *" $1 "*) exit 0 ;; esac; exit 2'
                elif name == "deb-systemd-helper":
                    body = ('[ "$1" = --quiet ] && shift; case "$1" in debian-installed) [ -n "$INSTALLED" ]; exit ;; '
                            'was-enabled) [ -n "$ENABLED" ]; exit ;; esac; exit 0')
                else:
                    body = "exit 0"
                with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                    f.write(f'#!/bin/sh\necho "{name} $*" >> "$STUB_LOG"\n{body}\n')
                os.chmod(os.path.join(tmp, name), 0o755)
            env = {"PATH": tmp + ":/usr/bin:/bin", "STUB_LOG": log, "EXISTING": " ".join(existing),
                   "INSTALLED": "1" if installed else "", "ENABLED": "1" if enabled else ""}
            out = run(["/bin/sh", os.path.join(PACKAGE["control"], script), *args], env=env, timeout=60)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            if not os.path.exists(log):  # no command called
                return []
            with open(log, encoding="utf-8") as f:
                return [line.split() for line in f]

    def test_first_install_makes_the_group_and_the_user_and_enables_nothing(self):
        calls = self.run_script("postinst", ["configure"])
        self.assertIn(["addgroup", "--system", "--quiet", "wattcut"], calls)
        adduser = [c for c in calls if c[0] == "adduser"]
        self.assertEqual(len(adduser), 1, calls)
        for expected in ("--system", "--ingroup", "--no-create-home", "/usr/sbin/nologin"):
            self.assertIn(expected, adduser[0])
        self.assertEqual(adduser[0][-1], "wattcut")
        self.assertFalse([c for c in calls if c[:2] == ["deb-systemd-helper", "enable"]], calls)
        for unit in ("wattcut-server.service", "wattcut-agent.service"):
            self.assertIn(["deb-systemd-helper", "update-state", unit], calls)

    def test_an_existing_group_and_user_are_kept(self):
        calls = self.run_script("postinst", ["configure"], existing=("group",))
        self.assertFalse([c for c in calls if c[0] == "addgroup"], calls)
        self.assertEqual(len([c for c in calls if c[0] == "adduser"]), 1, calls)
        calls = self.run_script("postinst", ["configure", "0.0.9"], existing=("group", "passwd"))
        self.assertFalse([c for c in calls if c[0] in ("addgroup", "adduser")], calls)

    def test_an_upgrade_keeps_an_enabled_unit_enabled(self):
        calls = self.run_script("postinst", ["configure", "0.0.9"], existing=("group", "passwd"), installed=True,
                                enabled=True)
        for unit in ("wattcut-server.service", "wattcut-agent.service"):
            self.assertIn(["deb-systemd-helper", "enable", unit], calls)

    def test_purge_removes_the_state_and_remove_does_not(self):
        calls = self.run_script("postrm", ["purge"])
        self.assertIn(["rm", "-rf", "/var/lib/wattcut-server", "/var/lib/wattcut-agent"], calls)
        for unit in ("wattcut-server.service", "wattcut-agent.service"):
            self.assertIn(["deb-systemd-helper", "purge", unit], calls)
        self.assertFalse([c for c in calls if c[0] in ("adduser", "deluser")], "the user stays")
        calls = self.run_script("postrm", ["remove"])
        self.assertFalse([c for c in calls if c[0] in ("rm", "rmdir")], calls)


class Lintian(unittest.TestCase):
    def test_no_errors_and_every_warning_documented(self):
        if not shutil.which("lintian"):
            self.fail("lintian is not installed (scripts/install-deps.sh installs it)")
        out = run(["lintian", "--no-cfg", "--display-level", ">=warning", "--fail-on", "error", PACKAGE["deb"]],
                  timeout=900)
        tags = re.findall(r"^([EW]): wattcut[^:]*: (\S+)", out.stdout, re.M)
        errors = sorted({tag for kind, tag in tags if kind == "E"})
        self.assertEqual(errors, [], out.stdout)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        with open(os.path.join(ARGS.source, "docs", "install.md"), encoding="utf-8") as f:
            docs = f.read()
        undocumented = sorted({tag for kind, tag in tags if kind == "W" and f"`{tag}`" not in docs})
        self.assertEqual(undocumented, [], "lintian warnings docs/install.md does not list:\n" + out.stdout)


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--wattcut", required=True)
    parser.add_argument("--cpack", default="cpack")
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
