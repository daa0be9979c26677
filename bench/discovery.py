#!/usr/bin/env python3
"""What discovering 200 skills and 200 custom commands adds to `podcode run`'s first request.

Issue requirement: "discovery of 200 skills and 200 commands adds < 5 ms to `podcode run`'s
first request". One binary, two workspaces, measured alternately round by round (ABBA, so
the load of a busy machine hits both alike):

  A. baseline: a git repository holding the same 400 files as B, in a `fixtures/` folder
     nothing scans (so `git status`, which the system prompt runs, has as much to check);
  B. the same plus 200 skills -- 100 in `.claude/skills/<name>/`, 50 in `.opencode/skills/`,
     50 grouped under `.agents/skills/group/<name>/`; each SKILL.md with front matter `name`
     (= its folder) and `description`, and a 1-2 KB body -- and 200 command files in
     `.podcode/commands/` (120 at the top, 80 in `team/` and `ops/deploy/`), each with front
     matter and a template. Everything is committed and dated an hour back, so `git status`
     (which the system prompt runs) sees a clean tree in both, as in a checkout.

The two repositories are built once; every run gets a fresh config, data dir, HOME and XDG
(bench/before_after.py's Scratch) and works in one of them. Measure: spawn `podcode run
hello` and time until the scripted model server receives the first request -- before_after's
measure a and its scripted OpenAI-style SSE server, imported. Every B run checks that the
request's `tools` hold a `skill` tool listing the 200 skills (every A run, that there is
none), and `podcode commands` runs once in B to list the 200 commands: so the figure is known
to include discovery. Prints p50/p90 of each, B-A with its noise and the verdict against the
5 ms target; exits 1 only when a check fails.

Run: python3 bench/discovery.py [--bin PATH] [--rounds 15]
     (without --bin: `cargo build --release -p podcode`, then target/release/podcode)
"""
import argparse, json, os, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import before_after as ba  # noqa: E402

SKILLS, COMMANDS, TARGET_MS = 200, 200, 5.0
WORDS = ("build test release deploy review migrate lint format docs api schema cache queue "
         "logs metrics trace config secrets backup restore index search upload export").split()


class Model(ba.Model):
    """before_after's scripted server; also keeps each request's body. The body is copied as
    the handler reads it, so the arrival time it records (before the read) is unchanged."""

    def __init__(self):
        super().__init__()
        model, base = self, self.server.RequestHandlerClass

        class Tee:
            def __init__(self, f):
                self.f = f

            def read(self, n=-1):
                data = self.f.read(n)
                model.bodies.append(data)
                return data

        class Handler(base):
            def do_POST(self):
                self.rfile, rfile = Tee(self.rfile), self.rfile
                try:
                    super().do_POST()
                finally:
                    self.rfile = rfile

        self.server.RequestHandlerClass = Handler

    def reset(self, replies, pace=0.0):
        super().reset(replies, pace)
        self.bodies = []


def words(i, n):
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n))


def skill_md(name, i):
    body = [f"# {name}", "", f"Use this skill for {words(i, 6)} work in this repository.", ""]
    step = 1
    while sum(len(l) + 1 for l in body) < 1000 + (i * 37) % 1000:  # a 1-2 KB body
        body.append(f"{step}. Check the {words(i + step, 4)} step, then run `make "
                    f"{WORDS[(i + step) % len(WORDS)]}` and read its output before going on.")
        step += 1
    return (f"---\nname: {name}\ndescription: Use when the task is about {words(i, 5)}; "
            f"covers checks, commands and pitfalls (skill {i}).\nlicense: MIT\n---\n\n"
            + "\n".join(body) + "\n")


def command_md(i):
    return (f"---\ndescription: Runs the {words(i, 3)} routine (command {i})\n"
            f"argument-hint: <target>\n---\n\nDo the {words(i, 3)} routine for $ARGUMENTS.\n"
            f"Look at the files involved first, then report what changed in a short list.\n")


def populate(repo, scanned):
    """The 200 skills and the 200 commands: where Podcode finds them (B), or the same files
    under `fixtures/`, where nothing looks (A)."""
    base = repo if scanned else repo / "fixtures"
    places = ([".claude/skills"] * 100 + [".opencode/skills"] * 50
              + [".agents/skills/group"] * 50)
    for i, place in enumerate(places):
        name = f"{WORDS[i % len(WORDS)]}-skill-{i:03d}"
        d = base / place / name
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(skill_md(name, i))
    for i in range(COMMANDS):
        sub = "" if i < 120 else "team/" if i < 170 else "ops/deploy/"
        f = base / ".podcode/commands" / sub / f"bench-{WORDS[i % len(WORDS)]}-{i:03d}.md"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(command_md(i))


def repository(model, extra):
    """A before_after Scratch whose repo/ is made a git repository with everything committed
    (the 400 files where they are found when `extra`, else under `fixtures/`); built once,
    before the rounds."""
    s = ba.Scratch(model)
    populate(s.repo, extra)
    # Files an hour old, as a checkout's are: git takes files written in the second of its
    # index as "racily clean" and would re-read all 400 at every `git status`.
    old = time.time() - 3600
    for f in s.repo.rglob("*"):
        os.utime(f, (old, old))
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com",
           "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run(git + args, cwd=s.repo, env=s.env, check=True, stdout=subprocess.DEVNULL)
    return s


def workspace(repo):
    """before_after's Scratch (fresh config, data, HOME, XDG every run) working in `repo`,
    which stays: creating and deleting 1,000 files every round would leave the file system
    busy (inode allocation skips recently deleted inodes; writeback) during the timed runs."""

    class Scratch(ba.Scratch):
        def __init__(self, model):
            super().__init__(model)
            self.repo = repo

    return Scratch


def skill_count(body):
    """Skills listed by the `skill` tool in a request body; None when there is no such tool."""
    for tool in json.loads(body or b"{}").get("tools") or []:
        fn = tool.get("function", tool)
        if fn.get("name") == "skill":
            listed = fn.get("description", "").split("available_skills:", 1)[-1]
            return sum(line.startswith("- ") for line in listed.splitlines())
    return None


def measure(model, ws, failures):
    """One `podcode run` in a fresh workspace of kind `ws` (ms), its first request checked."""
    ba.Scratch = ws.scratch  # before_after.startup builds its workspace through this name
    try:
        ms = ba.startup(model, ws)
    finally:
        ba.Scratch = BaseScratch
    count = skill_count(b"".join(model.bodies[:1]))
    if count != ws.skills:
        failures.append(f"{ws.label}: `skill` tool lists {count} skills, expected {ws.skills}")
    return ms


def commands_listed(model, ws):
    """How many commands `podcode commands` lists in workspace `ws`."""
    s = ws.scratch(model)
    try:
        out = subprocess.run([str(ws.path), "commands"], cwd=s.repo, env=s.env,
                             capture_output=True, text=True, timeout=60).stdout
    finally:
        s.close()
    head = next((l for l in out.splitlines() if l.startswith("commands (")), "commands (0):")
    return int(head.split("(")[1].split(")")[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", help="the podcode binary (default: build the release one)")
    ap.add_argument("--rounds", type=int, default=15, help="rounds (one run of A and B each)")
    a = ap.parse_args()
    if a.bin:
        binary = Path(a.bin).resolve()
    else:
        target = ba.ROOT / "target"
        ba.cargo_build(ba.ROOT, dict(os.environ, CARGO_TARGET_DIR=str(target)), locked=False)
        binary = target / "release" / "podcode"
    model = Model()
    wss, repos = [], []
    for label, extra in (("A", False), ("B", True)):
        repos.append(repository(model, extra))
        ws = ba.Bin(label, binary)
        ws.scratch, ws.skills = workspace(repos[-1].repo), (SKILLS if extra else None)
        wss.append(ws)
    ba.log(f"binary: {binary}\nload average: {os.getloadavg()[0]:.2f} (1 min), "
           f"{os.cpu_count()} CPUs")
    failures = []
    n = commands_listed(model, wss[1])
    if n != COMMANDS:
        failures.append(f"B: `podcode commands` lists {n} commands, expected {COMMANDS}")
    ba.log(f"`podcode run` -> first model request, A (no skills) / B ({SKILLS} skills, "
           f"{COMMANDS} commands), {a.rounds} rounds ABBA")
    try:
        res = ba.alternate("run", a.rounds, wss, lambda ws: measure(model, ws, failures))
    finally:
        for r in repos:
            r.close()
    A, B = res["A"], res["B"]
    half_iqr = lambda v: (ba.pct(v, 0.75) - ba.pct(v, 0.25)) / 2
    diffs = [b - x for x, b in zip(A, B)]  # per round: the pair ran back to back
    delta = statistics.median(B) - statistics.median(A)
    ba.log(f"load average after: {os.getloadavg()[0]:.2f}\n")
    for label, v in (("A. no skills or commands", A), (f"B. {SKILLS} skills + {COMMANDS} commands", B)):
        ba.log(f"{label:<34} p50 {statistics.median(v):6.2f} ms  p90 {ba.pct(v, 0.9):6.2f} ms"
               f"  noise ±{half_iqr(v):.2f} ms")
    ba.log(f"{'B - A (p50s)':<34} {delta:+.2f} ms; per-round B - A: median "
           f"{statistics.median(diffs):+.2f} ms, noise ±{half_iqr(diffs):.2f} ms")
    ba.log("noise: half the interquartile range between rounds.")
    if delta < TARGET_MS:
        ba.log(f"verdict: discovery adds {delta:+.2f} ms, within the < {TARGET_MS:.0f} ms target")
    else:
        ba.log(f"verdict: discovery adds {delta:+.2f} ms, OVER the < {TARGET_MS:.0f} ms target")
    if failures:
        ba.log(f"checks FAILED ({len(failures)}):\n  " + "\n  ".join(sorted(set(failures))))
        sys.exit(1)
    ba.log(f"checks: every B request offered `skill` listing {SKILLS} skills, no A request did;"
           f" `podcode commands` listed {COMMANDS} in B")


BaseScratch = ba.Scratch

if __name__ == "__main__":
    main()
