#!/usr/bin/env bash
# Startup benchmark: wall time of `podcode tools --json` from process start, in a workspace
# with no plugins, against `true` measured in the same run (the cost of starting any
# process here). Target: under 30 ms. Usage: bench/startup.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-50}
cargo build --release -q -p podcode
bin=$PWD/target/release/podcode
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PODCODE_DATA_DIR=$work/data PODCODE_CONFIG_DIR=$work/config
mkdir -p "$work/repo" && cd "$work/repo"
"$bin" tools --json >/dev/null # warm the page cache and the manifest cache

median_ms() { # command... → median wall ms over $runs runs
  python3 - "$runs" "$@" <<'PY'
import subprocess, sys, time, statistics
runs, cmd = int(sys.argv[1]), sys.argv[2:]
samples = []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    samples.append((time.perf_counter() - t) * 1000)
print(f"{statistics.median(samples):.2f}")
PY
}

t_true=$(median_ms true)
t_tools=$(median_ms "$bin" tools --json)

# The same with 20 plugin tool files whose manifests are cached: no JS may start.
mkdir -p "$work/plugins/.opencode/tools" && cd "$work/plugins" && git init -q
for i in $(seq 1 20); do
  printf 'import { tool } from "@opencode-ai/plugin"\nexport default tool({ description: "Echo %s", args: { text: tool.schema.string() }, async execute(a) { return a.text } })\n' "$i" \
    > ".opencode/tools/echo$i.ts"
done
"$bin" trust >/dev/null
"$bin" tools --json >/dev/null 2>&1 # imports once, caches the manifests
t_plugins=$(median_ms "$bin" tools --json)

python3 - "$t_true" "$t_tools" "$t_plugins" <<'PY'
import sys
t_true, t_tools, t_plugins = map(float, sys.argv[1:])
print(f"podcode tools --json, no plugins: median {t_tools:.2f} ms; true: {t_true:.2f} ms; ratio {t_tools / t_true:.1f}x; target < 30 ms")
print(f"podcode tools --json, 20 cached plugin files: median {t_plugins:.2f} ms; ratio to no plugins {t_plugins / t_tools:.2f}x; target: same budget (< 30 ms)")
PY
