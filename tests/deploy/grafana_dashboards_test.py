#!/usr/bin/env python3
"""Checks deploy/grafana/ and deploy/prometheus/: the dashboards are valid Grafana dashboards
(JSON, every panel on the ${DS_PROMETHEUS} datasource, unique ids, no overlapping panels, units
set, every templated variable defined and used) and every metric a panel or a variable queries is
one the code exports: the test starts the real binaries of the build (`wattcut serve`, `wattcut
agent` on the fake NVML with a fake Redfish BMC, `wattcut polca control` over that agent), scrapes
their GET /metrics and compares each PromQL expression's metric names, and the label names its
matchers and groupings use, with what they really answer. The scrape config parses, names the
three jobs on their default ports, and passes `promtool check config` when promtool is there.

Usage: grafana_dashboards_test.py --wattcut BIN --fake-nvml-dir DIR --source DIR [--promtool BIN]"""

import argparse
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests"))

from fixtures import Service  # noqa: E402

ARGS = None

# Series Prometheus writes itself for every target it scrapes (no exporter exports them).
PROMETHEUS_SERIES = {"up", "scrape_duration_seconds", "scrape_samples_scraped"}
# Labels Prometheus adds to every series of a target (deploy/prometheus/prometheus.yml relabels
# nothing else).
TARGET_LABELS = {"job", "instance"}
# Grafana's own variables.
GRAFANA_VARIABLES = {"__rate_interval", "__interval", "__range", "__interval_ms", "__range_s", "__range_ms", "__all"}
# Words of PromQL that are not metric names: operators, aggregations, modifiers, literals.
KEYWORDS = {
    "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool",
    "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk",
    "quantile", "limitk", "limit_ratio", "inf", "nan", "atan2", "start", "end",
}
# Clauses whose parenthesised list is label names.
LABEL_LIST_CLAUSES = {"by", "without", "on", "ignoring", "group_left", "group_right"}


# ---------------------------------------------------------------------------- PromQL
def promql_tokens(expr):
    """PromQL as (kind, text) tokens: ident, string, number, duration (the [...] of a range or
    subquery), matchers (the {...} of a selector, its text), punct. Raises ValueError on text the
    lexer does not know (an unclosed string, brace or bracket)."""
    tokens = []
    i = 0
    n = len(expr)
    while i < n:
        c = expr[i]
        if c.isspace():
            i += 1
        elif c in "\"'`":
            j = i + 1
            while j < n and expr[j] != c:
                j += 2 if expr[j] == "\\" and c != "`" else 1
            if j >= n:
                raise ValueError(f"an unclosed string at {i} in {expr!r}")
            tokens.append(("string", expr[i + 1:j]))
            i = j + 1
        elif c == "{":
            j = i + 1
            quote = None
            while j < n and (quote or expr[j] != "}"):
                if quote:
                    if expr[j] == "\\":
                        j += 1
                    elif expr[j] == quote:
                        quote = None
                elif expr[j] in "\"'`":
                    quote = expr[j]
                j += 1
            if j >= n:
                raise ValueError(f"an unclosed '{{' at {i} in {expr!r}")
            tokens.append(("matchers", expr[i + 1:j]))
            i = j + 1
        elif c == "[":
            j = expr.find("]", i)
            if j < 0:
                raise ValueError(f"an unclosed '[' at {i} in {expr!r}")
            tokens.append(("duration", expr[i + 1:j]))
            i = j + 1
        elif c.isdigit() or (c == "." and i + 1 < n and expr[i + 1].isdigit()):
            m = re.compile(r"0x[0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?[a-zA-Z]*").match(expr, i)
            tokens.append(("number", m.group(0)))
            i = m.end()
        elif c.isalpha() or c in "_:":
            m = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*").match(expr, i)
            tokens.append(("ident", m.group(0)))
            i = m.end()
        elif c == "$":
            # A Grafana variable outside a string (e.g. a threshold): not a metric.
            m = re.compile(r"\$\{?[A-Za-z0-9_]+(?::[a-z]+)?\}?").match(expr, i)
            tokens.append(("variable", m.group(0)))
            i = m.end()
        else:
            tokens.append(("punct", c))
            i += 1
    return tokens


def matcher_labels(text):
    """The label names of a selector's matchers: `a="x", b=~"y"` -> ["a", "b"]."""
    labels = []
    for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')", text):
        labels.append(m.group(1))
    rest = re.sub(r"([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')", "", text)
    if rest.replace(",", "").strip():
        raise ValueError(f"matchers {text!r}: cannot read {rest.strip()!r}")
    return labels


def promql_selectors(expr):
    """What an expression queries: ([(metric, [matcher label names])], [grouping label names]).
    A metric is an identifier that is not a keyword, not a function (followed by '('), and not in
    a by/without/on/ignoring/group_left/group_right list; `{__name__="x"}` counts as metric x."""
    tokens = promql_tokens(expr)
    selectors = []
    grouping = []
    i = 0
    while i < len(tokens):
        kind, text = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else (None, None)
        if kind == "ident" and text in LABEL_LIST_CLAUSES:
            if nxt == ("punct", "("):
                j = i + 2
                while j < len(tokens) and tokens[j] != ("punct", ")"):
                    if tokens[j][0] == "ident":
                        grouping.append(tokens[j][1])
                    elif tokens[j] != ("punct", ","):
                        raise ValueError(f"{expr!r}: {text}(...) holds {tokens[j][1]!r}")
                    j += 1
                i = j + 1
                continue
            i += 1
            continue
        if kind == "ident" and text.lower() not in KEYWORDS and nxt != ("punct", "("):
            labels = matcher_labels(nxt[1]) if nxt[0] == "matchers" else []
            selectors.append((text, labels))
            i += 2 if nxt[0] == "matchers" else 1
            continue
        if kind == "matchers":  # a selector without a name: {__name__="x", ...}
            name = re.search(r"__name__\s*=\s*\"([^\"]+)\"", text)
            if not name:
                raise ValueError(f"{expr!r}: a selector without a metric name")
            selectors.append((name.group(1), [label for label in matcher_labels(text) if label != "__name__"]))
        i += 1
    return selectors, grouping


def variable_query_expr(query):
    """The PromQL inside a Grafana Prometheus variable query: label_values(EXPR, label) -> (EXPR,
    label); query_result(EXPR) -> (EXPR, None); label_values(label) -> (None, label)."""
    m = re.fullmatch(r"\s*label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*", query, re.S)
    if m:
        return m.group(1), m.group(2)
    m = re.fullmatch(r"\s*label_values\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*", query)
    if m:
        return None, m.group(1)
    m = re.fullmatch(r"\s*query_result\((.*)\)\s*", query, re.S)
    if m:
        return m.group(1), None
    m = re.fullmatch(r"\s*metrics\((.*)\)\s*", query)
    if m:
        raise ValueError(f"variable query {query!r}: metrics() lists names by regex, not a metric")
    return query, None


# ---------------------------------------------------------------------------- exposition
def parse_exposition(text):
    """Prometheus text format 0.0.4 as {sample name: set of label names} for every name the text
    can answer: a family's TYPE line alone (no sample yet) gives its names (NAME, or for a
    histogram NAME_bucket/_sum/_count, for a summary NAME_sum/_count) with no labels known."""
    names = {}
    labelled = set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 4 and parts[1] == "TYPE":
                family, kind = parts[2], parts[3].strip()
                if kind == "histogram":
                    suffixes = ["_bucket", "_sum", "_count"]
                elif kind == "summary":
                    suffixes = ["", "_sum", "_count"]
                else:
                    suffixes = [""]
                for suffix in suffixes:
                    names.setdefault(family + suffix, set())
            continue
        m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?\s+\S+", line)
        if not m:
            raise ValueError(f"exposition line {number}: cannot read {line!r}")
        name = m.group(1)
        labels = set(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)=\"", m.group(3) or ""))
        names.setdefault(name, set()).update(labels)
        labelled.add(name)
    return names, labelled


# ---------------------------------------------------------------------------- dashboards
def all_panels(dashboard):
    out = []
    for panel in dashboard.get("panels", []):
        out.append(panel)
        out.extend(panel.get("panels", []))  # a collapsed row's panels
    return out


def strings_in(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_in(v)


def variable_references(text):
    return set(re.findall(r"\$\{([A-Za-z0-9_]+)(?::[a-z]+)?\}|\$([A-Za-z0-9_]+)|\[\[([A-Za-z0-9_]+)\]\]", text))


def referenced_names(text):
    return {a or b or c for a, b, c in variable_references(text)}


def expand_variables(expr):
    """A panel's expression with Grafana's variables replaced by values PromQL accepts, for the
    tokenizer (inside strings they stay as they are)."""
    expr = re.sub(r"\[\$\{?__[a-z_]+\}?\]", "[5m]", expr)
    return expr


def dashboard_problems(dashboard, exported, labelled):
    """Everything wrong with one dashboard against the metrics `exported` ({name: label names});
    `labelled`: the names that had samples (whose label sets are known)."""
    problems = []
    if not isinstance(dashboard.get("schemaVersion"), int) or dashboard["schemaVersion"] < 36:
        problems.append(f"schemaVersion {dashboard.get('schemaVersion')!r}: expected a current Grafana's (>= 36)")
    inputs = {i.get("name"): i for i in dashboard.get("__inputs", [])}
    ds_input = inputs.get("DS_PROMETHEUS")
    if not ds_input or ds_input.get("type") != "datasource" or ds_input.get("pluginId") != "prometheus":
        problems.append("__inputs: expected DS_PROMETHEUS, a prometheus datasource")
    for key in ("uid", "title"):
        if not dashboard.get(key):
            problems.append(f"no {key}")

    variables = dashboard.get("templating", {}).get("list", [])
    defined = {}
    for v in variables:
        if v.get("name") in defined:
            problems.append(f"variable {v.get('name')!r} defined twice")
        defined[v.get("name")] = v
    ds_var = defined.get("DS_PROMETHEUS")
    if not ds_var or ds_var.get("type") != "datasource" or ds_var.get("query") != "prometheus":
        problems.append("templating: expected a datasource variable DS_PROMETHEUS of type prometheus (so the "
                        "dashboard also works provisioned from a file, without the import step)")

    panels = all_panels(dashboard)
    ids = [p.get("id") for p in panels]
    for pid in sorted({i for i in ids if ids.count(i) > 1}, key=str):
        problems.append(f"panel id {pid!r} used {ids.count(pid)} times")
    if any(not isinstance(i, int) for i in ids):
        problems.append("a panel without an integer id")

    occupied = {}
    expressions = []  # (where, expr, panel)
    for p in panels:
        where = f"panel {p.get('id')} {p.get('title')!r}"
        pos = p.get("gridPos", {})
        if not all(isinstance(pos.get(k), int) for k in ("x", "y", "w", "h")) or pos["x"] + pos["w"] > 24:
            problems.append(f"{where}: gridPos {pos} is not inside the 24 columns")
        else:
            for x in range(pos["x"], pos["x"] + pos["w"]):
                for y in range(pos["y"], pos["y"] + pos["h"]):
                    if (x, y) in occupied:
                        problems.append(f"{where} overlaps panel {occupied[(x, y)]}")
                        break
                    occupied[(x, y)] = p.get("id")
                else:
                    continue
                break
        if p.get("type") == "row":
            continue
        ds = p.get("datasource") or {}
        if ds.get("uid") != "${DS_PROMETHEUS}" or ds.get("type") != "prometheus":
            problems.append(f"{where}: datasource {ds!r}, expected the ${{DS_PROMETHEUS}} prometheus one")
        targets = p.get("targets") or []
        if not targets:
            problems.append(f"{where}: no queries")
        for t in targets:
            tds = t.get("datasource")
            if tds is not None and tds.get("uid") != "${DS_PROMETHEUS}":
                problems.append(f"{where} query {t.get('refId')}: datasource {tds!r}")
            if not t.get("expr"):
                problems.append(f"{where} query {t.get('refId')}: no expr")
                continue
            expressions.append((f"{where} query {t.get('refId')}", t["expr"], p))
        unit = p.get("fieldConfig", {}).get("defaults", {}).get("unit")
        if not unit:
            problems.append(f"{where}: no unit (fieldConfig.defaults.unit)")
    for v in variables:
        if v.get("type") != "query":
            continue
        query = v.get("query")
        query = query.get("query") if isinstance(query, dict) else query
        vds = v.get("datasource") or {}
        if vds.get("uid") != "${DS_PROMETHEUS}":
            problems.append(f"variable {v.get('name')!r}: datasource {vds!r}")
        try:
            expr, _ = variable_query_expr(query or "")
        except ValueError as e:
            problems.append(str(e))
            continue
        if expr:
            expressions.append((f"variable {v.get('name')!r}", expr, None))

    # Variables: every one used somewhere else in the dashboard, every reference defined.
    text_by_variable = {v.get("name"): " ".join(strings_in(v)) for v in variables}
    panel_text = " ".join(strings_in(panels))
    for name in defined:
        others = panel_text + " " + " ".join(t for n, t in text_by_variable.items() if n != name)
        if name not in referenced_names(others):
            problems.append(f"variable {name!r} is never used")
    for name in sorted(referenced_names(panel_text + " " + " ".join(text_by_variable.values()))):
        if name not in defined and name not in GRAFANA_VARIABLES:
            problems.append(f"${name} is used but not defined")

    # Metrics and labels.
    for where, expr, panel in expressions:
        try:
            selectors, grouping = promql_selectors(expand_variables(expr))
        except ValueError as e:
            problems.append(f"{where}: {e}")
            continue
        if not selectors:
            problems.append(f"{where}: queries no metric: {expr!r}")
        known_labels = set(TARGET_LABELS)
        for metric, labels in selectors:
            if metric in PROMETHEUS_SERIES:
                continue
            if metric not in exported:
                problems.append(f"{where}: {metric} is not exported by the code (expr {expr!r})")
                continue
            known_labels |= exported[metric]
            if metric in labelled:
                for label in labels:
                    if label not in exported[metric] | TARGET_LABELS:
                        problems.append(f"{where}: {metric} has no label {label!r} (it has "
                                        f"{sorted(exported[metric])})")
        for label in grouping:
            if label not in known_labels and not (label == "le" and any(m.endswith("_bucket") for m, _ in selectors)):
                if all(m in labelled or m in PROMETHEUS_SERIES for m, _ in selectors):
                    problems.append(f"{where}: groups by {label!r}, a label none of its metrics has")
        if panel is not None:
            problems.extend(unit_problems(where, panel, [m for m, _ in selectors]))
    return problems


def unit_problems(where, panel, metrics):
    """A panel of watts, MHz or a seconds histogram shows that unit."""
    unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit")
    if panel.get("type") == "state-timeline":
        return []
    watts = [m for m in metrics if m.endswith("_watts") or m == "DCGM_FI_DEV_POWER_USAGE"]
    mhz = [m for m in metrics if m.endswith("_mhz") or m == "DCGM_FI_DEV_SM_CLOCK"]
    seconds = [m for m in metrics if re.search(r"_seconds(_bucket|_sum)?$", m)]
    if metrics and len(watts) == len(metrics) and unit not in ("watt", "kwatt"):
        return [f"{where}: power ({', '.join(sorted(set(watts)))}) shown as {unit!r}, expected watt"]
    if metrics and len(mhz) == len(metrics) and unit != "rotmhz":
        return [f"{where}: clocks ({', '.join(sorted(set(mhz)))}) shown as {unit!r}, expected rotmhz (MHz)"]
    if metrics and len(seconds) == len(metrics) and not any(m.endswith("_total") for m in metrics) and unit != "s":
        return [f"{where}: durations shown as {unit!r}, expected s"]
    return []


# ---------------------------------------------------------------------------- processes
class FakeBmc(http.server.BaseHTTPRequestHandler):
    """A Redfish chassis Power resource, so that the agent reports its Redfish series."""

    def do_GET(self):
        body = json.dumps({"PowerControl": [{"PowerConsumedWatts": 2400}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def scrape(url, token=None):
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.read().decode()


TOKEN = "row-token-for-the-dashboards-test-0123456789"


class Dashboards(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="wattcut_grafana_")
        cls.services = []
        cls.bmc = None
        try:
            cls.start_and_scrape()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def start_and_scrape(cls):
        binary = ARGS.wattcut
        d = cls.dir
        # The planning server, and a few requests so that its request series have samples.
        server = Service([binary, "serve", "--listen", "127.0.0.1:0", "--data-dir", os.path.join(d, "data")],
                         "wattcut serve: listening on")
        cls.services.append(server)
        server_url = server.url(r"listening on (http://127\.0\.0\.1:\d+)")
        scrape(server_url + "/healthz")
        scrape(server_url + "/metrics")
        # A job with a power target, so that the power-target series have samples.
        request = urllib.request.Request(server_url + "/register_job", method="POST", data=json.dumps(
            {"pp_degree": 1, "dp_degree": 1, "tp_degree": 1, "world_size": 1}).encode())
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as answer:
            cls.job_id = json.loads(answer.read())
        request = urllib.request.Request(
            server_url + "/v1/jobs/" + urllib.parse.quote(cls.job_id, safe="") + "/power_target", method="PUT",
            data=json.dumps({"peak_power_per_gpu_w": 300, "reason": "dashboards test"}).encode())
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()
        cls.server_metrics = scrape(server_url + "/metrics")

        # A fake BMC and an agent on 2 fake GPUs, over TCP with a row token.
        cls.bmc = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeBmc)
        threading.Thread(target=cls.bmc.serve_forever, daemon=True).start()
        tokens = os.path.join(d, "agent.tokens")
        with open(tokens, "w") as f:
            f.write(f"row {TOKEN}\n")
        os.chmod(tokens, 0o600)
        state = os.path.join(d, "nvml-state")
        with open(state, "w") as f:
            f.write("gpu_count=2\nmin_mhz=210\nstep_mhz=15\nload=0.5\n")
        agent = Service([binary, "agent", "--socket", os.path.join(d, "agent.sock"), "--listen", "127.0.0.1:0",
                         "--token-file", tokens, "--non-gpu-power", "1700+0.15*gpu",
                         "--redfish-url", f"http://127.0.0.1:{cls.bmc.server_address[1]}/redfish/v1/Chassis/1/Power",
                         "--redfish-period-s", "1", "--hostname", "node-1", "--state-dir", os.path.join(d, "state")],
                        "wattcut agent: serving",
                        {"LD_LIBRARY_PATH": ARGS.fake_nvml_dir, "WATTCUT_FAKE_NVML_STATE": state})
        cls.services.append(agent)
        agent_url = agent.url(r" and (http://127\.0\.0\.1:\d+)")
        # A second agent, a training server of that job, so that the training series have samples.
        training_state = os.path.join(d, "nvml-state-training")
        with open(training_state, "w") as f:
            f.write("gpu_count=2\nmin_mhz=210\nstep_mhz=15\nload=0.5\n")
        training_agent = Service([binary, "agent", "--socket", os.path.join(d, "agent-training.sock"), "--listen",
                                  "127.0.0.1:0", "--token-file", tokens, "--hostname", "node-2", "--state-dir",
                                  os.path.join(d, "state-training")],
                                 "wattcut agent: serving",
                                 {"LD_LIBRARY_PATH": ARGS.fake_nvml_dir, "WATTCUT_FAKE_NVML_STATE": training_state})
        cls.services.append(training_agent)
        training_agent_url = training_agent.url(r" and (http://127\.0\.0\.1:\d+)")
        # The row controller over those agents, in shadow mode, with its metrics listener.
        row = os.path.join(d, "row.txt")
        with open(row, "w") as f:
            f.write(f"node-1 {agent_url} high\n")
            f.write(f"node-2 {training_agent_url} training {cls.job_id}\n")
        token_file = os.path.join(d, "row.token")
        with open(token_file, "w") as f:
            f.write(TOKEN + "\n")
        os.chmod(token_file, 0o600)
        config = subprocess.run([binary, "polca", "config"], check=True, stdout=subprocess.PIPE, text=True).stdout
        config = re.sub(r"control\.telemetry_period_s = .*", "control.telemetry_period_s = 0.2", config)
        config_file = os.path.join(d, "row.conf")
        with open(config_file, "w") as f:
            f.write(config)
        controller = Service([binary, "polca", "control", "--row", row, "--config", config_file, "--token-file",
                              token_file, "--mode", "shadow", "--listen", "127.0.0.1:0", "--planning-server",
                              server_url],
                             "wattcut polca control: running")
        cls.services.append(controller)
        controller_url = controller.url(r"metrics on (http://127\.0\.0\.1:\d+)/metrics")
        for _ in range(100):  # until a period has run and the state's seconds are counted
            cls.controller_metrics = scrape(controller_url + "/metrics")
            if "wattcut_row_state_seconds_total{" in cls.controller_metrics:
                break
            time.sleep(0.1)

        # A ceiling on GPU 0 (after the controller started, which resumes from the agents'
        # ceilings), so that the ceiling, applied-lock and command series have samples.
        request = urllib.request.Request(agent_url + "/v1/ceilings", method="PUT", data=json.dumps(
            {"mhz": 1275, "lease_s": 30, "reason": "dashboards test", "gpus": [0]}).encode())
        request.add_header("Authorization", "Bearer " + TOKEN)
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()
        # The Redfish reading arrives on the agent's own thread: wait for it (bounded).
        for _ in range(100):
            cls.agent_metrics = scrape(agent_url + "/metrics", TOKEN)
            if "wattcut_agent_redfish_reading_age_seconds " in cls.agent_metrics:
                break
            time.sleep(0.1)

    @classmethod
    def tearDownClass(cls):
        for service in reversed(cls.services):
            service.stop()
        if cls.bmc is not None:
            cls.bmc.shutdown()
            cls.bmc.server_close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def load(self, name):
        with open(os.path.join(ARGS.source, "deploy", "grafana", name), encoding="utf-8") as f:
            return json.load(f)

    def exported(self, *texts):
        names, labelled = {}, set()
        for text in texts:
            n, l = parse_exposition(text)
            for k, v in n.items():
                names.setdefault(k, set()).update(v)
            labelled |= l
        return names, labelled

    def test_the_server_dashboard_queries_what_wattcut_serve_exports(self):
        exported, labelled = self.exported(self.server_metrics)
        problems = dashboard_problems(self.load("wattcut-server.json"), exported, labelled)
        self.assertEqual(problems, [], "\n".join(problems))

    def test_the_row_dashboard_queries_what_the_agent_and_the_controller_export(self):
        # What the set-up did shows: a ceiling, the lock it applied, a Redfish reading, a period.
        for series in ("wattcut_agent_sm_clock_ceiling_mhz{", "wattcut_agent_applied_sm_clock_max_mhz{",
                       "wattcut_agent_commands_total{", 'wattcut_agent_server_power_watts{source="redfish"}',
                       "wattcut_agent_redfish_reading_age_seconds ", "DCGM_FI_DEV_POWER_USAGE{"):
            self.assertIn(series, self.agent_metrics)
        self.assertIn("wattcut_row_state_seconds_total{", self.controller_metrics)
        exported, labelled = self.exported(self.agent_metrics, self.controller_metrics)
        problems = dashboard_problems(self.load("wattcut-row.json"), exported, labelled)
        self.assertEqual(problems, [], "\n".join(problems))

    def test_the_dashboards_graph_what_the_issue_asks_for(self):
        def queried(name):
            return {m for p in all_panels(self.load(name)) for t in p.get("targets", [])
                    for m, _ in promql_selectors(expand_variables(t["expr"]))[0]}
        server = queried("wattcut-server.json")
        for metric in ("wattcut_jobs", "wattcut_jobs_by_frontier_state", "wattcut_ranks",
                       "wattcut_http_requests_total", "wattcut_http_request_duration_seconds_bucket",
                       "wattcut_frontier_computations_total", "wattcut_frontier_computation_seconds_bucket",
                       "wattcut_plan_switches_total", "wattcut_stragglers", "wattcut_power_target_per_gpu_watts",
                       "wattcut_power_target_met"):
            self.assertIn(metric, server)
        row = queried("wattcut-row.json")
        for metric in ("DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_SM_CLOCK", "wattcut_agent_server_power_watts",
                       "wattcut_agent_sm_clock_ceiling_mhz", "wattcut_agent_leases_held", "wattcut_row_brake",
                       "wattcut_row_state", "wattcut_row_power_watts", "wattcut_row_threshold_fraction",
                       "wattcut_row_training_target_watts", "wattcut_row_training_fallback"):
            self.assertIn(metric, row)

    def test_a_metric_the_code_does_not_export_is_caught(self):
        # The checker itself: a misspelt metric, a label a metric lacks, an unused variable, a
        # duplicate id, a panel on another datasource and a clock panel without MHz are caught.
        exported, labelled = self.exported(self.agent_metrics, self.controller_metrics)
        board = self.load("wattcut-row.json")
        panel = next(p for p in board["panels"] if p["type"] == "timeseries" and "DCGM_FI_DEV_POWER_USAGE" in
                     p["targets"][0]["expr"])
        panel["targets"][0]["expr"] = 'sum by (Hostname) (DCGM_FI_DEV_POWER_USAGE{gpu="0"}) + DCGM_FI_DEV_POWER_USGAE'
        clocks = next(p for p in board["panels"] if p.get("title") == "SM clock per GPU")
        clocks["fieldConfig"]["defaults"]["unit"] = "short"
        other = next(p for p in board["panels"] if p["type"] == "timeseries" and p is not panel)
        other["targets"][0]["expr"] = 'wattcut_agent_leases_held{pci_bus_id="0"}'
        other["id"] = panel["id"]
        other["datasource"] = {"type": "prometheus", "uid": "my-prometheus"}
        board["templating"]["list"].append({"name": "unused", "type": "custom", "query": "a,b"})
        problems = "\n".join(dashboard_problems(board, exported, labelled))
        self.assertIn("DCGM_FI_DEV_POWER_USGAE is not exported", problems)
        self.assertIn("has no label 'pci_bus_id'", problems)
        self.assertIn("variable 'unused' is never used", problems)
        self.assertIn(f"panel id {panel['id']} used 2 times", problems)
        self.assertIn("my-prometheus", problems)
        self.assertIn("'SM clock per GPU' query A: clocks (DCGM_FI_DEV_SM_CLOCK) shown as 'short', expected rotmhz",
                      problems)

    def test_the_tokenizer(self):
        selectors, grouping = promql_selectors(
            'histogram_quantile(0.99, sum by (le, endpoint) (rate(a_seconds_bucket{x="}", y=~"a|b"}[5m]))) '
            '/ on (job) group_left (kind) b_total offset 5m > bool 1e3 and {__name__="c", d!="e"} '
            'unless count without (z) (sum(inf_metric) * -Inf + NaN)')
        self.assertEqual(selectors, [("a_seconds_bucket", ["x", "y"]), ("b_total", []), ("c", ["d"]),
                                     ("inf_metric", [])])
        self.assertEqual(grouping, ["le", "endpoint", "job", "kind", "z"])
        self.assertEqual(promql_selectors(expand_variables('rate(m{a="$x"}[$__rate_interval])'))[0], [("m", ["a"])])
        self.assertEqual(variable_query_expr('label_values(m{job=~"$job"}, instance)'), ('m{job=~"$job"}', "instance"))
        with self.assertRaises(ValueError):
            promql_tokens('rate(m{a="b"[5m])')
        names, labelled = parse_exposition("# HELP h_seconds x\n# TYPE h_seconds histogram\n"
                                           "# TYPE g gauge\ng{a=\"1\",b=\"x,y=\\\"z\"} 2\n")
        self.assertEqual(names, {"h_seconds_bucket": set(), "h_seconds_sum": set(), "h_seconds_count": set(),
                                 "g": {"a", "b"}})
        self.assertEqual(labelled, {"g"})

    def test_the_scrape_config(self):
        path = os.path.join(ARGS.source, "deploy", "prometheus", "prometheus.yml")
        with open(path, encoding="utf-8") as f:
            config = yaml.safe_load(f)
        jobs = {j["job_name"]: j for j in config["scrape_configs"]}
        self.assertEqual(len(jobs), len(config["scrape_configs"]), "job names are unique")

        def targets(job):
            out = []
            for sc in job.get("static_configs", []):
                out += sc["targets"]
            return out
        self.assertTrue(all(t.endswith(":7787") for t in targets(jobs["wattcut-server"])))
        self.assertTrue(all(t.endswith(":7789") for t in targets(jobs["wattcut-row-controller"])))
        agent = jobs["wattcut-agent"]
        self.assertIn("file_sd_configs", agent)
        self.assertEqual(agent["authorization"]["type"], "Bearer")
        self.assertIn("credentials_file", agent["authorization"])
        # The file_sd example beside it lists agents on the agent's port.
        with open(os.path.join(ARGS.source, "deploy", "prometheus", "wattcut-agents.yml"), encoding="utf-8") as f:
            groups = yaml.safe_load(f)
        self.assertTrue(groups and all(t.endswith(":7788") for g in groups for t in g["targets"]))
        promtool = ARGS.promtool or shutil.which("promtool")
        if not promtool:
            print("promtool not found: `promtool check config` skipped", file=sys.stderr)
            return
        # promtool reads the token and file_sd files the config names: check a copy whose paths
        # point at files in a temporary folder.
        with tempfile.TemporaryDirectory() as d:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for original in sorted(set(re.findall(r"(?:credentials_file|files):\s*\[?\s*\"?(/[^\s\"\]]+)", text))):
                copy = os.path.join(d, os.path.basename(original))
                source = os.path.join(ARGS.source, "deploy", "prometheus", os.path.basename(original))
                if os.path.exists(source):
                    shutil.copy(source, copy)  # the file_sd list
                else:
                    with open(copy, "w") as f:  # a token file
                        f.write("token\n")
                text = text.replace(original, copy)
            checked = os.path.join(d, "prometheus.yml")
            with open(checked, "w") as f:
                f.write(text)
            run = subprocess.run([promtool, "check", "config", checked], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
            self.assertEqual(run.returncode, 0, run.stdout)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--wattcut", required=True)
    parser.add_argument("--fake-nvml-dir", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--promtool", default="")
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
