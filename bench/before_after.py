#!/usr/bin/env python3
"""Before/after benchmark of the `podcode` binary, both measured in one run (issue 26).

Builds two release binaries -- a baseline revision (default 3b6b119, the commit before the
session-registry work) and the current checkout -- and measures each, alternating
baseline/current in every round (ABBA order), so the load of a busy machine hits both alike:

  a. `podcode run` -> first model request: spawn `podcode run hello` and time until the
     scripted model server (below) receives the request.
  b. per-call overhead: the model asks for N=50 `read` calls of a small file, one per step,
     then answers; (wall time of that `podcode run` - the same run with N=0) / N.
  c. event -> SSE latency: `podcode serve`, a session created and prompted over the HTTP API,
     an SSE client on `/api/sessions/{id}/events`; the model streams text deltas with a pause
     between them; latency = when the SSE client read a delta - when the model server wrote
     it (both in this process, one clock).
  d. idle server memory: `podcode serve` started, a few GET requests, 2 s idle, then VmRSS and
     VmHWM from /proc/PID/status.

The model is an OpenAI chat-completions SSE server written here (http.server in a thread:
`data: {chunk}` frames, then `data: [DONE]`). Every process gets a scratch project, HOME, XDG
and PODCODE_{CONFIG,DATA}_DIR; the scratch user config names the server as the model
(`model = "scripted/bench"`, `[provider.scripted] base_url`), as
crates/agent/benches/loop_overhead.rs does. `read` needs no permission by default.

Both builds share this checkout's target dir (one target dir: dependencies compile once);
the baseline builds from a git worktree at target/bench-baseline/src and its binary is copied
to target/bench-baseline/podcode (reused while it is the revision's and newer than it). Cargo
names a workspace crate's artifacts by its place in the workspace, so a baseline build
replaces the current crates' artifacts and the current build after it recompiles them once
(~15 min release on a loaded 2-core machine). Pass --baseline-bin/--current-bin to skip
building. Prints a table with medians, p90s, the ratio
current/baseline and the noise (the spread between rounds). Asserts nothing.

Run: python3 bench/before_after.py [--baseline REV] [--rounds 15]
"""
import argparse, http.client, json, os, shutil, signal, statistics, subprocess, sys
import tempfile, threading, time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "before-after-bench-token"


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------- building

def git(*args, cwd=ROOT):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def cargo_build(cwd, env, locked):
    cmd = ["cargo", "build", "--release", "-p", "podcode"] + (["--locked"] if locked else [])
    log(f"  $ {' '.join(cmd)}   (in {cwd})")
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stderr=subprocess.PIPE, text=True)
    compiled = 0
    for line in proc.stderr:  # cargo's progress, condensed: workspace crates, every 50th other
        line = line.strip()
        compiled += line.startswith("Compiling")
        if line.startswith(("Compiling podcode", "Finished", "error")) or (
                line.startswith("Compiling") and compiled % 50 == 0):
            log(f"    [{compiled}] {line}")
    if proc.wait() != 0:
        sys.exit(f"cargo build failed in {cwd}")


def build(rev):
    target = ROOT / "target"
    env = dict(os.environ, CARGO_TARGET_DIR=str(target))
    sha = git("rev-parse", "--verify", rev + "^{commit}")
    base_dir = target / "bench-baseline"
    base_bin, stamp = base_dir / "podcode", base_dir / "REV"
    rev_time = int(git("show", "-s", "--format=%ct", sha))
    if (base_bin.exists() and stamp.exists() and stamp.read_text().strip() == sha
            and base_bin.stat().st_mtime > rev_time):
        log(f"baseline {sha[:9]}: reusing {base_bin}")
    else:
        src = base_dir / "src"
        if not src.exists():
            log(f"baseline {sha[:9]}: git worktree at {src}")
            base_dir.mkdir(parents=True, exist_ok=True)
            git("worktree", "add", "--detach", str(src), sha)
        else:
            git("checkout", "--detach", sha, cwd=src)
        log(f"baseline {sha[:9]}: building (release)")
        cargo_build(src, env, locked=True)
        shutil.copy2(target / "release" / "podcode", base_bin)
        stamp.write_text(sha + "\n")
    # Built last, so target/release/podcode is the current binary again; a fresh build is a
    # no-op (cargo decides).
    log("current checkout: building (release)")
    cargo_build(ROOT, env, locked=False)
    return base_bin, target / "release" / "podcode"


# ---------------------------------------------------------------- the scripted model

def text(s):
    return ("text", s)


def call(cid, name, args):
    return ("call", cid, name, json.dumps(args))


class Model:
    """Each POST …/chat/completions takes the next scripted reply (a list of items) and
    streams it as chat.completion.chunk frames; an empty script answers "ok"."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset([])
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # chunked responses, kept-alive connections
            disable_nagle_algorithm = True  # a paced delta must not wait for an ACK

            def log_message(self, *_):
                pass

            def parse_request(self):
                # The request line is in: it arrived now. Parsing its headers, reading its
                # body and what a subclass does with it before this class's do_POST (a
                # json.loads of the whole body) is the server's time, not the agent's.
                self.arrived_at = time.perf_counter()
                return super().parse_request()

            def do_POST(self):
                t = getattr(self, "arrived_at", None) or time.perf_counter()
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with model.lock:
                    model.arrivals.append(t)
                    reply = model.replies.popleft() if model.replies else [text("ok")]
                model.arrived.set()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for frame, mark in frames(reply):
                    data = frame.encode()
                    if mark:  # timed before the write: the reader may run before it returns
                        model.writes[mark] = time.perf_counter()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    if mark:
                        time.sleep(model.pace)
                self.wfile.write(b"0\r\n\r\n")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def reset(self, replies, pace=0.0):
        with self.lock:
            self.replies, self.pace = deque(replies), pace
            self.arrivals, self.writes = [], {}
            self.arrived = threading.Event()


def frames(reply):
    """(SSE frame, marker) pairs; a text item's marker is its text (timed when written)."""
    def chunk(delta, finish=None):
        c = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1700000000,
             "model": "bench", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(c)}\n\n"
    out = [(chunk({"role": "assistant", "content": ""}), None)]
    calls = 0
    for item in reply:
        if item[0] == "text":
            out.append((chunk({"content": item[1]}), item[1]))
        else:
            _, cid, name, args = item
            out.append((chunk({"tool_calls": [{"index": calls, "id": cid, "type": "function",
                                               "function": {"name": name, "arguments": args}}]}),
                        None))
            calls += 1
    out.append((chunk({}, "tool_calls" if calls else "stop"), None))
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    out.append((f"data: {json.dumps({'id': 'chatcmpl-bench', 'object': 'chat.completion.chunk', 'choices': [], 'usage': usage})}\n\n", None))
    out.append(("data: [DONE]\n\n", None))
    return out


# ---------------------------------------------------------------- scratch processes

class Scratch:
    """A project (repo/ with a .git marker and a small file), config, data, HOME and XDG."""

    def __init__(self, model):
        self.tmp = tempfile.TemporaryDirectory(prefix="podcode-bench-")
        d = Path(self.tmp.name)
        for sub in ["repo/.git", "config", "data", "home", "xdg/config", "xdg/data",
                    "xdg/cache", "xdg/state"]:
            (d / sub).mkdir(parents=True)
        (d / "config/config.toml").write_text(
            f'model = "scripted/bench"\n[provider.scripted]\nbase_url = "{model.url}"\n'
            '[provider.scripted.models."bench"]\ncontext = 128000\n')
        (d / "repo/a.txt").write_text("alpha\nbeta\ngamma\n" * 20)
        self.repo = d / "repo"
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(d / "home"),
                    "PODCODE_CONFIG_DIR": str(d / "config"), "PODCODE_DATA_DIR": str(d / "data"),
                    "XDG_CONFIG_HOME": str(d / "xdg/config"), "XDG_DATA_HOME": str(d / "xdg/data"),
                    "XDG_CACHE_HOME": str(d / "xdg/cache"), "XDG_STATE_HOME": str(d / "xdg/state"),
                    "NO_COLOR": "1", "PODCODE_SERVER_TOKEN": TOKEN}

    def spawn(self, binary, args, stdout=subprocess.DEVNULL):
        return subprocess.Popen([str(binary), *args], cwd=self.repo, env=self.env,
                                stdin=subprocess.DEVNULL, stdout=stdout,
                                stderr=subprocess.DEVNULL)

    def close(self):
        self.tmp.cleanup()


class Bin:
    """One binary and what its CLI offers (read from --help, so a different baseline adapts)."""

    def __init__(self, label, path):
        self.label, self.path = label, Path(path).resolve()
        helps = lambda *a: subprocess.run([str(self.path), *a, "--help"], capture_output=True,
                                          text=True).stdout
        run_help = helps("run")
        self.max_steps = "--max-steps" in run_help
        self.serve = "--port" in helps("serve")
        self.notes = []
        if not self.max_steps:
            self.notes.append("`run` has no --max-steps: the default step limit applies")
        if not self.serve:
            self.notes.append("no `podcode serve`: measures c and d skipped")


def run_args(binary, prompt, steps):
    return ["run", prompt] + (["--max-steps", str(steps)] if binary.max_steps else [])


def startup(model, binary):
    """a. spawn -> first request at the model server, in ms."""
    model.reset([[text("hi")]])
    s = Scratch(model)
    t0 = time.perf_counter()
    p = s.spawn(binary.path, run_args(binary, "hello", 5))
    got = model.arrived.wait(30)
    first = model.arrivals[0] if got else float("nan")
    p.wait(60)
    s.close()
    return (first - t0) * 1e3


def run_steps(model, binary, n):
    """Wall time (s) of a `podcode run` whose model asks for n `read` calls, then answers."""
    script = [[call(f"c{i}", "read", {"filePath": "a.txt", "offset": 1, "limit": 5})]
              for i in range(n)] + [[text("done")]]
    model.reset(script)
    s = Scratch(model)
    t0 = time.perf_counter()
    p = s.spawn(binary.path, run_args(binary, "read it", n + 10))
    code = p.wait(300)
    wall = time.perf_counter() - t0
    requests = len(model.arrivals)
    s.close()
    if code != 0 or requests != n + 1:
        log(f"  warning: {binary.label} run with {n} calls: exit {code}, {requests} requests")
    return wall


def per_call(model, binary, n=50):
    """b. (wall(n calls) - wall(0 calls)) / n, in ms."""
    return (run_steps(model, binary, n) - run_steps(model, binary, 0)) / n * 1e3


class Serve:
    """`podcode serve` in a scratch project; its URL from the first stdout line."""

    def __init__(self, model, binary):
        self.scratch = Scratch(model)
        self.proc = self.scratch.spawn(binary.path, ["serve"], stdout=subprocess.PIPE)
        line = self.proc.stdout.readline().decode()
        addr = line.strip().rsplit("http://", 1)[-1]
        self.host, self.port = addr.rsplit(":", 1)

    def conn(self):
        return http.client.HTTPConnection(self.host, int(self.port), timeout=60)

    def request(self, method, path, body=None):
        c = self.conn()
        headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
        c.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, data

    def close(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.scratch.close()


def sse_latency(model, binary, deltas, pace):
    """c. latencies (ms) of one streamed answer of `deltas` paced text deltas."""
    srv = Serve(model, binary)
    try:
        status, data = srv.request("POST", "/api/sessions", {})
        sid = json.loads(data)["id"]
        read, ready, done = [], threading.Event(), threading.Event()

        def reader():
            c = srv.conn()
            c.request("GET", f"/api/sessions/{sid}/events",
                      headers={"Authorization": f"Bearer {TOKEN}"})
            r, event = c.getresponse(), None
            while not done.is_set():
                line = r.readline()
                now = time.perf_counter()
                if not line:
                    break
                line = line.decode().rstrip("\r\n")
                if line.startswith(": ready"):
                    ready.set()
                elif line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event == "text_delta":
                    read.append((json.loads(line[6:]).get("text", ""), now))
                elif line.startswith("data: ") and event == "turn_finished":
                    done.set()
            c.close()

        th = threading.Thread(target=reader, daemon=True)
        th.start()
        ready.wait(5)  # `: ready` says the stream is subscribed; older servers: 5 s grace
        model.reset([[text(f"d{i} ") for i in range(deltas)]], pace=pace)
        srv.request("POST", f"/api/sessions/{sid}/prompt", {"text": "stream"})
        done.wait(60 + deltas * pace)
        lat = []
        for txt, t in read:  # a delta the engine merged counts once per piece in it
            for piece in txt.split():
                if piece + " " in model.writes:
                    lat.append((t - model.writes[piece + " "]) * 1e3)
        if len(lat) < deltas:
            log(f"  warning: {binary.label}: {len(lat)}/{deltas} deltas matched")
        return lat
    finally:
        srv.close()


def idle_memory(model, binary):
    """d. (VmRSS, VmHWM) in MiB of an idle `podcode serve` after a few GETs."""
    srv = Serve(model, binary)
    try:
        for path in ["/", "/openapi.json", "/api/sessions", "/api/info", "/api/agents"]:
            srv.request("GET", path)
        time.sleep(2)
        fields = {}
        for line in Path(f"/proc/{srv.proc.pid}/status").read_text().splitlines():
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                fields[k] = int(v.split()[0]) / 1024
        return fields["VmRSS"], fields["VmHWM"]
    finally:
        srv.close()


# ---------------------------------------------------------------- rounds and report

def alternate(name, rounds, bins, fn):
    """fn(binary) per binary per round, ABBA order; {label: [results]}."""
    out = {b.label: [] for b in bins}
    for i in range(rounds):
        for b in (bins if i % 2 == 0 else bins[::-1]):
            out[b.label].append(fn(b))
        log(f"  {name}: round {i + 1}/{rounds}")
    return out


def pct(v, p):
    s = sorted(v)
    return s[min(len(s) - 1, round((len(s) - 1) * p))]


def noise(v):
    """Spread between rounds: interquartile range / median."""
    m = statistics.median(v)
    return (pct(v, 0.75) - pct(v, 0.25)) / abs(m) if m else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", default="3b6b119", help="baseline git revision")
    ap.add_argument("--baseline-bin", help="use this binary, build nothing")
    ap.add_argument("--current-bin", help="use this binary, build nothing")
    ap.add_argument("--rounds", type=int, default=15, help="rounds for a, b and d")
    ap.add_argument("--calls", type=int, default=50, help="tool calls for b")
    ap.add_argument("--sse-rounds", type=int, default=5, help="served answers for c")
    ap.add_argument("--deltas", type=int, default=20, help="deltas per answer for c")
    ap.add_argument("--pace", type=float, default=0.02, help="seconds between deltas")
    a = ap.parse_args()
    if a.baseline_bin and a.current_bin:
        base, cur = a.baseline_bin, a.current_bin
    else:
        base, cur = build(a.baseline)
    bins = [Bin("baseline", base), Bin("current", cur)]
    for b in bins:
        log(f"{b.label}: {b.path}" + "".join(f"\n  note: {n}" for n in b.notes))
    model = Model()
    rows = []  # (measure, unit, {label: samples}, lower_is_better)
    log("a. `podcode run` -> first model request")
    rows.append(("a. run -> first request", "ms",
                 alternate("a", a.rounds, bins, lambda b: startup(model, b))))
    log(f"b. per-call overhead ({a.calls} `read` calls vs none)")
    rows.append((f"b. per tool call (N={a.calls})", "ms",
                 alternate("b", a.rounds, bins, lambda b: per_call(model, b, a.calls))))
    served = [b for b in bins if b.serve]
    if len(served) == 2:
        log(f"c. event -> SSE ({a.sse_rounds} answers x {a.deltas} deltas, {a.pace * 1e3:.0f} ms apart)")
        per_round = alternate("c", a.sse_rounds, bins,
                              lambda b: sse_latency(model, b, a.deltas, a.pace))
        flat = {k: [x for r in v for x in r] for k, v in per_round.items()}
        rows.append(("c. delta -> SSE client", "ms", flat))
        log("d. idle `podcode serve` memory")
        mem = alternate("d", a.rounds, bins, lambda b: idle_memory(model, b))
        rows.append(("d. idle serve VmRSS", "MiB", {k: [x[0] for x in v] for k, v in mem.items()}))
        rows.append(("d. idle serve VmHWM", "MiB", {k: [x[1] for x in v] for k, v in mem.items()}))
    else:
        log("c, d: skipped -- a binary has no `podcode serve` (see the notes above)")

    log("")
    log(f"{'measure':<28} {'baseline p50 (p90)':>20} {'current p50 (p90)':>20} {'ratio':>6}  noise b/c")
    for name, unit, s in rows:
        b, c = s["baseline"], s["current"]
        fmt = lambda v: f"{statistics.median(v):.2f} ({pct(v, 0.9):.2f}) {unit}"
        ratio = statistics.median(c) / statistics.median(b)
        log(f"{name:<28} {fmt(b):>20} {fmt(c):>20} {ratio:>6.2f}  "
            f"±{noise(b) * 50:.0f}% / ±{noise(c) * 50:.0f}%")
    log("noise: half the interquartile range between rounds (samples for c), over the median;"
        " a ratio within 1 ± noise is no change. Timings are printed, never asserted.")


if __name__ == "__main__":
    main()
