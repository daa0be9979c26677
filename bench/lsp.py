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

  C. opencode (`opencode run`, same script, same server and TypeScript: opencode takes
     typescript-language-server from PATH and tsserver from the project's node_modules)

B's and C's requests are checked: the result after each broken write carries the type error,
the one after each fixed write none. While B and C run, the server processes' RSS (the
process tree under the agent whose command line names typescript) is sampled at each
request; the peak is reported. Prints p50/p90 of cold and warm edits for A, B and C.
opencode's requests without tools (its title request) are answered apart and not counted.

Run: python3 bench/lsp.py [--bin PATH] [--opencode PATH] [--rounds 6] [--edits 8]
     (without --bin: `cargo build --release -p podcode`, then target/release/podcode;
     without --opencode: the one CI installs for the cross-check tests, if present)
"""
import argparse, io, json, os, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import before_after as ba  # noqa: E402
import discovery  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "crates/lsp/tests/servers/node_modules/.bin"
OPENCODE = ROOT / "crates/cli/tests/opencode-crosscheck/node_modules/opencode-linux-x64/bin/opencode"
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
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if "tools" not in json.loads(body or b"{}"):  # opencode's title request
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    self.wfile.write("".join(f for f, _ in ba.frames([ba.text("Count")])).encode())
                    self.close_connection = True
                    return
                self.rfile = io.BytesIO(body)
                super().do_POST()

        self.server.RequestHandlerClass = Handler


def tool_results(body):
    msgs = json.loads(body)["messages"]
    return [m["content"] for m in msgs if m.get("role") == "tool"]


def opencode_spawn(s, model, opencode, edits):
    """`opencode run` in the scratch project: a real git repository, TypeScript in its
    node_modules, the scripted model as its only provider, every tool allowed."""
    subprocess.run(["git", "init", "-q", str(s.repo)], check=True)
    (s.repo / "node_modules").symlink_to(SERVERS.parent)
    (s.repo / "opencode.json").write_text(json.dumps({
        "provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                                  "options": {"baseURL": model.url, "apiKey": "bench"},
                                  "models": {"bench": {"name": "bench"}}}},
        # opencode 1.18 starts no language server unless `lsp` is set.
        "model": "scripted/bench", "permission": {"edit": "allow"}, "lsp": True}))
    env = dict(s.env, PWD=str(s.repo), PATH=f"{SERVERS}:{s.env['PATH']}",
               OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_LSP_DOWNLOAD="1")
    return subprocess.Popen([opencode, "run", "count things"], cwd=s.repo, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def one_run(model, binary, edits, kind):
    """Gaps (ms) between the reply carrying each write and the next request. kind: "A"
    (Podcode, [lsp] disabled), "B" (Podcode with the server) or "C" (opencode, `binary`)."""
    script = [[ba.call(f"c{i}", "write", {"filePath": "src/count.ts",
                                          "content": BROKEN if i % 2 == 0 else FIXED})]
              for i in range(edits)] + [[ba.text("done")]]
    model.reset(script)
    model.peak_kib = 0
    s = ba.Scratch(model)
    (s.repo / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "noEmit": true}}')
    if kind == "C":
        p = opencode_spawn(s, model, binary, edits)
    else:
        cfg = Path(s.env["PODCODE_CONFIG_DIR"]) / "config.toml"
        extra = ('[lsp]\nwait_ms = 60000\n[lsp.typescript]\n'
                 f'command = ["{SERVERS / "typescript-language-server"}", "--stdio"]\n'
                 if kind == "B" else "[lsp]\ndisabled = true\n")
        cfg.write_text(cfg.read_text() + extra)
        p = s.spawn(binary, ["run", "count things", "--yes", "--max-steps", str(edits + 5)])
    lsp = kind != "A"
    model.watch = p.pid if lsp else None
    code = p.wait(600)
    model.watch = None
    arrivals = list(model.arrivals)
    bodies = list(model.bodies)
    s.close()
    if code != 0 or len(arrivals) != edits + 1:
        sys.exit(f"{kind}: run failed: exit {code}, {len(arrivals)} requests of {edits + 1}")
    if lsp:
        bodies = [b for b in bodies if "tools" in json.loads(b)]
        for i, body in enumerate(bodies[1:]):
            last = tool_results(body)[-1]
            if isinstance(last, list):
                last = "".join(part.get("text", "") for part in last)
            has = "is not assignable to type 'number'" in last
            if has != (i % 2 == 0):
                sys.exit(f"{kind} edit {i}: expected {'a' if i % 2 == 0 else 'no'} diagnostic, got:\n{last}")
    return [(b - a) * 1e3 for a, b in zip(arrivals, arrivals[1:])], model.peak_kib


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--opencode", help="opencode binary (default: the cross-check tests' one)")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--edits", type=int, default=8)
    a = ap.parse_args()
    if not (SERVERS / "typescript-language-server").exists():
        sys.exit("run `npm ci` in crates/lsp/tests/servers first")
    binary = str(Path(a.bin).resolve()) if a.bin else None
    if not binary:
        subprocess.run(["cargo", "build", "--release", "-p", "podcode"], cwd=ROOT, check=True)
        binary = str(ROOT / "target/release/podcode")
    opencode = a.opencode or (str(OPENCODE) if OPENCODE.exists() else None)
    kinds = "ABC" if opencode else "AB"
    if not opencode:
        print("opencode not found (`npm ci` in crates/cli/tests/opencode-crosscheck, or "
              "--opencode PATH): C skipped", file=sys.stderr)
    model = Model()
    cold = {k: [] for k in kinds}
    warm = {k: [] for k in kinds}
    peaks = {k: [] for k in kinds}
    for r in range(a.rounds):
        order = kinds if r % 2 == 0 else kinds[::-1]
        for kind in order:
            gaps, peak = one_run(model, opencode if kind == "C" else binary, a.edits, kind)
            cold[kind].append(gaps[0])
            warm[kind].extend(gaps[1:])
            peaks[kind].append(peak)
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    load = os.getloadavg()[0]
    names = {"A": "Podcode, no LSP", "B": "Podcode + typescript", "C": "opencode + typescript"}
    print(f"edit -> next request, {a.rounds} rounds x {a.edits} edits, load {load:.1f}")
    for kind in kinds:
        print(f"  {names[kind]:<22} cold p50 {pct(cold[kind], 50):7.1f} ms | warm p50 "
              f"{pct(warm[kind], 50):7.1f} ms p90 {pct(warm[kind], 90):7.1f}"
              + (f" | server peak RSS {statistics.median(peaks[kind]) / 1024:.0f} MiB"
                 if kind != "A" else ""))
    if "C" in kinds:
        print(f"  ratio opencode / Podcode (B): cold {pct(cold['C'], 50) / pct(cold['B'], 50):.2f}x,"
              f" warm {pct(warm['C'], 50) / pct(warm['B'], 50):.2f}x")


if __name__ == "__main__":
    main()
