// client.mjs — the opencode SDK `client` a plugin receives in its input, as far as Podcode can
// honour it.
//
// Owns: the calls published opencode plugins make most, answered the SDK's way (a promise of
// `{ data, error }`): `client.app.log({ body: { service, level, message, extra } })` (also
// without the `body` wrapper) and `client.tui.showToast({ body: { title, message, variant } })`.
// Both are kept per plugin file while the file loads (the load result's `logs`, which
// `podcode plugins` prints) and, after the load (from hooks and tools), sent to Rust
// (notification `client.log`), which appends them as JSON lines to Podcode's plugin log
// (`<data>/logs/plugins.log`): the host itself may not write there, since it runs in the
// sandbox. A toast after the load is also sent to Rust (notification `client.toast`), which
// shows it in the front ends. Session calls — `client.session.list()`, `.get({ path: { id } })`,
// `.messages({ path: { id } })`, `.status()`, `.update({ path: { id }, body: { title } })`,
// `.prompt({ path: { id }, body: { noReply?, parts } })` and `.command({ path: { id }, body: {
// command, arguments } })` — and `client.auth.set` (an auth plugin's refreshed token) ask Rust (request `client.session`), which answers from Podcode's
// session store in opencode's shapes (a `noReply` prompt adds its parts for the session's next
// request; a prompt asking a reply and a command start a turn in a session open in this
// process). Every other path (`client.find.files`, …) reads as a function, so
// `typeof client.session?.status` feature tests and property reads never throw; calling one
// rejects with "<path> is not supported in Podcode" — the SDK's own failure mode, which
// plugins already catch.

import { notify, request } from "./io.mjs";

const LEVELS = new Set(["debug", "info", "warn", "error"]);

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
  return `client.${path} is not supported in Podcode (it offers client.app.log, client.tui.showToast, client.auth.set and client.session.list/get/messages/status/update/prompt/command)`;
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

/** Is `file` loading now (its client calls go into its load result)? */
function isLoading(file) {
  return Boolean(loading && loading.file === file);
}

function record(file, entry) {
  if (isLoading(file)) {
    loading.entries.push(entry);
    return;
  }
  notify("client.log", { time: new Date().toISOString(), file, ...entry });
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

function showToast(file, arg) {
  const entry = toastEntry(arg);
  const live = !isLoading(file);
  record(file, entry);
  if (live) notify("client.toast", { file, title: entry.service, message: entry.message, variant: entry.level });
  return ok();
}

/** The session id an SDK call names: `{ path: { id } }` (SDK v1) or `{ sessionID }` (v2). */
function sessionId(arg) {
  if (typeof arg === "string") return arg;
  return arg?.path?.id ?? arg?.sessionID ?? arg?.id;
}

/** A session read answered by Rust: `{ data }` or `{ error }`, as the SDK resolves. */
async function sessionRead(method, arg) {
  const args = {};
  const id = sessionId(arg);
  if (id !== undefined) args.id = String(id);
  const limit = arg?.query?.limit ?? arg?.limit;
  if (Number.isInteger(limit) && limit > 0) args.limit = limit;
  // SDK v1 sends `{ path, body }`; v2 puts the body's fields beside `sessionID`.
  const body = arg?.body ?? (arg && typeof arg === "object" ? arg : undefined);
  if (body && typeof body === "object") {
    try {
      args.body = JSON.parse(JSON.stringify(body));
    } catch {
      // not serialisable: sent without a body, and Rust says what is missing
    }
  }
  try {
    const reply = await request("client.session", { method, args });
    return { data: reply?.data, error: reply?.error };
  } catch (err) {
    return { data: undefined, error: { name: "UnknownError", data: { message: String(err?.message ?? err) } } };
  }
}

/** `client.auth.set({ path: { id }, body })` (or `{ providerID, auth }`): stores a provider's
 * credentials (an auth plugin's refreshed token) through Rust, in Podcode's credentials file. */
async function authSet(arg) {
  const provider = arg?.path?.id ?? arg?.providerID ?? arg?.id;
  const body = arg?.body ?? arg?.auth;
  try {
    const reply = await request("client.auth", { method: "set", provider: String(provider ?? ""), body: JSON.parse(JSON.stringify(body ?? null)) });
    return { data: reply?.data, error: reply?.error };
  } catch (err) {
    return { data: undefined, error: { name: "UnknownError", data: { message: String(err?.message ?? err) } } };
  }
}

/** The `client` for plugin file `file`. */
export function makeClient(file) {
  const known = {
    app: { log: (arg) => (record(file, logEntry(arg)), ok()) },
    tui: { showToast: (arg) => showToast(file, arg) },
    auth: { set: authSet },
    session: {
      list: (arg) => sessionRead("list", arg),
      get: (arg) => sessionRead("get", arg),
      messages: (arg) => sessionRead("messages", arg),
      status: (arg) => sessionRead("status", arg),
      update: (arg) => sessionRead("update", arg),
      prompt: (arg) => sessionRead("prompt", arg),
      command: (arg) => sessionRead("command", arg),
    },
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
  const branches = {
    app: branch("app", known.app),
    tui: branch("tui", known.tui),
    auth: branch("auth", known.auth),
    session: branch("session", known.session),
  };
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
