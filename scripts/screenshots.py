#!/usr/bin/env python3
"""Regenerates the screenshots in docs/screenshots/ from the real podcode binary.

    python3 scripts/screenshots.py [--binary target/release/podcode] [--only tui|web]

What it does, all on this machine (127.0.0.1 only) and in temporary folders:

1. starts a scripted model server that speaks the OpenAI chat-completions SSE protocol and
   answers each request with the next reply of a fixed script (text and tool calls);
2. makes a small demo repository (`git init`) whose config picks that model;
3. drives `podcode tui` in a pseudo-terminal at 140x45 and 40x10 through one turn (a prompt,
   a `read`, a `write` that asks permission, a streamed Markdown answer) and writes the
   screen at each stop as an SVG (docs/screenshots/tui-<cols>x<rows>-<scene>.svg);
4. starts `podcode serve` and drives the web page in headless Chromium (the Chrome DevTools
   protocol over a pipe, no extra package) at 1280x800 and 390x844 through the same turn,
   saving PNGs (docs/screenshots/web-<w>x<h>-<scene>.png).

It builds nothing: build the binary first (`cargo build -p podcode`). It needs python3 with
`pyte` (`pip install pyte`) for the terminal screens and Chromium (`apt-get install
chromium`) for the page. Every wait is bounded: a scene that never appears stops the script
with a message naming it and what the screen showed, and a non-zero exit status.
"""

import argparse
import base64
import html
import http.server
import json
import os
import pty
import re
import select
import shutil
import signal
import socketserver
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEP_LIMIT_S = 120  # far above what a slow, busy machine needs for one step
TUI_SIZES = [(140, 45), (40, 10)]
WEB_SIZES = [(1280, 800, False), (390, 844, True)]


class Failed(Exception):
    """A step that did not happen: the script stops with this message and exit status 1."""


def log(msg):
    print(f"[screenshots] {msg}", flush=True)


# --------------------------------------------------------------------------------------------
# The scripted model: POST /v1/chat/completions answers with the next reply, as SSE.
# --------------------------------------------------------------------------------------------

def text(t, pieces=None):
    """A text item streamed in word-sized chunks (or `pieces` given)."""
    return ("text", pieces or re.findall(r"\S+\s*|\s+", t))


def tool_call(call_id, name, args):
    return ("tool", call_id, name, json.dumps(args))


def reply(*items, usage=(1800, 120)):
    return {"items": list(items), "usage": usage}


class ScriptedModel:
    """A real HTTP server on 127.0.0.1 (a free port) that answers the OpenAI
    chat-completions protocol with the next scripted reply, streamed as SSE `data:` lines
    ending with `data: [DONE]`; a request past the end of the script gets HTTP 500."""

    def __init__(self, script, pace=0.03):
        self.script = list(script)
        self.pace = pace
        self.requests = []
        self.lock = threading.Lock()
        model = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                self.send_error(404, "scripted model: only POST /v1/chat/completions")

            def do_POST(self):
                n = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(n)
                if not self.path.endswith("/chat/completions"):
                    self.send_error(404, "scripted model: only POST /v1/chat/completions")
                    return
                with model.lock:
                    model.requests.append(json.loads(body or b"{}"))
                    seq = len(model.requests)
                    r = model.script.pop(0) if model.script else None
                if r is None:
                    msg = json.dumps({"error": {"message": f"scripted model: the script is exhausted (request #{seq})",
                                                "type": "scripted_error", "code": 500}}).encode()
                    self.send_response(500)
                    self.send_header("content-type", "application/json")
                    self.send_header("x-should-retry", "false")
                    self.send_header("content-length", str(len(msg)))
                    self.end_headers()
                    self.wfile.write(msg)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    for frame in model.frames(r, seq):
                        self.wfile.write(frame.encode())
                        self.wfile.flush()
                        time.sleep(model.pace)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.httpd = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def frames(self, r, seq):
        cid = f"chatcmpl-scripted-{seq}"

        def chunk(delta, finish=None, choices=True, usage=None):
            c = {"id": cid, "object": "chat.completion.chunk", "created": 1700000000,
                 "model": "test", "choices": []}
            if choices:
                c["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
            if usage:
                c["usage"] = usage
            return f"data: {json.dumps(c)}\n\n"

        yield chunk({"role": "assistant", "content": ""})
        index, has_calls = 0, False
        for item in r["items"]:
            if item[0] == "text":
                for piece in item[1]:
                    yield chunk({"content": piece})
            else:
                _, call_id, name, args = item
                has_calls = True
                yield chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                             "function": {"name": name, "arguments": ""}}]})
                third = max(1, len(args) // 3 + 1)
                for i in range(0, len(args), third):
                    yield chunk({"tool_calls": [{"index": index, "function": {"arguments": args[i:i + third]}}]})
                index += 1
        yield chunk({}, "tool_calls" if has_calls else "stop")
        inp, out = r["usage"]
        yield chunk(None, choices=False, usage={"prompt_tokens": inp, "completion_tokens": out,
                                                "total_tokens": inp + out})
        yield "data: [DONE]\n\n"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


# --------------------------------------------------------------------------------------------
# The scene: a demo repository and one turn.
# --------------------------------------------------------------------------------------------

PROMPT = "Add a --shout flag to src/greet.py and show me how to use it"

GREET_PY = '''"""Prints a greeting."""
import argparse


def greet(name: str) -> str:
    return f"Hello, {name}!"


def main() -> None:
    parser = argparse.ArgumentParser(description="Print a greeting.")
    parser.add_argument("--name", default="world", help="who to greet")
    args = parser.parse_args()
    print(greet(args.name))


if __name__ == "__main__":
    main()
'''

GREET_PY_NEW = GREET_PY.replace(
    '''    parser.add_argument("--name", default="world", help="who to greet")
    args = parser.parse_args()
    print(greet(args.name))''',
    '''    parser.add_argument("--name", default="world", help="who to greet")
    parser.add_argument("--shout", action="store_true", help="print it in capitals")
    args = parser.parse_args()
    line = greet(args.name)
    print(line.upper() if args.shout else line)''')

ANSWER = """Done: `src/greet.py` has a new `--shout` flag.

| Flag | Default | Effect |
| --- | --- | --- |
| `--name NAME` | `world` | who to greet |
| `--shout` | off | prints the greeting in capitals |

Try it:

```sh
python3 src/greet.py --name Ada --shout
```

It prints `HELLO, ADA!`; without `--shout` the output is unchanged."""

ANSWER_END = "the output is unchanged."


def scene_script():
    return [
        reply(text("I'll read the script first."),
              tool_call("call_read", "read", {"filePath": "src/greet.py"}), usage=(1650, 40)),
        reply(text("Adding the flag and keeping the default output as it was."),
              tool_call("call_write", "write", {"filePath": "src/greet.py", "content": GREET_PY_NEW}),
              usage=(2100, 260)),
        reply(text(ANSWER), usage=(2500, 150)),
    ]


class Workspace:
    """Temporary HOME, config and data folders, and the demo repository at
    $TMPDIR/podcode-screenshots/home/demo-app."""

    def __init__(self, model_url, keep=False):
        # A fixed place, so the path the UI shows is the same on every run.
        self.root = os.path.join(tempfile.gettempdir(), "podcode-screenshots")
        shutil.rmtree(self.root, ignore_errors=True)
        os.makedirs(self.root)
        self.keep = keep
        self.home = os.path.join(self.root, "home")
        self.repo = os.path.join(self.home, "demo-app")
        self.config = os.path.join(self.root, "config")
        self.data = os.path.join(self.root, "data")
        for d in (self.repo, self.config, self.data):
            os.makedirs(d)
        files = {
            "README.md": "# demo-app\n\nA tiny greeter used for the Podcode screenshots.\n\n"
                         "    python3 src/greet.py --name Ada\n",
            "src/greet.py": GREET_PY,
            "tests/test_greet.py": "from src.greet import greet\n\n\ndef test_greet():\n"
                                   "    assert greet(\"Ada\") == \"Hello, Ada!\"\n",
            ".podcode/config.toml": 'model = "scripted/test"\n',
        }
        for rel, body in files.items():
            p = os.path.join(self.repo, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(body)
        with open(os.path.join(self.config, "config.toml"), "w") as f:
            f.write(f'[provider.scripted]\nbase_url = "{model_url}"\n'
                    '[provider.scripted.models."test"]\ncontext = 128000\n')
        git_env = dict(self.env(), GIT_AUTHOR_NAME="Demo", GIT_AUTHOR_EMAIL="demo@example.invalid",
                       GIT_COMMITTER_NAME="Demo", GIT_COMMITTER_EMAIL="demo@example.invalid")
        for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "demo-app"]):
            r = subprocess.run(["git", *args], cwd=self.repo, env=git_env, capture_output=True, text=True)
            if r.returncode != 0:
                raise Failed(f"git {' '.join(args)} in the demo repository failed: {r.stderr.strip()}")

    def env(self):
        env = {k: v for k, v in os.environ.items()
               if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
                            "PODCODE_SERVER_TOKEN", "BROWSER")}
        env.update(HOME=self.home, PODCODE_CONFIG_DIR=self.config, PODCODE_DATA_DIR=self.data,
                   TERM="xterm-256color", COLORTERM="truecolor", LANG="C.UTF-8", LC_ALL="C.UTF-8",
                   TZ="UTC")
        return env

    def cleanup(self):
        if self.keep:
            log(f"kept {self.root}")
        else:
            shutil.rmtree(self.root, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# The TUI in a pseudo-terminal, read through pyte, written as SVG.
# --------------------------------------------------------------------------------------------

def make_screen(pyte, cols, rows, reply_to):
    class Screen(pyte.Screen):
        # pyte has no "dim" (SGR 2): it is kept in the otherwise unused `blink` field.
        def select_graphic_rendition(self, *attrs, private=False):
            if not attrs:
                return super().select_graphic_rendition()
            # In order: runs of other attributes go to pyte; 2 and 22 set and clear dim.
            # The parameters of a 256-colour or RGB colour (38;5;N, 38;2;R;G;B) are kept
            # whole: a 2 there is no "dim".
            run, i = [], 0
            while i < len(attrs):
                a = attrs[i]
                if a in (38, 48):
                    n = 3 if i + 1 < len(attrs) and attrs[i + 1] == 5 else 5
                    run.extend(attrs[i:i + n])
                    i += n
                    continue
                if a in (0, 2, 22):
                    if run:
                        super().select_graphic_rendition(*run)
                        run = []
                    if a == 0:
                        super().select_graphic_rendition(0)
                    else:
                        self.cursor.attrs = self.cursor.attrs._replace(
                            blink=(a == 2), bold=(False if a == 22 else self.cursor.attrs.bold))
                else:
                    run.append(a)
                i += 1
            if run:
                super().select_graphic_rendition(*run)

        def write_process_input(self, data):
            # Answers to the program's queries (cursor position, device attributes).
            reply_to(data.encode())

    return Screen(cols, rows)


class Terminal:
    """`podcode tui` on a pseudo-terminal of `cols` x `rows`, its output fed to pyte."""

    def __init__(self, pyte, binary, ws, cols, rows):
        self.cols, self.rows = cols, rows
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                os.chdir(ws.repo)
                os.execve(binary, [binary, "tui"], ws.env())
            finally:
                os._exit(127)
        import fcntl
        import termios
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.screen = make_screen(pyte, cols, rows, self.send_bytes)
        self.stream = pyte.ByteStream(self.screen)
        self.alive = True
        self.last_output = time.time()

    def send_bytes(self, b):
        try:
            os.write(self.fd, b)
        except OSError:
            pass

    def send(self, keys):
        self.send_bytes(keys.encode())

    def pump(self, t=0.1):
        if not self.alive:
            time.sleep(t)
            return
        r, _, _ = select.select([self.fd], [], [], t)
        if r:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                self.alive = False
                return
            self.stream.feed(chunk)
            self.last_output = time.time()

    def text(self):
        return "\n".join(self.screen.display)

    def has(self, want):
        flat = re.sub(r"\s", "", self.text())
        return re.sub(r"\s", "", want) in flat

    def wait(self, what, pred, limit=STEP_LIMIT_S):
        deadline = time.time() + limit
        while time.time() < deadline:
            if pred():
                return
            if not self.alive:
                raise Failed(f"podcode tui ({self.cols}x{self.rows}) exited while waiting for {what}; "
                             f"the screen:\n{self.text()}")
            self.pump(0.1)
        raise Failed(f"podcode tui ({self.cols}x{self.rows}): {what} never appeared within {limit} s; "
                     f"the screen:\n{self.text()}")

    def settle(self, quiet=1.0, limit=10.0):
        """Reads until the program drew nothing for `quiet` s (bounded: a spinner never rests)."""
        end = time.time() + limit
        while time.time() < end and time.time() - self.last_output < quiet:
            self.pump(0.05)
        while time.time() < end and self.alive:
            self.pump(0.05)
            if time.time() - self.last_output >= quiet:
                break

    def close(self):
        if self.alive:
            self.send("\x03\x03")
            end = time.time() + 10
            while self.alive and time.time() < end:
                self.pump(0.1)
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        os.close(self.fd)


# Colours: a dark terminal theme (the xterm palette for the 16 named colours).
DEFAULT_FG = "d4d4d4"
DEFAULT_BG = "1e1e1e"
NAMED = {
    "black": "000000", "red": "cd3131", "green": "0dbc79", "brown": "e5e510", "blue": "2472c8",
    "magenta": "bc3fbc", "cyan": "11a8cd", "white": "e5e5e5",
    "brightblack": "666666", "brightred": "f14c4c", "brightgreen": "23d18b", "brightbrown": "f5f543",
    "brightblue": "3b8eea", "brightmagenta": "d670d6", "bfightmagenta": "d670d6", "brightcyan": "29b8db",
    "brightwhite": "ffffff",
}


def colour(c, default):
    if c == "default":
        return default
    if c in NAMED:
        return NAMED[c]
    if re.fullmatch(r"[0-9a-fA-F]{6}", c):
        return c.lower()
    return default


def blend(a, b, t):
    pa = [int(a[i:i + 2], 16) for i in (0, 2, 4)]
    pb = [int(b[i:i + 2], 16) for i in (0, 2, 4)]
    return "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(pa, pb))


def svg_of(screen, title):
    """The pyte screen as an SVG: one rectangle per run of background, one <text> per run of
    same-styled characters, each stretched to exactly its cells (textLength) so the grid
    holds whatever monospace font the viewer has."""
    cw, ch, fs, pad = 8.4, 17.0, 14, 10
    cols, rows = screen.columns, screen.lines
    width, height = cols * cw + 2 * pad, rows * ch + 2 * pad
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.1f} {height:.1f}" role="img" aria-label="{html.escape(title)}">',
           f'<title>{html.escape(title)}</title>',
           f'<rect width="100%" height="100%" rx="6" fill="#{DEFAULT_BG}"/>',
           f'<g font-family="\'DejaVu Sans Mono\', Menlo, Consolas, \'Liberation Mono\', monospace" '
           f'font-size="{fs}px" xml:space="preserve">']
    cursor = None
    if not screen.cursor.hidden:
        cursor = (screen.cursor.y, screen.cursor.x)
    for y in range(rows):
        line = screen.buffer[y]
        cells = []
        x = 0
        while x < cols:
            c = line[x]
            fg, bg = colour(c.fg, DEFAULT_FG), colour(c.bg, DEFAULT_BG)
            if c.reverse:
                fg, bg = bg, fg
            if cursor == (y, x):
                fg, bg = bg, fg if fg != bg else DEFAULT_FG
            if c.blink:  # dim
                fg = blend(fg, bg, 0.45)
            data = c.data or " "
            wide = x + 1 < cols and line[x + 1].data == ""
            cells.append((x, 2 if wide else 1, data, fg, bg, c.bold, c.italics, c.underscore,
                          c.strikethrough))
            x += 2 if wide else 1
        # Backgrounds.
        i = 0
        while i < len(cells):
            j = i
            while j + 1 < len(cells) and cells[j + 1][4] == cells[i][4]:
                j += 1
            if cells[i][4] != DEFAULT_BG:
                x0 = cells[i][0]
                x1 = cells[j][0] + cells[j][1]
                out.append(f'<rect x="{pad + x0 * cw:.1f}" y="{pad + y * ch:.1f}" width="{(x1 - x0) * cw:.1f}" '
                           f'height="{ch:.1f}" fill="#{cells[i][4]}"/>')
            i = j + 1
        # Text: runs of one style; a wide character is a run of its own.
        i = 0
        while i < len(cells):
            style = cells[i][3:4] + cells[i][5:]
            j = i
            if cells[i][1] == 1:
                while (j + 1 < len(cells) and cells[j + 1][1] == 1
                       and cells[j + 1][3:4] + cells[j + 1][5:] == style):
                    j += 1
            run = "".join(c[2] for c in cells[i:j + 1])
            if run.strip():
                # Spaces at either end are left out: a stretched run must hold only what
                # the font draws, or the viewer's collapsing of them shifts the glyphs.
                lead = len(run) - len(run.lstrip(" "))
                run = run.strip(" ")
                x0 = cells[i + lead][0]
                n = sum(c[1] for c in cells[i + lead:i + lead + len(run)])
                attrs = [f'x="{pad + x0 * cw:.1f}"', f'y="{pad + y * ch + ch * 0.78:.1f}"',
                         f'fill="#{cells[i][3]}"']
                # Stretch only runs of ordinary characters: a lone symbol keeps its shape.
                if len(run) > 1:
                    attrs.append(f'textLength="{n * cw:.1f}" lengthAdjust="spacingAndGlyphs"')
                if cells[i][5]:
                    attrs.append('font-weight="bold"')
                if cells[i][6]:
                    attrs.append('font-style="italic"')
                deco = [d for d, on in (("underline", cells[i][7]), ("line-through", cells[i][8])) if on]
                if deco:
                    attrs.append(f'text-decoration="{" ".join(deco)}"')
                # No-break spaces: a viewer may collapse runs of plain ones.
                body = html.escape(run, quote=False).replace(" ", "\u00a0")
                out.append(f'<text {" ".join(attrs)}>{body}</text>')
            i = j + 1
    out.append("</g></svg>")
    return "\n".join(out) + "\n"


def write_file(path, data):
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)
    log(f"wrote {os.path.relpath(path, ROOT)} ({len(data) // 1024} KB)")


def tui_scenes(binary, out_dir, keep, text_dir):
    import pyte
    for cols, rows in TUI_SIZES:
        name = f"tui-{cols}x{rows}"
        log(f"{name}: starting podcode tui")
        model = ScriptedModel(scene_script())
        ws = Workspace(model.base_url, keep)
        term = None
        try:
            term = Terminal(pyte, binary, ws, cols, rows)

            def shot(scene, what):
                write_file(os.path.join(out_dir, f"{name}-{scene}.svg"),
                           svg_of(term.screen, f"podcode tui at {cols}x{rows}: {what}"))
                if text_dir:
                    with open(os.path.join(text_dir, f"{name}-{scene}.txt"), "w") as f:
                        f.write(term.text() + "\n")

            term.wait("the prompt box (\"message\")", lambda: term.has("message"))
            term.settle()
            term.send(PROMPT)
            term.wait("the typed prompt", lambda: term.has("show me how to use it") or term.has("use it"))
            term.settle()
            shot("prompt", "a prompt typed, before it is sent")
            term.send("\r")
            term.wait("the permission question (\"[y] allow once\", or \"[y] once\" on a narrow screen)",
                      lambda: term.has("[y] allow once") or term.has("[y] once"))
            # The modal ignores keys for its first 0.4 s; let it settle before the picture.
            time.sleep(1.0)
            term.settle()
            shot("permission", "the write asks permission")
            term.send("y")
            term.wait("the end of the answer", lambda: term.has(ANSWER_END))
            term.wait("the end of the turn (the prompt box back)", lambda: term.has("enter to send")
                      or (term.has("message") and not term.has("working")))
            term.settle(quiet=1.5)
            shot("answer", "the finished turn")
            if len(model.requests) != 3:
                raise Failed(f"{name}: the model got {len(model.requests)} requests, 3 were scripted")
        finally:
            if term:
                term.close()
            model.close()
            ws.cleanup()


# --------------------------------------------------------------------------------------------
# The web page in headless Chromium over the DevTools protocol (--remote-debugging-pipe).
# --------------------------------------------------------------------------------------------

def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        p = shutil.which(name)
        if p:
            return p
    return None


class Chromium:
    def __init__(self, exe, profile):
        # Chromium reads commands on fd 3 and writes answers on fd 4, NUL-terminated JSON.
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        args = [exe, "--headless=new", "--remote-debugging-pipe", f"--user-data-dir={profile}",
                "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--no-default-browser-check", "--disable-background-networking",
                "--disable-component-update", "--disable-extensions", "--hide-scrollbars",
                "--mute-audio", "--force-color-profile=srgb", "--window-size=1280,800", "about:blank"]
        # A small python puts the pipe's ends on fds 3 and 4 and becomes Chromium; they are moved
        # above 9 first, so that neither is itself 3 or 4 and closed by the move.
        import fcntl
        hi_r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
        hi_w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        move = ("import os, sys; r, w = int(sys.argv[1]), int(sys.argv[2]); os.dup2(r, 3); os.dup2(w, 4); "
                "os.close(r); os.close(w); os.execv(sys.argv[3], sys.argv[3:])")
        self.log = open(os.path.join(profile + ".log"), "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", move, str(hi_r), str(hi_w), *args], pass_fds=(hi_r, hi_w),
            start_new_session=True, stdin=subprocess.DEVNULL,
            stdout=self.log, stderr=self.log)
        os.close(hi_r)
        os.close(hi_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def call(self, method, params=None, session=None, limit=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + limit
        while time.time() < deadline:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                m = json.loads(raw)
                if m.get("id") == self.next_id:
                    if "error" in m:
                        raise Failed(f"Chromium: {method}: {m['error'].get('message')}")
                    return m.get("result", {})
                if "method" in m:
                    self.events.append(m)
            r, _, _ = select.select([self.from_chrome], [], [], 0.5)
            if r:
                chunk = os.read(self.from_chrome, 1 << 20)
                if not chunk:
                    raise Failed("Chromium exited; it said:\n" + self.said())
                self.buf += chunk
            elif self.proc.poll() is not None:
                raise Failed(f"Chromium exited with status {self.proc.returncode}; it said:\n" + self.said())
        raise Failed(f"Chromium: no answer to {method} within {limit} s")

    def said(self):
        self.log.flush()
        with open(self.log.name, errors="replace") as f:
            return f.read()[-3000:]

    def close(self):
        try:
            self.call("Browser.close", limit=10)
        except Exception:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
        # Its helpers (renderer, GPU and zygote processes) are in its process group.
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.log.close()
        for fd in (self.to_chrome, self.from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass


class Page:
    def __init__(self, chrome, width, height, mobile):
        self.c = chrome
        target = chrome.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.s = chrome.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
        if mobile:
            self.call("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
        self.call("Emulation.setTimezoneOverride", {"timezoneId": "UTC"})
        self.call("Emulation.setLocaleOverride", {"locale": "en-US"})
        self.size = f"{width}x{height}"

    def call(self, method, params=None):
        return self.c.call(method, params, session=self.s)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise Failed(f"page script failed: {expr}: {r['exceptionDetails'].get('text')}")
        return r.get("result", {}).get("value")

    def wait(self, what, expr, limit=STEP_LIMIT_S):
        deadline = time.time() + limit
        while time.time() < deadline:
            if self.eval(expr):
                return
            time.sleep(0.2)
        body = self.eval("document.body ? document.body.innerText.slice(0, 3000) : ''")
        raise Failed(f"web page ({self.size}): {what} never appeared within {limit} s; the page showed:\n{body}")

    def screenshot(self, path):
        data = base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])
        write_file(path, data)


def start_serve(binary, ws):
    """`podcode serve` in the demo repository; returns it and the one-time sign-in link it
    prints (`Open: http://127.0.0.1:PORT/#code=...`)."""
    proc = subprocess.Popen([binary, "serve"], cwd=ws.repo, env=ws.env(), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    out, deadline = b"", time.time() + STEP_LIMIT_S
    fd = proc.stdout.fileno()
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            out += chunk
            m = re.search(rb"^Open: (\S+)\s*$", out, re.M)
            if m:
                return proc, m.group(1).decode()
        elif proc.poll() is not None:
            break
    stop(proc)
    err = proc.stderr.read().decode(errors="replace")
    raise Failed("podcode serve printed no `Open:` link; it printed:\n" + out.decode(errors="replace") + err)


def stop(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def web_scenes(binary, out_dir, keep):
    exe = find_chromium()
    for width, height, mobile in WEB_SIZES:
        name = f"web-{width}x{height}"
        log(f"{name}: starting podcode serve and Chromium")
        model = ScriptedModel(scene_script())
        ws = Workspace(model.base_url, keep)
        serve = chrome = None
        try:
            serve, url = start_serve(binary, ws)
            chrome = Chromium(exe, os.path.join(ws.root, "chromium-profile"))
            page = Page(chrome, width, height, mobile)
            page.call("Page.navigate", {"url": url})
            page.wait("the signed-in page (the prompt box, the sign-in form hidden)",
                      "!!document.getElementById('prompt') && document.getElementById('login').hidden"
                      " && !document.getElementById('model-picker').disabled")
            time.sleep(0.5)
            page.eval("document.getElementById('prompt').focus()")
            page.call("Input.insertText", {"text": PROMPT})
            page.eval("document.getElementById('send').click()")
            page.wait("the permission card (.perm)", "!!document.querySelector('.perm button.primary')")
            time.sleep(1.0)
            page.screenshot(os.path.join(out_dir, f"{name}-permission.png"))
            page.eval("document.querySelector('.perm button.primary').click()")
            end = json.dumps(ANSWER_END)
            page.wait("the end of the answer", f"document.getElementById('transcript').innerText.includes({end})")
            page.wait("the end of the turn (the Stop button hidden)", "document.getElementById('abort').hidden")
            page.eval("document.activeElement && document.activeElement.blur()")
            time.sleep(1.0)
            page.screenshot(os.path.join(out_dir, f"{name}-answer.png"))
            if len(model.requests) != 3:
                raise Failed(f"{name}: the model got {len(model.requests)} requests, 3 were scripted")
        finally:
            if chrome:
                chrome.close()
            if serve:
                stop(serve)
            model.close()
            ws.cleanup()


# --------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="target/debug/podcode",
                    help="the podcode binary to run (default: target/debug/podcode)")
    ap.add_argument("--out", default="docs/screenshots", help="where the images go (default: docs/screenshots)")
    ap.add_argument("--only", choices=["tui", "web"], help="only the terminal or only the page")
    ap.add_argument("--keep", action="store_true", help="keep the last temporary folder (its path is printed)")
    ap.add_argument("--text", metavar="DIR", help="also write each terminal screen as plain text into DIR")
    a = ap.parse_args()

    binary = a.binary if os.path.isabs(a.binary) else os.path.join(ROOT, a.binary)
    out_dir = a.out if os.path.isabs(a.out) else os.path.join(ROOT, a.out)
    problems = []
    if not os.access(binary, os.X_OK):
        build = "cargo build --release -p podcode" if "release" in a.binary else "cargo build -p podcode"
        problems.append(f"no podcode binary at {a.binary}: build it first ({build}), or pass --binary PATH")
    if a.only != "web":
        try:
            import pyte  # noqa: F401
        except ImportError:
            problems.append("the terminal screenshots need the Python package pyte: pip install pyte")
    if a.only != "tui" and not find_chromium():
        problems.append("the page screenshots need Chromium on PATH (Debian: apt-get install chromium)")
    if shutil.which("git") is None:
        problems.append("git is needed for the demo repository")
    if problems:
        for p in problems:
            print(f"screenshots: {p}", file=sys.stderr)
        sys.exit(2)
    os.makedirs(out_dir, exist_ok=True)

    def interrupted(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, interrupted)
    started = time.time()
    try:
        if a.only != "web":
            tui_scenes(binary, out_dir, a.keep, a.text)
        if a.only != "tui":
            web_scenes(binary, out_dir, a.keep)
    except Failed as e:
        print(f"screenshots: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("screenshots: interrupted (the processes it started were stopped)", file=sys.stderr)
        sys.exit(130)
    except Exception:
        traceback.print_exc()
        print("screenshots: FAILED (an unexpected error, above)", file=sys.stderr)
        sys.exit(1)
    log(f"done in {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
