#!/usr/bin/env python3
"""Tests of .ci/layering.py's pipeline rule, over small made-up `cargo metadata` documents:
podcode-tools and podcode-builtins may not depend on podcode-store, except optionally behind
`test-support`. Run: python3 .ci/test_layering.py
"""

import contextlib
import io
import json
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import layering  # noqa: E402


def package(name, deps=(), features=None):
    return {
        "id": name,
        "name": name,
        "manifest_path": f"/w/{name}/Cargo.toml",
        "features": features or {},
        "dependencies": [
            {"name": d, "kind": kind, "optional": optional, "target": None, "rename": None}
            for d, kind, optional in deps
        ],
    }


def workspace(tools_deps=(), tools_features=None, builtins_deps=()):
    packages = [
        package("podcode-core"),
        package("podcode-protocol"),
        package("podcode-store"),
        package("podcode-tui", [("podcode-core", None, False)]),
        package("podcode-server", [("podcode-core", None, False)]),
        package("podcode-acp", [("podcode-core", None, False)]),
        package("podcode", [("podcode-core", None, False)]),
        package("podcode-tools", tools_deps, tools_features),
        package("podcode-builtins", builtins_deps),
    ]
    return {"workspace_members": [p["id"] for p in packages], "packages": packages}


def run(meta):
    out = io.StringIO()
    sys.stdin = io.StringIO(json.dumps(meta))
    with contextlib.redirect_stdout(out):
        code = layering.main()
    return code, out.getvalue()


class PipelineRule(unittest.TestCase):
    def test_a_test_support_only_optional_store_and_dev_deps_pass(self):
        code, out = run(
            workspace(
                tools_deps=[("podcode-store", None, True)],
                tools_features={"test-support": ["dep:tempfile", "dep:podcode-store"]},
                builtins_deps=[("podcode-store", "dev", False)],
            )
        )
        self.assertEqual(code, 0, out)
        self.assertIn("the tool pipeline does not depend on the store", out)

    def test_a_normal_store_dependency_fails_with_the_fix(self):
        code, out = run(workspace(builtins_deps=[("podcode-store", None, False)]))
        self.assertEqual(code, 1)
        self.assertIn(
            "layering: the tool pipeline keeps its records through podcode-records, never the store:\n"
            "  podcode-builtins depends on podcode-store  [/w/podcode-builtins/Cargo.toml]\n"
            "Fix: use the podcode-records trait for what the code reads or writes",
            out,
        )

    def test_an_optional_store_behind_another_feature_fails(self):
        code, out = run(
            workspace(
                tools_deps=[("podcode-store", None, True)],
                tools_features={"test-support": ["dep:podcode-store"], "fast": ["podcode-store/x"]},
            )
        )
        self.assertEqual(code, 1)
        self.assertIn(
            "podcode-tools depends on podcode-store (optional, turned on by: fast, test-support)", out
        )


if __name__ == "__main__":
    unittest.main()
