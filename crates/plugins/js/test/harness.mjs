// harness.mjs — test support for the plugin host (no tests of its own; Node 20's runner also
// executes it as a file because it lives under test/, which is harmless: it has no side
// effects at import).
//
// Owns: laying out a host dir per test process exactly as the Rust side does (all files of
// crates/plugins/js, dependencies bundled in vendor/, no node_modules; cwd = host dir);
// installing the fixtures' own zod copies into test/fixtures/node_modules (git-ignored); and HostClient, a small JSON-RPC client that spawns `bun|node host.mjs`,
// answers the sidecar's ctx.ask / ctx.messages requests, collects notifications and stderr,
// and checks that every stdout line is a well-formed frame.

import { spawn, execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";

export const JS_DIR = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
export const FIXTURES = join(JS_DIR, "test", "fixtures");

// Temp dirs made by this process (host dirs, plugin dirs, worktrees), removed when it exits.
const tempDirs = [];
process.on("exit", () => {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

/** mkdtemp in the OS temp dir, removed at exit. */
export function tempDir(prefix) {
  const d = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(d);
  return d;
}

export function hasBun() {
  const r = spawnSync("bun", ["--version"], { encoding: "utf8" });
  return r.status === 0;
}

function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Runs `fn` under a cross-process lock (a directory), for one-time installs. */
function withLock(lockDir, fn) {
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockDir}`);
      sleepSync(200);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

function npmInstall(dir) {
  // `npm ci` installs exactly the committed lock file and never rewrites it.
  const cmd = existsSync(join(dir, "package-lock.json")) ? "ci" : "install";
  execFileSync("npm", [cmd, "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, stdio: ["ignore", "pipe", "inherit"] });
}

/** A fresh host dir laid out exactly as the Rust side does: the files of crates/plugins/js
 * (its dependencies are bundled in vendor/), and no node_modules. */
export function makeHostDir() {
  const dir = tempDir("podcode-host-");
  cpSync(JS_DIR, dir, {
    recursive: true,
    filter: (src) => {
      const rel = src.slice(JS_DIR.length);
      return !rel.startsWith("/test") && !rel.startsWith("/node_modules");
    },
  });
  return dir;
}

/** Installs the fixtures' own dependencies (zod 3.25.76, zod 4 as "zod4") once. */
export function ensureFixtureDeps() {
  const done = join(FIXTURES, "node_modules", ".podcode-ok");
  if (existsSync(done)) return;
  withLock(join(FIXTURES, ".install.lock"), () => {
    if (existsSync(done)) return;
    npmInstall(FIXTURES);
    writeFileSync(done, "");
  });
}

/** A temp dir for plugin files written by a test; `zod` resolves there (fixtures' copy). */
export function tempPluginDir() {
  const dir = tempDir("podcode-plugins-");
  symlinkSync(join(FIXTURES, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

export function writePlugin(dir, name, source) {
  const p = join(dir, name);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, source);
  return p;
}

export class RpcError extends Error {
  constructor(error) {
    super(error.message);
    this.code = error.code;
    this.data = error.data;
  }
}

export class HostClient {
  /** @param runtime "bun" | "node" */
  constructor(runtime, hostDir) {
    this.runtime = runtime;
    this.hostDir = hostDir;
    this.nextId = 1;
    this.pending = new Map();
    this.notifications = [];
    this.requests = []; // sidecar → test requests, in order
    this.frames = []; // every stdout frame, in order
    this.badLines = [];
    this.stderr = "";
    this.handlers = {
      "ctx.ask": () => ({}),
      "ctx.messages": () => ({ messages: [] }),
    };
    this.proc = spawn(runtime, [join(hostDir, "host.mjs")], { cwd: hostDir, stdio: ["pipe", "pipe", "pipe"] });
    this.exited = new Promise((resolve) => this.proc.on("exit", (code, signal) => resolve({ code, signal })));
    this.proc.stderr.setEncoding("utf8");
    this.proc.stderr.on("data", (d) => {
      this.stderr += d;
    });
    createInterface({ input: this.proc.stdout }).on("line", (line) => this.#onLine(line));
  }

  #onLine(line) {
    let frame;
    try {
      frame = JSON.parse(line);
    } catch {
      this.badLines.push(line);
      return;
    }
    if (!frame || frame.jsonrpc !== "2.0") {
      this.badLines.push(line);
      return;
    }
    this.frames.push(frame);
    if (frame.method && frame.id !== undefined) {
      this.requests.push(frame);
      this.#answer(frame);
    } else if (frame.method) {
      this.notifications.push(frame);
    } else {
      const p = this.pending.get(frame.id);
      if (!p) return;
      this.pending.delete(frame.id);
      if (frame.error) p.reject(new RpcError(frame.error));
      else p.resolve(frame.result);
    }
  }

  async #answer(frame) {
    const handler = this.handlers[frame.method];
    try {
      if (!handler) throw new Error(`no handler for ${frame.method}`);
      const result = await handler(frame.params, frame);
      this.send({ jsonrpc: "2.0", id: frame.id, result });
    } catch (err) {
      this.send({ jsonrpc: "2.0", id: frame.id, error: { code: -32000, message: err.message } });
    }
  }

  send(frame) {
    this.proc.stdin.write(JSON.stringify(frame) + "\n");
  }

  request(method, params) {
    const id = this.nextId++;
    const p = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.send({ jsonrpc: "2.0", id, method, params });
    return p;
  }

  notify(method, params) {
    this.send({ jsonrpc: "2.0", method, params });
  }

  notificationsFor(callId) {
    return this.notifications.filter((n) => n.params?.callId === callId);
  }

  async close() {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      try {
        await Promise.race([this.request("shutdown", {}), new Promise((r) => setTimeout(r, 2000))]);
      } catch {
        // already gone
      }
      const timer = setTimeout(() => this.proc.kill("SIGKILL"), 3000);
      await this.exited;
      clearTimeout(timer);
    }
  }
}

// ---- shared request helpers -------------------------------------------------------------

export const INPUT = {
  directory: FIXTURES,
  worktree: FIXTURES,
  project: { id: "global", worktree: FIXTURES, vcs: null, sandboxes: [], time: { created: 1, updated: 1 } },
  serverUrl: "http://localhost:4096",
};

export function fixture(rel) {
  return join(FIXTURES, rel);
}

let callSeq = 0;
export function newCallId() {
  callSeq += 1;
  return `call-${process.pid}-${callSeq}`;
}

export function ctxFor(callId, overrides = {}) {
  return {
    sessionID: "ses_1", messageID: "msg_1", callID: callId, parentID: null, rootID: null, agent: "build",
    mainCwd: FIXTURES, directory: FIXTURES, worktree: FIXTURES, ...overrides,
  };
}

/** `pluginConfig` is the whole plugin_config table, keyed by plugin id. */
export function load(client, path, format, pluginConfig = {}, input = INPUT) {
  return client.request("load", { path, format, pluginConfig, input });
}

export function execute(client, path, tool, args = {}, opts = {}) {
  const callId = opts.callId ?? newCallId();
  return client.request("execute", { path, tool, callId, args, ctx: ctxFor(callId, opts.ctx) });
}

/** Resolves to the RpcError a promise rejects with (fails if it resolves). */
export async function rejection(promise) {
  try {
    const value = await promise;
    throw new Error(`expected an error, got ${JSON.stringify(value)}`);
  } catch (err) {
    if (err instanceof RpcError) return err;
    throw err;
  }
}
