#!/usr/bin/env python3
"""Layering check: front ends reach the engine only through podcode-core and podcode-protocol.

Reads `cargo metadata --format-version 1 --no-deps` on stdin and fails (exit 1) when a front-end
crate has a normal dependency (any target, optional or not) on another workspace crate it may not
use. Dev- and build-dependencies are free: tests may open the store to check what was written.
Prints each offending edge and how to fix it.
"""

import json
import sys

CORE = {"podcode-core", "podcode-protocol"}
# Front end -> the workspace crates it may depend on (normal dependencies).
ALLOWED = {
    "podcode-tui": CORE,
    "podcode-server": CORE,
    "podcode-acp": CORE,
    # The binary parses arguments and hands over to a front end. Its second program,
    # podcode-sandbox-helper, is the sandbox helper alone: it links podcode-sandbox directly so
    # it starts fast (loading all of podcode for every sandboxed command cost ~5 ms).
    "podcode": CORE | {"podcode-tui", "podcode-server", "podcode-acp", "podcode-sandbox"},
}


def main() -> int:
    meta = json.load(sys.stdin)
    members = set(meta["workspace_members"])
    packages = [p for p in meta["packages"] if p["id"] in members]
    ours = {p["name"] for p in packages}

    missing = sorted(set(ALLOWED) - ours)
    if missing:
        print(f"layering: front-end crates not found in the workspace: {', '.join(missing)}")
        print("  Update ALLOWED in .ci/layering.py to the current crate names.")
        return 1

    bad = []
    for p in packages:
        allowed = ALLOWED.get(p["name"])
        if allowed is None:
            continue
        for d in p["dependencies"]:
            if d["kind"] is not None:  # "dev" or "build"
                continue
            if d["name"] in ours and d["name"] not in allowed:
                where = f" (target {d['target']})" if d.get("target") else ""
                bad.append((p["name"], d["name"], where, p["manifest_path"]))

    if not bad:
        print("layering: front ends depend only on " + ", ".join(sorted(CORE)) + " (and the binary on the front ends and the sandbox helper)")
        return 0

    print("layering: front ends may depend only on podcode-core and podcode-protocol")
    print("(the podcode binary also on podcode-tui, podcode-server, podcode-acp, and podcode-sandbox for its\nsandbox helper program):")
    for front, dep, where, manifest in bad:
        print(f"  {front} depends on {dep}{where}  [{manifest}]")
    print(
        "Fix: reach what you need through podcode-core (re-export the type from podcode-core's lib.rs,\n"
        "or add an Engine/Session method that does the work), then remove the dependency from the\n"
        "front end's [dependencies]. A test that needs the crate may list it under [dev-dependencies]."
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
