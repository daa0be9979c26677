#!/usr/bin/env python3
"""Layering check: front ends reach the engine only through podcode-core and podcode-protocol,
and the tool pipeline never holds the store.

Reads `cargo metadata --format-version 1 --no-deps` on stdin and fails (exit 1) when a front-end
crate has a normal dependency (any target, optional or not) on another workspace crate it may not
use, or when a pipeline crate (podcode-tools, podcode-builtins) has a normal dependency on a crate
it must reach only through traits (podcode-store: through podcode-records). The one exception is
an optional dependency that only the `test-support` feature turns on (the tools' test harness runs
calls against the real store). Dev- and build-dependencies are free: tests may open the store to
check what was written. Prints each offending edge and how to fix it.
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

# Pipeline crate -> workspace crates it must not depend on (normal dependencies).
FORBIDDEN = {
    "podcode-tools": {"podcode-store"},
    "podcode-builtins": {"podcode-store"},
}
# The only feature that may turn on a forbidden crate as an optional dependency.
TEST_FEATURE = "test-support"


def enabled_by(package: dict, dep: str) -> list[str]:
    """The features of `package` that turn on its optional dependency `dep`."""
    names = {dep, f"dep:{dep}"}
    return sorted(
        feature
        for feature, items in package.get("features", {}).items()
        if any(item in names or item.split("/")[0].rstrip("?") in names for item in items)
    )


def pipeline_edges(packages: list[dict]) -> list[tuple[str, str, str, str]]:
    """Normal dependencies of the pipeline crates on crates they must reach through traits."""
    bad = []
    for p in packages:
        forbidden = FORBIDDEN.get(p["name"], set())
        for d in p["dependencies"]:
            if d["kind"] is not None or d["name"] not in forbidden:
                continue
            if d.get("optional"):
                features = enabled_by(p, d.get("rename") or d["name"])
                if features and all(f == TEST_FEATURE for f in features):
                    continue
                why = f" (optional, turned on by: {', '.join(features) or 'nothing'})"
            else:
                why = ""
            if d.get("target"):
                why += f" (target {d['target']})"
            bad.append((p["name"], d["name"], why, p["manifest_path"]))
    return bad


def main() -> int:
    meta = json.load(sys.stdin)
    members = set(meta["workspace_members"])
    packages = [p for p in meta["packages"] if p["id"] in members]
    ours = {p["name"] for p in packages}

    missing = sorted((set(ALLOWED) | set(FORBIDDEN)) - ours)
    if missing:
        print(f"layering: front-end or pipeline crates not found in the workspace: {', '.join(missing)}")
        print("  Update ALLOWED and FORBIDDEN in .ci/layering.py to the current crate names.")
        return 1

    pipeline = pipeline_edges(packages)
    if pipeline:
        print("layering: the tool pipeline keeps its records through podcode-records, never the store:")
        for crate, dep, why, manifest in pipeline:
            print(f"  {crate} depends on {dep}{why}  [{manifest}]")
        print(
            "Fix: use the podcode-records trait for what the code reads or writes (CallLog,\n"
            "ChangeJournal, Approvals, Conversation, WorktreeRecords; add a narrow one if none fits, and\n"
            "implement it in podcode-store), then remove the dependency. A test that needs the store may\n"
            "list it under [dev-dependencies], or behind the `test-support` feature only."
        )

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
        if pipeline:
            return 1
        print("layering: front ends depend only on " + ", ".join(sorted(CORE)) + " (and the binary on the front ends and the sandbox helper); the tool pipeline does not depend on the store")
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
