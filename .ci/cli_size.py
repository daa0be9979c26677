#!/usr/bin/env python3
"""Size check: the binary crate (crates/cli/src) keeps to argument parsing and rendering.

Counts the lines of every .rs file under crates/cli/src as `wc -l` does (newline characters)
and fails (exit 1) when the total reaches LIMIT, listing the biggest files and where their
logic belongs. `--limit N` overrides the limit (to try the check).
"""

import pathlib
import sys

LIMIT = 1500
ROOT = pathlib.Path(__file__).resolve().parent.parent / "crates" / "cli" / "src"


def main() -> int:
    limit = LIMIT
    if len(sys.argv) == 3 and sys.argv[1] == "--limit":
        limit = int(sys.argv[2])
    sizes = sorted(
        ((p.read_bytes().count(b"\n"), p.relative_to(ROOT.parent.parent.parent)) for p in ROOT.rglob("*.rs")),
        reverse=True,
    )
    total = sum(n for n, _ in sizes)
    if total < limit:
        print(f"binary crate size: crates/cli/src has {total} lines (under {limit})")
        return 0
    print(f"binary crate size: crates/cli/src has {total} lines; it must stay under {limit}.")
    print("The binary keeps to argument parsing and rendering. Biggest files:")
    for n, path in sizes[:5]:
        print(f"  {n:5}  {path}")
    print(
        "Fix: move logic (opening sessions, answering asks, building texts and JSON from what the\n"
        "engine returns) into podcode-core, or into the front-end crate it belongs to\n"
        "(podcode-tui, podcode-server, podcode-acp), and keep only clap arguments and printing here."
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
