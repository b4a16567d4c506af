#!/usr/bin/env python3
"""Checks src/wattcut/agent/openapi.yaml, the agent's OpenAPI document (GET /openapi.yaml): it parses
as OpenAPI 3.0, every $ref resolves, every path parameter is declared, and its paths and methods are
exactly the endpoints docs/agent.md lists.

Usage: agent_openapi_test.py --source SOURCE_DIR."""

import argparse
import os
import re
import sys
import unittest

import yaml

ARGS = None
METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def load():
    with open(os.path.join(ARGS.source, "src", "wattcut", "agent", "openapi.yaml"), encoding="utf-8") as f:
        return yaml.safe_load(f)


def refs(node, where="#"):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield where, value
            else:
                yield from refs(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from refs(value, f"{where}/{i}")


def documented_endpoints():
    """(METHOD, path) of every row of docs/agent.md's endpoint table: | `GET /v1/gpus` | ..."""
    endpoints = set()
    with open(os.path.join(ARGS.source, "docs", "agent.md"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\|\s*`(GET|PUT|POST|DELETE) (/\S*)`\s*\|", line)
            if m:
                endpoints.add((m.group(1), m.group(2)))
    return endpoints


class AgentOpenApi(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.doc = load()

    def test_is_openapi_3(self):
        self.assertRegex(self.doc["openapi"], r"^3\.0\.\d+$")
        self.assertIn("title", self.doc["info"])
        self.assertIn("version", self.doc["info"])
        self.assertEqual(self.doc["components"]["securitySchemes"]["bearer"], {
            **self.doc["components"]["securitySchemes"]["bearer"], "type": "http", "scheme": "bearer"})

    def test_every_ref_resolves(self):
        count = 0
        for where, ref in refs(self.doc):
            self.assertTrue(ref.startswith("#/"), f"{where}: {ref} is not local")
            node = self.doc
            for part in ref[2:].split("/"):
                self.assertIn(part, node, f"{where}: {ref} does not resolve")
                node = node[part]
            count += 1
        self.assertGreater(count, 20)

    def test_every_operation_answers_and_declares_its_path_parameters(self):
        parameters = self.doc["components"]["parameters"]
        for path, item in self.doc["paths"].items():
            names = set(re.findall(r"\{(\w+)\}", path))
            for method, operation in item.items():
                self.assertIn(method, METHODS, f"{path}: {method}")
                self.assertIn("summary", operation, f"{method} {path}")
                self.assertTrue(any(code.startswith("2") for code in operation["responses"]), f"{method} {path}")
                declared = set()
                for p in operation.get("parameters", []):
                    if "$ref" in p:
                        p = parameters[p["$ref"].rsplit("/", 1)[1]]
                    if p["in"] == "path":
                        declared.add(p["name"])
                self.assertEqual(declared, names, f"{method} {path}: path parameters")

    def test_bodies_refuse_unknown_fields_as_the_agent_does(self):
        for name, schema in self.doc["components"]["schemas"].items():
            if name.endswith("Request"):
                self.assertIs(schema.get("additionalProperties"), False, name)

    def test_paths_are_the_documented_endpoints(self):
        documented = documented_endpoints()
        self.assertGreaterEqual(len(documented), 15, "docs/agent.md's endpoint table was not found")
        in_openapi = set()
        for path, item in self.doc["paths"].items():
            for method in item:
                in_openapi.add((method.upper(), path))
        self.assertEqual(sorted(in_openapi - documented), [], "in openapi.yaml, not in docs/agent.md")
        self.assertEqual(sorted(documented - in_openapi), [], "in docs/agent.md, not in openapi.yaml")


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
