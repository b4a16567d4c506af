#!/usr/bin/env python3
"""Checks deploy/: the systemd units of the node agent and the planning server and the Kubernetes
DaemonSet parse, run `wattcut agent` / `wattcut serve` with flags their --help lists, and hold what
each needs (the socket's directory, the state directory, hostPID, a token file only its owner can
read, the server's user and no capabilities); the configs in deploy/etc/wattcut set only the
variable their unit expands and name only real flags; the token file example is one the agent
accepts (`wattcut agent --check-config`).

Usage: deploy_files_test.py --wattcut BIN --deploy DIR. Exits 0 when every check holds; prints
each failure otherwise."""

import argparse
import os
import posixpath
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

import yaml

ARGS = None

# Every directive the unit may use: a misspelt one is ignored by systemd with a log line only,
# so a typo would silently drop a hardening setting.
KNOWN_DIRECTIVES = {
    "Unit": {"Description", "Documentation", "After", "Wants", "Requires", "Before"},
    "Service": {
        "Type", "ExecStart", "EnvironmentFile", "User", "Group", "LimitNOFILE", "ProtectProc",
        "MemoryDenyWriteExecute", "Restart", "RestartSec", "TimeoutStopSec", "KillSignal",
        "RuntimeDirectory", "RuntimeDirectoryMode", "RuntimeDirectoryPreserve",
        "StateDirectory", "StateDirectoryMode", "UMask",
        "CapabilityBoundingSet", "AmbientCapabilities", "NoNewPrivileges",
        "DevicePolicy", "DeviceAllow", "PrivateDevices",
        "ProtectSystem", "ProtectHome", "PrivateTmp", "ProtectKernelTunables", "ProtectKernelModules",
        "ProtectKernelLogs", "ProtectControlGroups", "ProtectClock", "ProtectHostname",
        "RestrictNamespaces", "RestrictRealtime", "RestrictSUIDSGID", "LockPersonality", "RemoveIPC",
        "KeyringMode", "RestrictAddressFamilies", "SystemCallArchitectures", "SystemCallFilter",
        "SystemCallErrorNumber",
    },
    "Install": {"WantedBy"},
}
# Directives that may appear more than once (systemd adds them up).
REPEATABLE = {"After", "Wants", "DeviceAllow", "SystemCallFilter", "ExecStart"}
# The variable of each unit's config (deploy/etc/wattcut/NAME.conf, an EnvironmentFile) that ends
# its ExecStart line.
CONFIG_VARIABLE = {"agent": "WATTCUT_AGENT_ARGS", "server": "WATTCUT_SERVE_ARGS"}
# What NVML's setters and the socket's group need; anything more is a privilege the agent does not use.
ALLOWED_CAPABILITIES = {"CAP_SYS_ADMIN", "CAP_CHOWN"}


def parse_unit(path):
    """A systemd unit file as {section: [(key, value), ...]}, failing on text outside the format."""
    sections = {}
    current = None
    pending = ""
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if pending:
                line = pending + line.lstrip()
                pending = ""
            if line.endswith("\\"):
                pending = line[:-1] + " "
                continue
            stripped = line.strip()
            if not stripped or stripped[0] in "#;":
                continue
            if stripped.startswith("["):
                if not stripped.endswith("]"):
                    raise ValueError(f"{path}:{number}: a section header without ']'")
                current = stripped[1:-1]
                if current in sections:
                    raise ValueError(f"{path}:{number}: section [{current}] twice")
                sections[current] = []
                continue
            if current is None:
                raise ValueError(f"{path}:{number}: a setting before any section")
            if "=" not in stripped:
                raise ValueError(f"{path}:{number}: expected KEY=VALUE, got {stripped!r}")
            key, value = stripped.split("=", 1)
            sections[current].append((key.strip(), value.strip()))
    if pending:
        raise ValueError(f"{path}: the last line ends with a backslash")
    return sections


def help_flags(subcommand, expected):
    out = subprocess.run([ARGS.wattcut, subcommand, "--help"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise AssertionError(f"wattcut {subcommand} --help exited {out.returncode}: {out.stderr}")
    flags = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", out.stdout))
    if expected not in flags:
        raise AssertionError(f"wattcut {subcommand} --help lists no {expected}: " + out.stdout[:500])
    return flags


def agent_help_flags():
    return help_flags("agent", "--socket")


def exec_start_flags(exec_start, subcommand, variable):
    """The flags of a unit's `ExecStart=/usr/bin/wattcut SUBCOMMAND ... $VARIABLE` line."""
    argv = shlex.split(exec_start)
    if argv[:2] != ["/usr/bin/wattcut", subcommand]:
        raise AssertionError(f"ExecStart= runs {argv[:2]}, not /usr/bin/wattcut {subcommand}")
    if argv[-1] != "$" + variable:
        raise AssertionError(f"ExecStart= does not end with ${variable} (the config's flags): {exec_start}")
    return flag_values(argv[2:-1])


def flag_values(argv):
    """{--flag: value or None} of an argument list after `wattcut agent`, in --flag VALUE or
    --flag=VALUE form."""
    values = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("--"):
            raise AssertionError(f"expected a --flag, got {arg!r} in {argv}")
        if "=" in arg:
            name, value = arg.split("=", 1)
        elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            name, value = arg, argv[i + 1]
            i += 1
        else:
            name, value = arg, None
        if name in values:
            raise AssertionError(f"{name} given twice in {argv}")
        values[name] = value
        i += 1
    return values


class SystemdUnit(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.path = os.path.join(ARGS.deploy, "systemd", "wattcut-agent.service")
        cls.unit = parse_unit(cls.path)
        cls.service = {}
        for key, value in cls.unit["Service"]:
            cls.service.setdefault(key, []).append(value)

    def one(self, key):
        values = self.service.get(key, [])
        self.assertEqual(len(values), 1, f"{key}= should appear once, got {values}")
        return values[0]

    def test_sections_and_directives_are_known(self):
        self.assertEqual(set(self.unit), {"Unit", "Service", "Install"})
        for section, settings in self.unit.items():
            seen = set()
            for key, _ in settings:
                self.assertIn(key, KNOWN_DIRECTIVES[section], f"[{section}] {key}= is not a directive this unit uses")
                if key not in REPEATABLE:
                    self.assertNotIn(key, seen, f"[{section}] {key}= twice")
                seen.add(key)
        self.assertEqual(dict(self.unit["Install"]).get("WantedBy"), "multi-user.target")

    def test_exec_start_runs_the_agent_with_listed_flags(self):
        values = exec_start_flags(self.one("ExecStart"), "agent", CONFIG_VARIABLE["agent"])
        help_flags = agent_help_flags()
        for flag in values:
            self.assertIn(flag, help_flags, f"{flag} is not a flag of `wattcut agent --help`")
        self.assertEqual(values.get("--socket"), "/run/wattcut/agent.sock")
        self.assertEqual(values.get("--socket-group"), "wattcut")
        self.assertEqual(values.get("--state-dir"), "/var/lib/wattcut-agent")

    def test_the_socket_and_state_directories_are_the_units(self):
        values = exec_start_flags(self.one("ExecStart"), "agent", CONFIG_VARIABLE["agent"])
        # RuntimeDirectory=NAME is /run/NAME; StateDirectory=NAME is /var/lib/NAME.
        self.assertEqual(posixpath.dirname(values["--socket"]), "/run/" + self.one("RuntimeDirectory"))
        self.assertEqual(values["--state-dir"], "/var/lib/" + self.one("StateDirectory"))
        self.assertEqual(self.one("StateDirectoryMode"), "0700")

    def test_restarts_on_failure(self):
        self.assertEqual(self.one("Restart"), "on-failure")
        self.assertEqual(self.one("Type"), "simple")

    def test_descriptors_are_not_the_default_1024(self):
        # A connection and a watched lease holder each hold one: the default soft limit is within
        # one local user's reach.
        self.assertGreaterEqual(int(self.one("LimitNOFILE")), 65536)

    def test_only_the_capabilities_nvml_needs(self):
        capabilities = set(self.one("CapabilityBoundingSet").split())
        self.assertIn("CAP_SYS_ADMIN", capabilities)
        self.assertLessEqual(capabilities, ALLOWED_CAPABILITIES)
        self.assertNotIn("AmbientCapabilities", self.service)
        self.assertEqual(self.one("NoNewPrivileges"), "yes")

    def test_devices_are_the_nvidia_nodes_only(self):
        self.assertEqual(self.one("DevicePolicy"), "closed")
        allowed = {value.split()[0] for value in self.service.get("DeviceAllow", [])}
        self.assertIn("/dev/nvidiactl", allowed)
        self.assertIn("char-nvidia-frontend", allowed)
        for value in self.service.get("DeviceAllow", []):
            self.assertRegex(value, r"^(/dev/nvidia\S*|char-nvidia\S*) rw?$")
        # PrivateDevices=yes would hide /dev/nvidia*, and NVML with them.
        self.assertNotIn(self.service.get("PrivateDevices", ["no"])[0], ("yes", "true", "1"))

    @unittest.skipUnless(shutil.which("systemd-analyze"), "systemd-analyze is not installed")
    def test_systemd_reads_every_directive(self):
        # systemd-analyze verify names unknown keys and bad values (on stderr, exit 0): none allowed.
        # It also checks that ExecStart's program exists, so the copy runs the built binary.
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "wattcut-agent.service")
            with open(self.path, encoding="utf-8") as f:
                text = f.read()
            with open(copy, "w", encoding="utf-8") as f:
                f.write(text.replace("ExecStart=/usr/bin/wattcut ", "ExecStart=" + os.path.abspath(ARGS.wattcut) + " "))
            # --man=no: Documentation= names the package's man pages, which this machine may lack
            # (deb_package_test checks them from the package).
            out = subprocess.run(["systemd-analyze", "verify", "--man=no", copy], capture_output=True, text=True,
                                 timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertEqual(out.stdout + out.stderr, "", "systemd-analyze verify complained")

    def test_hardening(self):
        expected = {
            "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
            "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes", "ProtectControlGroups": "yes",
            "RestrictSUIDSGID": "yes", "LockPersonality": "yes", "SystemCallArchitectures": "native",
            "UMask": "0077",
        }
        for key, value in expected.items():
            self.assertEqual(self.one(key), value, key)
        # The agent serves a Unix socket and TCP; nothing else.
        self.assertEqual(set(self.one("RestrictAddressFamilies").split()), {"AF_UNIX", "AF_INET", "AF_INET6"})


class AgentAmdDropIn(unittest.TestCase):
    """deploy/systemd/wattcut-agent-amd.conf: what an AMD node changes in the agent's unit, and only that."""

    @classmethod
    def setUpClass(cls):
        cls.path = os.path.join(ARGS.deploy, "systemd", "wattcut-agent-amd.conf")
        cls.unit = parse_unit(cls.path)

    def test_it_opens_sys_and_the_amdgpu_nodes_and_nothing_else(self):
        self.assertEqual(set(self.unit), {"Service"})
        settings = self.unit["Service"]
        self.assertEqual([k for k, _ in settings], ["ProtectKernelTunables", "DeviceAllow", "DeviceAllow"])
        self.assertEqual(dict(settings)["ProtectKernelTunables"], "no")
        self.assertEqual({v for k, v in settings if k == "DeviceAllow"}, {"/dev/kfd rw", "char-drm rw"})

    @unittest.skipUnless(shutil.which("systemd-analyze"), "systemd-analyze is not installed")
    def test_systemd_reads_the_unit_with_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "wattcut-agent.service")
            with open(os.path.join(ARGS.deploy, "systemd", "wattcut-agent.service"), encoding="utf-8") as f:
                text = f.read()
            with open(copy, "w", encoding="utf-8") as f:
                f.write(text.replace("ExecStart=/usr/bin/wattcut ", "ExecStart=" + os.path.abspath(ARGS.wattcut) + " "))
            os.makedirs(copy + ".d")
            shutil.copy(self.path, os.path.join(copy + ".d", "amd.conf"))
            out = subprocess.run(["systemd-analyze", "verify", "--man=no", copy], capture_output=True, text=True,
                                 timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertEqual(out.stdout + out.stderr, "", "systemd-analyze verify complained")


class ServerUnit(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.path = os.path.join(ARGS.deploy, "systemd", "wattcut-server.service")
        cls.unit = parse_unit(cls.path)
        cls.service = {}
        for key, value in cls.unit["Service"]:
            cls.service.setdefault(key, []).append(value)

    def one(self, key):
        values = self.service.get(key, [])
        self.assertEqual(len(values), 1, f"{key}= should appear once, got {values}")
        return values[0]

    def test_sections_and_directives_are_known(self):
        self.assertEqual(set(self.unit), {"Unit", "Service", "Install"})
        for section, settings in self.unit.items():
            seen = set()
            for key, _ in settings:
                self.assertIn(key, KNOWN_DIRECTIVES[section], f"[{section}] {key}= is not a directive this unit uses")
                if key not in REPEATABLE:
                    self.assertNotIn(key, seen, f"[{section}] {key}= twice")
                seen.add(key)
        self.assertEqual(dict(self.unit["Install"]).get("WantedBy"), "multi-user.target")

    def test_exec_start_serves_from_the_state_directory(self):
        values = exec_start_flags(self.one("ExecStart"), "serve", CONFIG_VARIABLE["server"])
        help_flags_ = help_flags("serve", "--data-dir")
        for flag in values:
            self.assertIn(flag, help_flags_, f"{flag} is not a flag of `wattcut serve --help`")
        # StateDirectory=NAME is /var/lib/NAME, created by systemd and owned by User=.
        self.assertEqual(values.get("--data-dir"), "/var/lib/" + self.one("StateDirectory"))
        self.assertEqual(self.one("StateDirectoryMode"), "0700")
        self.assertEqual(self.one("EnvironmentFile"), "-/etc/wattcut/server.conf")

    def test_runs_as_wattcut_without_capabilities(self):
        self.assertEqual(self.one("User"), "wattcut")
        self.assertEqual(self.one("Group"), "wattcut")
        self.assertEqual(self.one("CapabilityBoundingSet"), "")
        self.assertNotIn("AmbientCapabilities", self.service)
        self.assertEqual(self.one("NoNewPrivileges"), "yes")
        self.assertEqual(self.one("Restart"), "on-failure")

    def test_hardening_without_devices(self):
        expected = {
            "PrivateDevices": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
            "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes", "ProtectControlGroups": "yes",
            "RestrictSUIDSGID": "yes", "LockPersonality": "yes", "SystemCallArchitectures": "native",
            "MemoryDenyWriteExecute": "yes", "UMask": "0077",
        }
        for key, value in expected.items():
            self.assertEqual(self.one(key), value, key)
        self.assertNotIn("DeviceAllow", self.service)
        self.assertEqual(set(self.one("RestrictAddressFamilies").split()), {"AF_UNIX", "AF_INET", "AF_INET6"})

    @unittest.skipUnless(shutil.which("systemd-analyze"), "systemd-analyze is not installed")
    def test_systemd_reads_every_directive(self):
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "wattcut-server.service")
            with open(self.path, encoding="utf-8") as f:
                text = f.read()
            with open(copy, "w", encoding="utf-8") as f:
                f.write(text.replace("ExecStart=/usr/bin/wattcut ", "ExecStart=" + os.path.abspath(ARGS.wattcut) + " "))
            # --man=no: Documentation= names the package's man pages, which this machine may lack
            # (deb_package_test checks them from the package).
            out = subprocess.run(["systemd-analyze", "verify", "--man=no", copy], capture_output=True, text=True,
                                 timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertEqual(out.stdout + out.stderr, "", "systemd-analyze verify complained")


def help_defaults(subcommand):
    """{--flag: default} of the flags whose help shows one (`--listen TEXT=127.0.0.1:7787`)."""
    out = subprocess.run([ARGS.wattcut, subcommand, "--help"], capture_output=True, text=True, timeout=60)
    defaults = {}
    for line in out.stdout.splitlines():
        match = re.match(r"^  (--[a-z0-9-]+) (\S+(?: \S+)*)", line)
        if match and "=" in match.group(2):
            defaults[match.group(1)] = match.group(2).removesuffix(" REQUIRED").rsplit("=", 1)[1]
    return defaults


class UnitConfigs(unittest.TestCase):
    """deploy/etc/wattcut/{agent,server}.conf: installed as /etc/wattcut/NAME.conf, each unit's
    EnvironmentFile."""

    CONFIGS = {"agent": ("agent", "wattcut-agent.service"), "server": ("serve", "wattcut-server.service")}

    def read(self, name):
        with open(os.path.join(ARGS.deploy, "etc", "wattcut", name + ".conf"), encoding="utf-8") as f:
            return f.read().splitlines()

    def test_one_assignment_of_the_units_variable_with_real_flags(self):
        for name, (subcommand, unit) in self.CONFIGS.items():
            settings = [line for line in self.read(name) if line.strip() and not line.lstrip().startswith("#")]
            self.assertEqual(len(settings), 1, f"{name}.conf: expected one assignment, got {settings}")
            variable, _, value = settings[0].partition("=")
            self.assertEqual(variable, CONFIG_VARIABLE[name], f"{name}.conf")
            self.assertRegex(value, r'^"[^"$`\\]*"$', f"{name}.conf: the value is one double-quoted string")
            listed = help_flags(subcommand, "--help")
            for flag in flag_values(shlex.split(value.strip('"'))):
                self.assertIn(flag, listed, f"{name}.conf sets {flag}, which `wattcut {subcommand}` lacks")
            environment = dict(parse_unit(os.path.join(ARGS.deploy, "systemd", unit))["Service"])["EnvironmentFile"]
            self.assertEqual(environment, f"-/etc/wattcut/{name}.conf", unit)

    def test_the_documented_flags_and_defaults_are_the_clis(self):
        for name, (subcommand, _) in self.CONFIGS.items():
            listed = help_flags(subcommand, "--help")
            defaults = help_defaults(subcommand)
            for number, line in enumerate(self.read(name), 1):
                if not line.startswith("#"):
                    continue
                for flag in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", line):
                    self.assertIn(flag, listed, f"{name}.conf:{number} names {flag}, which `wattcut {subcommand}` lacks")
                # The defaults' table: "#   --flag VALUE    what it does".
                match = re.match(r"^#\s+(--[a-z0-9-]+) (\S+)(\s{2,}|$)", line)
                if match and match.group(1) in defaults and not re.search(r"[A-Z]", match.group(2)):
                    self.assertEqual(match.group(2), defaults[match.group(1)],
                                     f"{name}.conf:{number}: the default of {match.group(1)}")


class KubernetesDaemonSet(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        path = os.path.join(ARGS.deploy, "kubernetes", "wattcut-agent-daemonset.yaml")
        with open(path, encoding="utf-8") as f:
            cls.documents = [d for d in yaml.safe_load_all(f) if d is not None]
        daemonsets = [d for d in cls.documents if d.get("kind") == "DaemonSet"]
        assert len(daemonsets) == 1, f"expected one DaemonSet, got {len(daemonsets)}"
        cls.daemonset = daemonsets[0]
        cls.pod = cls.daemonset["spec"]["template"]["spec"]
        agents = [c for c in cls.pod["containers"] if (c.get("command") or [])[:2] == ["/usr/bin/wattcut", "agent"]]
        assert len(agents) == 1, "expected one container running `/usr/bin/wattcut agent`"
        cls.container = agents[0]
        cls.flags = flag_values([str(a) for a in cls.container.get("args", [])])

    def mount_of(self, path):
        """The volume mounted at the directory holding `path`, as (mount, volume)."""
        directory = posixpath.dirname(path)
        for mount in self.container.get("volumeMounts", []):
            if mount["mountPath"].rstrip("/") == directory:
                volumes = [v for v in self.pod.get("volumes", []) if v["name"] == mount["name"]]
                self.assertEqual(len(volumes), 1, f"volume {mount['name']} defined {len(volumes)} times")
                return mount, volumes[0]
        self.fail(f"no volume is mounted at {directory} (for {path})")

    def test_every_document_is_a_kubernetes_object(self):
        for document in self.documents:
            for key in ("apiVersion", "kind", "metadata"):
                self.assertIn(key, document)
        self.assertEqual(self.daemonset["apiVersion"], "apps/v1")
        selector = self.daemonset["spec"]["selector"]["matchLabels"]
        labels = self.daemonset["spec"]["template"]["metadata"]["labels"]
        for key, value in selector.items():
            self.assertEqual(labels.get(key), value, "the selector must match the pod template's labels")

    def test_args_are_flags_the_agent_lists(self):
        help_flags = agent_help_flags()
        for flag in self.flags:
            self.assertIn(flag, help_flags, f"{flag} is not a flag of `wattcut agent --help`")

    def test_host_pid_and_privileged(self):
        # Leases are tied to the peer's pid, which the kernel gives in the agent's pid namespace.
        self.assertIs(self.pod.get("hostPID"), True)
        self.assertIs(self.container["securityContext"].get("privileged"), True)

    def test_the_socket_is_on_the_host(self):
        socket = self.flags["--socket"]
        _, volume = self.mount_of(socket)
        self.assertIn("hostPath", volume)
        self.assertEqual(volume["hostPath"]["path"], posixpath.dirname(socket))
        self.assertEqual(socket, "/run/wattcut/agent.sock")

    def test_the_state_dir_is_on_the_host(self):
        mount, volume = self.mount_of(self.flags["--state-dir"] + "/x")
        self.assertIn("hostPath", volume)
        self.assertFalse(mount.get("readOnly", False))

    def test_the_token_file_is_a_secret_only_its_owner_can_read(self):
        token_file = self.flags["--token-file"]
        mount, volume = self.mount_of(token_file)
        self.assertIn("secret", volume)
        self.assertTrue(mount.get("readOnly", False))
        # Secret files are 0644 by default; the agent refuses a token file that group or others can read.
        mode = volume["secret"].get("defaultMode", 0o644)
        for item in volume["secret"].get("items", []):
            if item["path"] == posixpath.basename(token_file):
                mode = item.get("mode", mode)
        self.assertEqual(mode & 0o077, 0, f"the token file's mode {mode:o} lets group or others read it")

    def test_the_agent_takes_no_gpu_of_the_node(self):
        resources = self.container.get("resources", {})
        for kind in ("requests", "limits"):
            self.assertNotIn("nvidia.com/gpu", resources.get(kind, {}))

    def test_the_listen_port_is_exposed(self):
        listen = self.flags.get("--listen")
        self.assertIsNotNone(listen)
        port = int(listen.rsplit(":", 1)[1])
        self.assertIn(port, [p.get("containerPort") for p in self.container.get("ports", [])])


class TokenFileExample(unittest.TestCase):
    def test_the_agent_accepts_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "agent.tokens")
            shutil.copyfile(os.path.join(ARGS.deploy, "agent.tokens.example"), copy)
            os.chmod(copy, stat.S_IRUSR | stat.S_IWUSR)
            out = subprocess.run(
                [ARGS.wattcut, "agent", "--check-config", "--backend", "simulated", "--socket",
                 os.path.join(tmp, "agent.sock"), "--listen", "127.0.0.1:0", "--token-file", copy],
                capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    def test_every_scope_has_an_example(self):
        scopes = []
        with open(os.path.join(ARGS.deploy, "agent.tokens.example"), encoding="utf-8") as f:
            for line in f:
                fields = line.split()
                if fields and not fields[0].startswith("#"):
                    scopes.append(fields[0])
        self.assertEqual(sorted(scopes), ["read", "row", "train"])


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--wattcut", required=True)
    parser.add_argument("--deploy", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
