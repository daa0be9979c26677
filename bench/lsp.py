#!/usr/bin/env python3
"""Edit -> diagnostics: what a language server costs an edit, cold and warm, and its memory.

Issue 29: "time from the edit's tool call to the result carrying diagnostics, warm and cold
server; memory of the server processes reported". One `podcode run` per round against the
scripted model (before_after's server, with discovery's body record): the model writes a TypeScript file with a type
error, then (each answer to the last result) writes it fixed, broken, fixed… EDITS times.
The gap between the model's reply with the call and the next request is one edit as the
agent loop sees it: write + formatter + diagnostics. The first edit starts the server
(cold); the others find it running (warm). Each round runs twice, ABBA:

  A. `[lsp] disabled = true`  (the edit without diagnostics: the baseline)
  B. typescript-language-server 5 + TypeScript 5.9 (crates/lsp/tests/servers, `npm ci`)

B's requests are checked: the result after each broken write carries the TS2322 diagnostic,
the one after each fixed write none. While B runs, the server processes' RSS (the process
tree under podcode whose command line names typescript) is sampled at each request; the peak
is reported. Prints p50/p90 of cold and warm edits for A and B and B-A.

opencode is not run here: its language servers are fetched on first use from the network,
which these machines do not reach.

Run: python3 bench/lsp.py [--bin PATH] [--rounds 6] [--edits 8]
     (without --bin: `cargo build --release -p podcode`, then target/release/podcode)
"""
import argparse, json, os, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import before_after as ba  # noqa: E402
import discovery  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "crates/lsp/tests/servers/node_modules/.bin"
BROKEN = 'export const count: number = "three";\n'
FIXED = "export const count: number = 3;\n"


def tree_rss_kib(root_pid, needle):
    """Summed VmRSS of the processes under root_pid whose command line holds needle."""
    parents, cmd, rss = {}, {}, {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            status = (d / "status").read_text()
            cmd[int(d.name)] = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("PPid:"):
                parents[int(d.name)] = int(line.split()[1])
            elif line.startswith("VmRSS:"):
                rss[int(d.name)] = int(line.split()[1])

    def under(pid):
        seen = set()
        while pid and pid not in seen:
            if pid == root_pid:
                return True
            seen.add(pid)
            pid = parents.get(pid)
        return False

    return sum(rss.get(p, 0) for p in cmd if needle in cmd[p] and under(p))


class Model(discovery.Model):
    """discovery's server (it keeps each request body); also samples the server tree's RSS
    as each request arrives."""

    def __init__(self):
        super().__init__()
        model, base = self, self.server.RequestHandlerClass
        self.watch, self.peak_kib = None, 0

        class Handler(base):
            def do_POST(self):
                if model.watch:
                    model.peak_kib = max(model.peak_kib, tree_rss_kib(model.watch, "typescript"))
                super().do_POST()

        self.server.RequestHandlerClass = Handler


def tool_results(body):
    msgs = json.loads(body)["messages"]
    return [m["content"] for m in msgs if m.get("role") == "tool"]


def one_run(model, binary, edits, lsp):
    """Gaps (ms) between the reply carrying each write and the next request."""
    script = [[ba.call(f"c{i}", "write", {"filePath": "src/count.ts",
                                          "content": BROKEN if i % 2 == 0 else FIXED})]
              for i in range(edits)] + [[ba.text("done")]]
    model.reset(script)
    model.peak_kib = 0
    s = ba.Scratch(model)
    (s.repo / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "noEmit": true}}')
    cfg = Path(s.env["PODCODE_CONFIG_DIR"]) / "config.toml"
    extra = ('[lsp]\nwait_ms = 60000\n[lsp.typescript]\n'
             f'command = ["{SERVERS / "typescript-language-server"}", "--stdio"]\n'
             if lsp else "[lsp]\ndisabled = true\n")
    cfg.write_text(cfg.read_text() + extra)
    p = s.spawn(binary, ["run", "count things", "--yes", "--max-steps", str(edits + 5)])
    model.watch = p.pid if lsp else None
    code = p.wait(600)
    model.watch = None
    arrivals = list(model.arrivals)
    bodies = list(model.bodies)
    s.close()
    if code != 0 or len(arrivals) != edits + 1:
        sys.exit(f"run failed: exit {code}, {len(arrivals)} requests of {edits + 1}")
    if lsp:
        for i, body in enumerate(bodies[1:]):
            last = tool_results(body)[-1]
            has = "(typescript 2322)" in last
            if has != (i % 2 == 0):
                sys.exit(f"edit {i}: expected {'a' if i % 2 == 0 else 'no'} diagnostic, got:\n{last}")
    return [(b - a) * 1e3 for a, b in zip(arrivals, arrivals[1:])], model.peak_kib


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--edits", type=int, default=8)
    a = ap.parse_args()
    if not (SERVERS / "typescript-language-server").exists():
        sys.exit("run `npm ci` in crates/lsp/tests/servers first")
    binary = str(Path(a.bin).resolve()) if a.bin else None
    if not binary:
        subprocess.run(["cargo", "build", "--release", "-p", "podcode"], cwd=ROOT, check=True)
        binary = str(ROOT / "target/release/podcode")
    model = Model()
    cold = {"A": [], "B": []}
    warm = {"A": [], "B": []}
    peaks = []
    for r in range(a.rounds):
        for label in ("AB" if r % 2 == 0 else "BA"):
            gaps, peak = one_run(model, binary, a.edits, label == "B")
            cold[label].append(gaps[0])
            warm[label].extend(gaps[1:])
            if label == "B":
                peaks.append(peak)
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    load = os.getloadavg()[0]
    print(f"edit -> next request, {a.rounds} rounds x {a.edits} edits, load {load:.1f}")
    for name, d in (("cold (first edit)", cold), ("warm (later edits)", warm)):
        A, B = d["A"], d["B"]
        print(f"  {name:<20} no LSP p50 {pct(A, 50):7.1f} ms p90 {pct(A, 90):7.1f} | "
              f"typescript p50 {pct(B, 50):7.1f} ms p90 {pct(B, 90):7.1f} | "
              f"B-A p50 {pct(B, 50) - pct(A, 50):7.1f} ms")
    print(f"  server processes' peak RSS: {statistics.median(peaks) / 1024:.0f} MiB (median of rounds)")


if __name__ == "__main__":
    main()
