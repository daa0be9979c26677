#!/usr/bin/env python3
"""Regenerates crates/cli/symbol-order.txt: the functions podcode runs, in the order its
release build lays them out (see crates/cli/build.rs for why).

    PODCODE_KEEP_SYMBOLS=1 cargo build --release -p podcode
    python3 scripts/symbol-order.py [--binary target/release/podcode]
    cargo build --release -p podcode        # links with the new list, stripped

It runs the binary under valgrind's callgrind (`apt-get install valgrind`) through the
scenarios below, against bench/side_by_side.py's scripted model server in scratch projects,
and lists each function of the binary that ran: first those of `--version` (what every
process, the sandbox helper included, runs), then the new ones of each later scenario, each
scenario's sorted by name (so a regenerated list differs only where the code did). The
binary must keep its symbols and be built as the installed one otherwise (hence
PODCODE_KEEP_SYMBOLS, not the profile's `strip`, which renames every symbol). The names are
the linker's (mangled): the list fits the source it was made from and drifts as the code
changes (a missing name is skipped, an unlisted function goes after the listed ones, among
the cold code): regenerate it after changes on these paths.

Scenarios: `--version`; `run` with a text answer (launch); three `read` calls; six calls
of the bench's three opencode plugin tools (the Bun sidecar itself is not traced); write,
edit, grep, glob, list and bash calls (the sandbox helper traced too); `tools`; `tui` on a
pseudo-terminal through one prompt and its answer.
Exits 1 if a scenario's run failed.
"""
import argparse, collections, fcntl, glob, os, pty, re, select, shutil, signal, struct
import subprocess, sys, tempfile, termios, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import before_after as ba  # noqa: E402
import side_by_side as sbs  # noqa: E402

OUT = ROOT / "crates/cli/symbol-order.txt"


def callgrind(out_dir, name):
    return ["valgrind", "--tool=callgrind", "--compress-strings=no", "--demangle=no",
            "--trace-children=yes", "--trace-children-skip=*git*,*bun*,*node*,/bin/*,/usr/*,*sh",
            f"--callgrind-out-file={out_dir}/{name}.%p.out"]


def scenarios(binary, out_dir):
    """Runs each scenario under callgrind; the names sort in the order they matter."""
    class Traced(sbs.Agent):
        def argv(self, prompt, steps, yes):
            return callgrind(out_dir, self.name) + super().argv(prompt, steps, yes)

    model, fails = sbs.Model(), []

    def agent_run(name, prompt, script, plugins=False):
        agent = Traced("podcode", binary, False, sbs.MODULES)
        agent.name = name
        sbs.run(model, agent, prompt, script + [[ba.text("done")]], plugins, fails, name,
                sample=False)

    subprocess.run(callgrind(out_dir, "a_version") + [binary, "--version"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    agent_run("b_launch", "hello", [])
    read = {"filePath": "a.txt", "offset": 1, "limit": 5}
    agent_run("c_reads", "read a.txt", [[ba.call(f"r{i}", "read", read)] for i in range(3)])
    names = list(sbs.TOOLS)
    agent_run("d_plugins", "use the tools",
              [[ba.call(f"p{i}", names[i % 3], {"text": f"Text{i}"})] for i in range(6)], True)
    agent_run("e_tools", "work", [
        [ba.call("w", "write", {"filePath": "b.txt", "content": "one\ntwo\n"})],
        [ba.call("e", "edit", {"filePath": "b.txt", "oldString": "two", "newString": "2"})],
        [ba.call("g", "grep", {"pattern": "alpha"})],
        [ba.call("f", "glob", {"pattern": "*.txt"})],
        [ba.call("l", "list", {})],
        [ba.call("b", "bash", {"command": "echo hi", "description": "Says hi"})],
    ])
    s = ba.Scratch(model)
    try:
        subprocess.run(["git", "init", "-q", str(s.repo)], check=True)
        subprocess.run(callgrind(out_dir, "f_tools") + [binary, "tools"], cwd=s.repo,
                       env=s.env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        model.reset([[ba.text("hi")]])
        if not tui_turn(callgrind(out_dir, "g_tui") + [binary, "tui"], s, model):
            fails.append("g_tui: the TUI's turn did not reach the model")
    finally:
        s.close()
    return fails


def tui_turn(argv, s, model, limit=120):
    """`podcode tui` on a pseudo-terminal: waits for its first screen, sends a prompt, waits
    for the answer's request and the screen to settle, quits with ctrl-c twice."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.chdir(s.repo)
            os.execve(shutil.which(argv[0]), argv, dict(s.env, TERM="xterm-256color"))
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    end = time.time() + limit

    def quiet_for(seconds):
        last = time.time()
        while time.time() < end and time.time() - last < seconds:
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    if not os.read(fd, 65536):
                        return False
                except OSError:
                    return False
                last = time.time()
        return time.time() < end

    ok = quiet_for(3)
    os.write(fd, b"hello\r")
    while ok and time.time() < end and not model.arrivals:
        ok = quiet_for(0.5)
    reached = bool(model.arrivals)
    quiet_for(3)
    os.write(fd, b"\x03\x03")
    done = False
    while time.time() < end and not done:
        done = os.waitpid(pid, os.WNOHANG) != (0, 0)
        if not done:
            quiet_for(0.2)
    if not done:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
    os.close(fd)
    return reached


def executed(path, binary):
    """{function name: instructions} of `binary`'s functions that ran, in one callgrind
    output."""
    cost, fn = collections.Counter(), None
    ob = None
    for line in open(path, errors="replace"):
        if line.startswith("ob="):
            ob = line[3:].strip()
        elif line.startswith("fn="):
            # callgrind marks recursion depth as name'2
            fn = re.sub(r"'\d+$", "", line[3:].strip()) if ob == binary else None
        elif line.startswith(("cob=", "cfn=", "cfi=", "cfl=", "calls=")):
            continue
        elif fn and line[:1].isdigit():
            parts = line.split()
            if len(parts) >= 2:
                cost[fn] += int(parts[1])
    return cost


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=str(ROOT / "target/release/podcode"))
    binary = str(Path(ap.parse_args().binary).resolve())
    symbols = subprocess.run(["nm", binary], capture_output=True, text=True).stdout
    known = {p[2] for p in (line.split() for line in symbols.splitlines())
             if len(p) == 3 and p[1] in "tTwW"}
    if not known:
        sys.exit(f"{binary} has no symbols: build it with PODCODE_KEEP_SYMBOLS=1")
    with tempfile.TemporaryDirectory(prefix="podcode-symbol-order-") as out_dir:
        fails = scenarios(binary, out_dir)
        order, seen = [], set()
        for path in sorted(glob.glob(f"{out_dir}/*.out")):
            cost = executed(path, binary)
            new = sorted(f for f in cost if f in known and f not in seen)
            seen.update(new)
            order.extend(new)
    OUT.write_text("".join(f"{name}\n" for name in order))
    print(f"{OUT.relative_to(ROOT)}: {len(order)} functions")
    for fail in fails:
        print("failed:", fail, file=sys.stderr)
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
