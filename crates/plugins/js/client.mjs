// client.mjs — the opencode SDK `client` a plugin receives in its input, as far as Podcode can
// honour it.
//
// Owns: the calls published opencode plugins make most, answered the SDK's way (a promise of
// `{ data, error }`): `client.app.log({ body: { service, level, message, extra } })` (also
// without the `body` wrapper) and `client.tui.showToast({ body: { title, message, variant } })`.
// Both are kept per plugin file while the file loads (the load result's `logs`, which
// `podcode plugins` prints) and, after the load (from hooks and tools), appended as JSON lines
// to Podcode's plugin log (`<data>/logs/plugins.log`, named by `initialize`; stderr before). Every other path (`client.session.prompt`, `client.find.files`, …) reads as a
// function, so `typeof client.session?.status` feature tests and property reads never throw;
// calling one rejects with "<path> is not supported in Podcode" — the SDK's own failure mode,
// which plugins already catch.

import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { logErr } from "./io.mjs";

const LEVELS = new Set(["debug", "info", "warn", "error"]);

let logFile = null;

/** Where client calls made after a load are written (one JSON object a line). */
export function setClientLogFile(path) {
  logFile = path;
}

/** The file whose load is running (imports run one at a time), for attributing calls. */
let loading = null;

/** Runs `fn` with `sink` collecting the client calls made meanwhile. */
export async function collectingClientCalls(sink, fn) {
  const before = loading;
  loading = sink;
  try {
    return await fn();
  } finally {
    loading = before;
  }
}

export function unsupportedMessage(path) {
  return `client.${path} is not supported in Podcode (it offers client.app.log and client.tui.showToast)`;
}

function text(v) {
  return typeof v === "string" ? v : v === undefined || v === null ? "" : String(v);
}

/** One log entry from `app.log`'s argument (with or without the SDK's `body` wrapper). */
function logEntry(arg) {
  const body = arg && typeof arg === "object" && arg.body && typeof arg.body === "object" ? arg.body : arg ?? {};
  const level = LEVELS.has(body.level) ? body.level : "info";
  const entry = { kind: "log", level, service: text(body.service), message: text(body.message) };
  if (body.extra !== undefined) {
    try {
      entry.extra = JSON.parse(JSON.stringify(body.extra));
    } catch {
      // not serialisable: dropped, the message stays
    }
  }
  return entry;
}

function toastEntry(arg) {
  const body = arg && typeof arg === "object" && arg.body && typeof arg.body === "object" ? arg.body : arg ?? {};
  const variant = ["info", "success", "warning", "error"].includes(body.variant) ? body.variant : "info";
  return { kind: "toast", level: variant, service: text(body.title), message: text(body.message) };
}

function record(file, entry) {
  if (loading && loading.file === file) {
    loading.entries.push(entry);
    return;
  }
  if (logFile) {
    try {
      mkdirSync(dirname(logFile), { recursive: true });
      appendFileSync(logFile, JSON.stringify({ time: new Date().toISOString(), file, ...entry }) + "\n");
      return;
    } catch {
      // unwritable: fall back to stderr
    }
  }
  const who = entry.service ? `${entry.service}: ` : "";
  logErr(`podcode plugin ${entry.kind} (${file}) ${entry.level} ${who}${entry.message}`);
}

function ok() {
  return Promise.resolve({ data: true, error: undefined });
}

/** A function at every path: calling it rejects with the unsupported message. */
function unsupported(path) {
  const fn = () => Promise.reject(new Error(unsupportedMessage(path)));
  return new Proxy(fn, {
    get(target, key) {
      if (typeof key === "symbol") return target[key];
      if (key === "then") return undefined; // not a thenable: `await client.x` stays the proxy
      if (key === "name" || key === "length" || key === "prototype") return target[key];
      return unsupported(`${path}.${key}`);
    },
  });
}

/** The `client` for plugin file `file`. */
export function makeClient(file) {
  const known = {
    app: { log: (arg) => (record(file, logEntry(arg)), ok()) },
    tui: { showToast: (arg) => (record(file, toastEntry(arg)), ok()) },
  };
  const branch = (name, impl) =>
    new Proxy(impl, {
      get(target, key) {
        if (typeof key === "symbol") return undefined;
        if (Object.prototype.hasOwnProperty.call(target, key)) return target[key];
        if (key === "then") return undefined;
        return unsupported(`${name}.${key}`);
      },
    });
  const branches = { app: branch("app", known.app), tui: branch("tui", known.tui) };
  return new Proxy(Object.create(null), {
    get(_t, key) {
      if (typeof key === "symbol" || key === "then") return undefined;
      return Object.prototype.hasOwnProperty.call(branches, key) ? branches[key] : unsupported(key);
    },
    has() {
      return true;
    },
  });
}
