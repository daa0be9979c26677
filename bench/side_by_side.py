#!/usr/bin/env python3
"""opencode and Podcode side by side: launch, agent time per model call, memory, tool schemas.

opencode and Podcode binaries run interleaved (each measure agent by agent, the order reversed
every other round, so a busy machine's load hits all alike) against one scripted
OpenAI-compatible model server: before_after.py's, through lsp.py's subclass (bodies kept;
opencode's title requests, those without `tools`, answered apart, not counted). Every run has
a fresh scratch project (before_after's Scratch: own config, data dir, HOME, XDG; the repo
`git init`ed, holding a.txt). opencode gets the model as its only provider (opencode.json),
PWD, a dead `npm_config_registry` and OPENCODE_DISABLE_AUTOUPDATE=1, as
crates/cli/tests/it/opencode_crosscheck.rs runs it.

  1. launch -> first model request (ms): `podcode run hello --max-steps 5` / `opencode run
     hello`, from Popen to the first request with tools arriving at the model server. A
     fresh project each time: the agent's first run there (its data made, opencode's
     install, Podcode's store and sandbox probe). Then the same again in one kept project
     after a first run there (not counted): what every later run costs.
  2. agent time between model calls (ms): the model asks for 20 `read` calls (a.txt, offset 1,
     limit 5), one per reply, then answers; gaps from the end of each reply with a call to the
     arrival of the next request, pooled over the rounds.
  3. peak memory of the process tree (MiB), row 1's run: the tree under the spawned pid read
     from /proc every ~2 ms; the max of the summed VmRSS, and the sum of each pid's VmHWM
     (an upper bound). A child still sharing its parent's memory (spawned, not exec'd yet) is
     left out: its VmRSS is its parent's (Bun spawns so; counted, opencode's sum doubles).
  4. the same with 20 plugin tool calls: upper.ts, lower.ts, count.ts in .opencode/tools/
     (`@opencode-ai/plugin` linked from a copy of the cross-check's node_modules), called in
     turn 20 times, then an answer.
  5. `--version` peak RSS (MiB): GNU time's %M (/usr/bin/time).
  6. tool definitions in row 4's first request: bytes of `tools` as compact JSON; how many.

In rows 2 and 4 Podcode runs with `--yes` (it asks before a custom tool and, its doom-loop
check, before a 3rd identical call; opencode asks neither), in row 4 after `podcode trust`.
Every result of rows 2 and 4 is checked in the next request. Prints a Markdown table (median
(p90); ratios opencode/Podcode and each Podcode over the first) and the load average. Timings
are printed, never asserted; exits 1 when a run or a check failed.

The page cache is dropped first when run as root (a freshly copied binary's pages sit in the
cache differently and its RSS reads up to 0.8 MiB higher for the same code).

Run: python3 bench/side_by_side.py [--rounds 10] [--tool-rounds 5 (rows 2, 4, 6)]
       [--podcode LABEL=PATH ...] [--opencode PATH | --skip-opencode]
     e.g. --podcode base=/tmp/podcode-old --podcode cur=target/release/podcode
"""
import argparse, json, os, shutil, socket, statistics, subprocess, sys, tempfile, threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import before_after as ba  # noqa: E402
import lsp  # noqa: E402

MODULES = ba.ROOT / "crates/cli/tests/opencode-crosscheck/node_modules"
CALLS = 20
TOOLS = {  # name: (description, what execute returns, the expected result)
    "upper": ("Upper-cases the text", "a.text.toUpperCase()", str.upper),
    "lower": ("Lower-cases the text", "a.text.toLowerCase()", str.lower),
    "count": ("Counts the characters", "`count=${a.text.length}`", lambda s: f"count={len(s)}"),
}
TOOL_TS = """import {{ tool }} from "@opencode-ai/plugin"

export default tool({{
  description: "{0}", args: {{ text: tool.schema.string().describe("The text") }},
  async execute(a) {{ return {1} }},
}})
"""


class Model(lsp.Model):
    """lsp.py's server; also `ends`: when each counted reply's last frame was written (taken
    before the write, so the next request cannot arrive before it). The socket reader lsp's
    handler swaps out is put back, so a client's connection stays usable."""

    def __init__(self):
        super().__init__()
        model, base = self, self.server.RequestHandlerClass

        class Stamp:
            def __init__(self, f):
                self.f, self.t, self.flush = f, None, f.flush

            def write(self, data):
                self.t = time.perf_counter()
                return self.f.write(data)

        class Handler(base):
            def do_POST(self):
                rfile, wfile, n = self.rfile, self.wfile, len(model.arrivals)
                self.wfile = stamp = Stamp(wfile)
                try:
                    super().do_POST()
                finally:
                    self.rfile, self.wfile = rfile, wfile
                if len(model.arrivals) > n:
                    model.ends.append(stamp.t)

        self.server.RequestHandlerClass = Handler

    def reset(self, replies, pace=0.0):
        super().reset(replies, pace)
        self.ends = []


def children(pid):
    """The pids whose parent is pid (/proc/PID/task/*/children: no walk of all of /proc)."""
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            out += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    except OSError:
        pass
    return out


def tree_mem(root):
    """{pid: (VmRSS, VmHWM) KiB} of root and the processes under it, walked down from root,
    without a child whose stack start (/proc/PID/stat) is its parent's: one sharing its
    parent's memory, not exec'd yet. stat is read before status, so an exec between the two
    reads loses that child a sample, never counts its parent twice."""
    def stack(pid):
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[25]
        except (OSError, IndexError):
            return None

    mem, todo = {}, [(root, None)]
    while todo:
        pid, parent_stack = todo.pop()
        own = stack(pid)
        if own is None:
            continue
        if pid == root or own != parent_stack:
            try:
                f = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text()
                         .splitlines() if line.startswith(("VmRSS:", "VmHWM:")))
                mem[pid] = (int(f["VmRSS"].split()[0]), int(f["VmHWM"].split()[0]))
            except (OSError, KeyError):  # gone, or a zombie
                pass
        todo += [(c, own) for c in children(pid)]
    return mem


class Sampler(threading.Thread):
    """tree_mem(pid) every ~2 ms until stop(): (peak summed VmRSS, sum of VmHWMs) in MiB.
    Podcode's runs last ~15 ms: a coarser sampling missed its peak."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.hwm, self.done = pid, 0, {}, threading.Event()
        self.start()

    def run(self):
        while not self.done.is_set():
            m = tree_mem(self.pid)
            self.peak = max(self.peak, sum(r for r, _ in m.values()))
            for p, (_, h) in m.items():
                self.hwm[p] = max(self.hwm.get(p, 0), h)
            self.done.wait(0.002)

    def stop(self):
        self.done.set(), self.join()
        return self.peak / 1024, sum(self.hwm.values()) / 1024


def drop_page_cache():
    """Empties the page cache (root only), so every binary's pages come from the disk alike:
    a binary copied or built moments ago sits in the cache in other-sized pieces than one read
    back from the disk, and its peak RSS differs by up to 0.8 MiB for the same code."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return "page cache dropped first"
    except OSError:
        return "page cache NOT dropped (not root): compare binaries read from the disk alike"


def dead_registry():
    with socket.create_server(("127.0.0.1", 0)) as s:  # closed: nothing listens there
        return f"http://127.0.0.1:{s.getsockname()[1]}/"


class Agent:
    """opencode or a Podcode binary: prepares a scratch project, and its `run` command."""

    def __init__(self, label, path, opencode, modules):
        self.label, self.path, self.opencode, self.modules = label, str(path), opencode, modules

    def prepare(self, s, model, plugins):
        subprocess.run(["git", "init", "-q", str(s.repo)], check=True)
        if plugins:
            (s.repo / ".opencode/tools").mkdir(parents=True)
            for name, (desc, expr, _) in TOOLS.items():
                (s.repo / f".opencode/tools/{name}.ts").write_text(TOOL_TS.format(desc, expr))
            # A link per package: a linked node_modules opencode's failed install removes.
            (s.repo / ".opencode/node_modules").mkdir()
            for m in self.modules.iterdir():
                (s.repo / ".opencode/node_modules" / m.name).symlink_to(m)
        if self.opencode:
            s.env = dict(s.env, PWD=str(s.repo), OPENCODE_DISABLE_AUTOUPDATE="1",
                         npm_config_registry=dead_registry(), npm_config_fetch_retries="0")
            (s.repo / "opencode.json").write_text(json.dumps({
                "$schema": "https://opencode.ai/config.json", "model": "scripted/bench",
                "provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                                          "options": {"baseURL": model.url, "apiKey": "bench"},
                                          "models": {"bench": {"name": "bench"}}}}}))
        elif plugins:
            subprocess.run([self.path, "trust"], cwd=s.repo, env=s.env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def argv(self, prompt, steps, yes):
        return [self.path, "run", prompt] + ([] if self.opencode else
                                             ["--max-steps", str(steps)] + ["--yes"] * yes)


def run(model, agent, prompt, script, plugins, fails, what, sample=True, kept=None):
    """One `run` against `script`: (ms to the first request, ms from each reply to the next
    request, (peak RSS, sum of VmHWM) in MiB if sampled, request bodies); None if it failed.
    In the Scratch `kept` when given (prepared once, left for the caller to close)."""
    model.reset(script)
    s = kept or ba.Scratch(model)
    try:
        if not getattr(s, "prepared", False):
            agent.prepare(s, model, plugins)
            s.prepared = kept is not None
        t0 = time.perf_counter()
        p = subprocess.Popen(agent.argv(prompt, len(script) + 5, len(script) > 1), cwd=s.repo,
                             env=s.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        sampler = Sampler(p.pid) if sample else None
        try:
            err = p.communicate(timeout=300)[1].decode(errors="replace")
        except subprocess.TimeoutExpired:
            p.kill()
            err = p.communicate()[1].decode(errors="replace") + "\n(killed after 300 s)"
        mem = sampler.stop() if sample else None
    finally:
        if kept is None:
            s.close()
    arrivals, ends = list(model.arrivals), list(model.ends)
    if p.returncode != 0 or len(arrivals) != len(script):
        fails.append(f"{agent.label} {what}: exit {p.returncode}, {len(arrivals)} requests of "
                     f"{len(script)}; stderr ends:\n    " + "\n    ".join(err.splitlines()[-8:]))
        return None
    gaps = [(b - e) * 1e3 for e, b in zip(ends, arrivals[1:])]
    return (arrivals[0] - t0) * 1e3, gaps, mem, [json.loads(b) for b in model.bodies]


def check(agent, what, bodies, expected, fails):
    """Each request after the first carries the expected text in its last tool message."""
    for i, (body, want) in enumerate(zip(bodies[1:], expected)):
        got = (lsp.tool_results(json.dumps(body)) or ["(no tool message)"])[-1]
        got = got if isinstance(got, str) else "".join(p.get("text", "") for p in got)
        if want not in got:
            fails.append(f"{agent.label} {what}: result {i + 1} lacks {want!r}: {got[:200]!r}")
            return False
    return True


def version_rss(agent, model):
    """GNU time's %M: ru_maxrss from os.wait4 on our own child counts the Python fork's pages
    before exec (26 MiB for a binary whose own peak is 8)."""
    s = ba.Scratch(model)
    try:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", agent.path, "--version"], cwd=s.repo,
                           env=s.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    finally:
        s.close()
    return [int(p.stderr.split()[-1]) / 1024] if p.returncode == 0 else []


def jobs(model, fails, res):
    """(every round's measures, the tool rows' measures: functions of the agent; a function
    closing the projects kept for row 1's second line)."""
    def add(x, row, v):
        res[row][x.label].extend(v if isinstance(v, list) else [v])

    def launch(x):
        r = run(model, x, "hello", [[ba.text("hi")]], False, fails, "launch")
        if r:
            add(x, "launch", r[0]), add(x, "rss0", r[2][0]), add(x, "hwm0", r[2][1])

    def launch_again(x):
        hi = [[ba.text("hi")]]
        if x.label not in kept:
            kept[x.label] = ba.Scratch(model)
            run(model, x, "hello", hi, False, fails, "first run", sample=False, kept=kept[x.label])
        r = run(model, x, "hello", hi, False, fails, "launch again", sample=False,
                kept=kept[x.label])
        if r:
            add(x, "launch2", r[0])

    def reads(x):
        script = [[ba.call(f"r{i}", "read", {"filePath": "a.txt", "offset": 1, "limit": 5})]
                  for i in range(CALLS)] + [[ba.text("done")]]
        r = run(model, x, "read a.txt", script, False, fails, "20 reads", sample=False)
        if r and check(x, "20 reads", r[3], ["alpha"] * CALLS, fails):
            add(x, "gap", r[1])

    def plugins(x):
        calls = [(list(TOOLS)[i % 3], f"Bench{i:02d}Text") for i in range(CALLS)]
        script = [[ba.call(f"p{i}", n, {"text": t})] for i, (n, t) in enumerate(calls)]
        r = run(model, x, "use the tools", script + [[ba.text("done")]], True, fails,
                "20 plugin calls")
        if not r:
            return
        if check(x, "20 plugin calls", r[3], [TOOLS[n][2](t) for n, t in calls], fails):
            add(x, "rss20", r[2][0]), add(x, "hwm20", r[2][1])
        tools = r[3][0].get("tools") or []
        add(x, "tool_bytes", len(json.dumps(tools, separators=(",", ":")).encode()))
        add(x, "tool_count", len(tools))
        if missing := set(TOOLS) - {t.get("function", t).get("name") for t in tools}:
            fails.append(f"{x.label}: the first request lacks the tools {missing}")

    kept = {}
    close = lambda: [k.close() for k in kept.values()]
    every = [launch, launch_again, lambda x: add(x, "version", version_rss(x, model))]
    return every, [reads, plugins], close


ROWS = [  # key, metric, decimals, p90 shown
    ("launch", "1. launch → first model request (ms)", 1, True),
    ("launch2", "1. same, a later run in that project (ms)", 1, True),
    ("gap", f"2. agent time between model calls, {CALLS} `read` calls (ms)", 2, True),
    ("rss0", "3. peak RSS of the process tree, no tool calls (MiB)", 1, True),
    ("hwm0", "3. same, sum of per-process VmHWM (upper bound, MiB)", 1, True),
    ("rss20", f"4. peak RSS of the process tree, {CALLS} plugin tool calls (MiB)", 1, True),
    ("hwm20", "4. same, sum of per-process VmHWM (upper bound, MiB)", 1, True),
    ("version", "5. `--version` peak RSS (MiB)", 1, True),
    ("tool_bytes", "6. tool definitions in the first request (bytes)", 0, False),
    ("tool_count", "6. tools in the first request", 0, False),
]


def table(res, agents):
    labels = [a.label for a in agents]
    pods = [a.label for a in agents if not a.opencode]
    ratios = [("opencode", p) for p in pods if "opencode" in labels] + [
        (p, pods[0]) for p in pods[1:]]
    med = lambda k, l: statistics.median(res[k][l]) if res[k][l] else None
    head = ["metric", *labels, *(f"{a}/{b}" for a, b in ratios)]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, name, dec, p90 in ROWS:
        cells = [name] + ["n/a" if not res[key][l] else f"{med(key, l):.{dec}f}"
                          + (f" ({ba.pct(res[key][l], 0.9):.{dec}f})" if p90 else "")
                          for l in labels]
        for a, b in ratios:
            x, y = med(key, a), med(key, b)
            cells.append(f"{x / y:.2f}×" if x is not None and y else "n/a")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=10, help="rounds of rows 1, 3 and 5")
    ap.add_argument("--tool-rounds", type=int, help="rounds of rows 2, 4, 6 (default 5 at most)")
    ap.add_argument("--podcode", action="append", metavar="LABEL=PATH",
                    help="a Podcode binary (repeatable; default podcode=target/release/podcode)")
    ap.add_argument("--opencode", default=str(lsp.OPENCODE), help="the opencode binary")
    ap.add_argument("--skip-opencode", action="store_true")
    a = ap.parse_args()
    tool_rounds = min(a.rounds, 5) if a.tool_rounds is None else a.tool_rounds
    if not a.skip_opencode and not Path(a.opencode).is_file():
        sys.exit(f"no opencode at {a.opencode} (`npm install --no-save` in {MODULES.parent}, "
                 "or --opencode PATH, or --skip-opencode)")
    # One copy of the cross-check's node_modules (opencode itself left out) for the plugin
    # projects to link to: what the agents do to it cannot reach the test's copy.
    tmp = tempfile.TemporaryDirectory(prefix="side-by-side-")
    modules = Path(tmp.name) / "node_modules"
    shutil.copytree(MODULES, modules, symlinks=True, ignore=lambda d, names: [
        n for n in names if Path(d) == MODULES and n.startswith(("opencode", "."))])
    agents = [] if a.skip_opencode else [Agent("opencode", Path(a.opencode).resolve(), True,
                                               modules)]
    for spec in a.podcode or [f"podcode={ba.ROOT / 'target/release/podcode'}"]:
        label, sep, path = spec.partition("=")
        if not sep or label in ("", "opencode") or not Path(path).is_file():
            sys.exit(f"--podcode {spec}: want LABEL=PATH, an existing binary, label not opencode")
        agents.append(Agent(label, Path(path).resolve(), False, modules))
    if len({x.label for x in agents}) < len(agents):
        sys.exit("--podcode labels must differ")
    model, fails = Model(), []
    res = {key: {x.label: [] for x in agents} for key, *_ in ROWS}
    every, tool_jobs, close_kept = jobs(model, fails, res)
    ba.log(drop_page_cache())
    ba.log("\n".join(f"{x.label}: {x.path}" for x in agents) + f"\n{a.rounds} rounds ({tool_rounds}"
           f" with rows 2, 4, 6), {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    try:
        for i in range(a.rounds):
            for job in every + (tool_jobs if i < tool_rounds else []):
                for x in (agents if i % 2 == 0 else agents[::-1]):
                    job(x)
            ba.log(f"  round {i + 1}/{a.rounds} done")
    finally:
        close_kept()
        tmp.cleanup()
    print("\n" + table(res, agents))
    print(f"\nmedian (p90); row 2 pools the {CALLS} gaps of every run. Load average after: "
          + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" (1, 5, 15 min), "
          f"{os.cpu_count()} CPUs.")
    if fails:
        print(f"\n{len(fails)} runs or checks FAILED:\n  " + "\n  ".join(fails))
        sys.exit(1)
    print(f"checks passed: every `read` result and all {CALLS} plugin tool results came back "
          "in the request after them, for every agent and round.")


if __name__ == "__main__":
    main()
