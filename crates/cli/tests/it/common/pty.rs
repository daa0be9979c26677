//! The UI and `podcode run` in a pseudo-terminal (python3's `pty`): keys are typed as a user would, each
//! after the text it waits for appeared on the screen. Every wait is bounded far above what
//! a slow, busy machine needs (a stuck UI fails the test; a slow one does not).

use std::io::BufRead;
use std::process::{Command, Stdio};

use super::{Env, text};

/// How long one step waits for its text, and how long a driven program may take to exit.
const STEP_LIMIT_S: u32 = 120;

/// Drives `podcode ARGS` through `steps`: each is (text to wait for, keys to send then).
/// A wait matches text newly drawn since the previous step or on the screen as it is now
/// (a 30x100 grid kept from the cursor moves). Returns everything the UI drew, escape
/// sequences and spaces removed, and whether each wait matched (plus, last, whether the
/// terminal was restored: alternate screen left).
pub fn drive(env: &Env, args: &[&str], steps: &[(&str, &str)]) -> (String, Vec<bool>) {
    drive_with(env, args, steps, |_| {})
}

/// [`drive`], calling `matched(i)` as soon as step `i`'s text appeared, before its keys are
/// sent (a test opens a held reply there, say).
pub fn drive_with(
    env: &Env,
    args: &[&str],
    steps: &[(&str, &str)],
    mut matched: impl FnMut(usize),
) -> (String, Vec<bool>) {
    let script = r#"
import os, pty, sys, time, select, re, json, fcntl, termios, struct
steps = json.loads(sys.argv[1]); args = sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(args[0], args)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
ansi = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]")
csi = re.compile(rb"\x1b\[([0-9;?]*)([A-Za-z])|\x1b[()][A-Z0-9]|\x1b[=>]")
ROWS, COLS = 30, 100
grid = [[" "] * COLS for _ in range(ROWS)]
cur = [0, 0]
out, plain, parsed, matched = b"", "", 0, []
def feed():
    # A small terminal: cursor moves, clears and text, enough to know what the screen
    # shows now (the diff-drawing UI only rewrites the cells that changed).
    global parsed
    i, s = parsed, out
    while i < len(s):
        if s[i] == 0x1b:
            m = csi.match(s, i)
            if not m:
                if len(s) - i < 32:
                    break
                i += 1
                continue
            code, params = m.group(2), (m.group(1) or b"")
            if code == b"H":
                p = [int(x) if x else 1 for x in params.split(b";")] + [1, 1]
                cur[0], cur[1] = p[0] - 1, p[1] - 1
            elif code == b"J" and params in (b"2", b"3"):
                for row in grid:
                    row[:] = [" "] * COLS
            elif code == b"K" and 0 <= cur[0] < ROWS:
                grid[cur[0]][cur[1]:] = [" "] * (COLS - cur[1])
            i = m.end()
            continue
        b = s[i]
        n = 1 if b < 0x80 else 2 if b >> 5 == 6 else 3 if b >> 4 == 14 else 4
        if i + n > len(s):
            break
        ch = s[i:i + n].decode(errors="replace")
        i += n
        if ch == "\r":
            cur[1] = 0
        elif ch == "\n":
            cur[0] += 1
        elif ch >= " ":
            if 0 <= cur[0] < ROWS and 0 <= cur[1] < COLS:
                grid[cur[0]][cur[1]] = ch
            cur[1] += 1
    parsed = i
def now():
    return re.sub(r"\s", "", "".join("".join(r) for r in grid))
def pump(t):
    global out, plain
    r, _, _ = select.select([fd], [], [], t)
    if r:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return False
        if not chunk:
            return False
        out += chunk
        feed()
        # Everything ever drawn, for assertions on text that scrolled away.
        plain = re.sub(r"\s", "", ansi.sub(b"", out).decode(errors="replace"))
    return True
alive = True
limit = int(os.environ["PTY_STEP_LIMIT_S"])
for step, (wait_for, keys) in enumerate(steps):
    if matched and not matched[-1]:
        # A step that never came fails the test: the rest need not wait too.
        matched.append(False)
        continue
    deadline, seen_at = time.time() + limit, len(plain)
    ok = False
    while alive and time.time() < deadline:
        want = wait_for.replace(" ", "")
        if want in plain[seen_at - 200 if seen_at > 200 else 0:] or want in now():
            ok = True
            break
        alive = pump(0.1)
    matched.append(ok)
    if ok:
        print("matched", step, flush=True)
    time.sleep(0.3)
    os.write(fd, keys.encode())
end = time.time() + (limit if all(matched) else 1)
while alive and time.time() < end:
    alive = pump(0.1)
    try:
        p, _ = os.waitpid(pid, os.WNOHANG)
        if p:
            break
    except ChildProcessError:
        break
# The child may have exited with output still unread: read it to the end (bounded).
drain_end = time.time() + 5
while alive and time.time() < drain_end:
    alive = pump(0.1)
# Leaving the alternate screen is the last thing a clean exit writes.
matched.append(b"\x1b[?1049l" in out)
try:
    os.kill(pid, 9)
except ProcessLookupError:
    pass
print(json.dumps({"screen": plain, "matched": matched}), flush=True)
"#;
    let mut child = python(&env.cmd(&[]), script, steps)
        .arg(env!("CARGO_BIN_EXE_podcode"))
        .args(args)
        .env("TERM", "xterm-256color")
        .env("PTY_STEP_LIMIT_S", STEP_LIMIT_S.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Progress lines (`matched N`), then the result as one JSON line.
    let mut last = String::new();
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        match line.strip_prefix("matched ") {
            Some(step) => matched(step.parse().unwrap()),
            None => last = line,
        }
    }
    let out = child.wait_with_output().unwrap();
    let v: serde_json::Value = serde_json::from_str(&last)
        .unwrap_or_else(|e| panic!("{e}: {last}\n{}", text(&out.stderr)));
    let matched = v["matched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_bool().unwrap())
        .collect();
    (v["screen"].as_str().unwrap().to_string(), matched)
}

/// Runs `podcode` on a pseudo-terminal, answering each prompt (`> `, then the feedback
/// question) with the next answer; returns everything the terminal showed.
pub fn run_in_pty(env: &Env, args: &[&str], answers: &[&str]) -> String {
    let prompts = ["> ", "feedback for the model: "];
    let steps: Vec<(&str, &str)> = answers
        .iter()
        .enumerate()
        .map(|(i, a)| (prompts[i.min(1)], *a))
        .collect();
    answer_in_pty(&env.cmd(&[]), args, &steps)
}

/// Runs the podcode binary with `base`'s environment and folder on a pseudo-terminal; each
/// step is (a Python regular expression for the prompt, the line to answer it with), in
/// order. Returns everything the terminal showed.
pub fn answer_in_pty(base: &Command, args: &[&str], steps: &[(&str, &str)]) -> String {
    let script = r#"
import os, pty, sys, time, select, re, json
steps, limit, args = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(args[0], args)
out, seen, pos, deadline = b"", 0, 0, time.time() + limit
while time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    if seen < len(steps):
        m = re.compile(steps[seen][0].encode()).search(out, pos)
        if m:
            os.write(fd, (steps[seen][1] + "\n").encode())
            pos, seen = m.end(), seen + 1
if time.time() >= deadline:
    os.kill(pid, 9)
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
"#;
    let out = python(base, script, steps)
        // The whole conversation, bounded far above what a slow, busy machine needs.
        .arg((STEP_LIMIT_S * 3).to_string())
        .arg(env!("CARGO_BIN_EXE_podcode"))
        .args(args)
        .output()
        .unwrap();
    text(&out.stdout)
}

/// `python3 -c SCRIPT STEPS-AS-JSON`, in `base`'s folder with `base`'s environment.
fn python(base: &Command, script: &str, steps: &[(&str, &str)]) -> Command {
    let steps: Vec<[&str; 2]> = steps.iter().map(|(a, b)| [*a, *b]).collect();
    let mut c = Command::new("python3");
    c.arg("-c")
        .arg(script)
        .arg(serde_json::to_string(&steps).unwrap())
        .envs(
            base.get_envs()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
        );
    if let Some(dir) = base.get_current_dir() {
        c.current_dir(dir);
    }
    c
}
