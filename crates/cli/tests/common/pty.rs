//! The UI and `podcode run` in a pseudo-terminal (python3's `pty`): keys are typed as a user would, each
//! after the text it waits for appeared on the screen.

use std::process::Command;

use super::{Env, text};

/// Drives `podcode ARGS` through `steps`: each is (text to wait for, keys to send then).
/// A wait matches text newly drawn since the previous step or on the screen as it is now
/// (a 30x100 grid kept from the cursor moves). Returns everything the UI drew, escape
/// sequences and spaces removed, and whether each wait matched (plus, last, whether the
/// terminal was restored: alternate screen left).
pub fn drive(env: &Env, args: &[&str], steps: &[(&str, &str)]) -> (String, Vec<bool>) {
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
for wait_for, keys in steps:
    deadline, seen_at = time.time() + 20, len(plain)
    ok = False
    while alive and time.time() < deadline:
        want = wait_for.replace(" ", "")
        if want in plain[seen_at - 200 if seen_at > 200 else 0:] or want in now():
            ok = True
            break
        alive = pump(0.1)
    matched.append(ok)
    time.sleep(0.3)
    os.write(fd, keys.encode())
end = time.time() + 10
while alive and time.time() < end:
    alive = pump(0.1)
    try:
        p, _ = os.waitpid(pid, os.WNOHANG)
        if p:
            break
    except ChildProcessError:
        break
# Leaving the alternate screen is the last thing a clean exit writes.
matched.append(b"\x1b[?1049l" in out)
sys.stdout.write(json.dumps({"screen": plain, "matched": matched}))
"#;
    let steps_json = serde_json::to_string(
        &steps
            .iter()
            .map(|(w, k)| vec![w.to_string(), k.to_string()])
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let cmd = env.cmd(&[]);
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(steps_json)
        .arg(env!("CARGO_BIN_EXE_podcode"))
        .args(args)
        .current_dir(env.repo())
        .envs(
            cmd.get_envs()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
        )
        .env("TERM", "xterm-256color")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&out.stdout), text(&out.stderr)));
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
    let script = r#"
import os, pty, sys, time, select
answers, args = sys.argv[1].split("\x1f"), sys.argv[2:]
prompts = [b"> ", b"feedback for the model: "]
pid, fd = pty.fork()
if pid == 0:
    os.execv(args[0], args)
out, seen, pos, deadline = b"", 0, 0, time.time() + 60
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
    if seen < len(answers):
        want = prompts[min(seen, 1)]
        at = out.find(want, pos)
        if at >= 0:
            os.write(fd, (answers[seen] + "\n").encode())
            pos, seen = at + len(want), seen + 1
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
"#;
    let mut full = vec![env!("CARGO_BIN_EXE_podcode").to_string()];
    full.extend(args.iter().map(|s| s.to_string()));
    let cmd = env.cmd(&[]);
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(answers.join("\x1f"))
        .args(&full)
        .current_dir(env.repo())
        .envs(
            cmd.get_envs()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
        )
        .output()
        .unwrap();
    text(&out.stdout)
}
