// host.mjs — entry of Podcode's JS plugin sidecar (run as `bun host.mjs` or `node host.mjs`,
// started in the host dir, then `initialize` moves it to the session directory). See
// docs/plugin-host-protocol.md for the wire contract.
//
// Owns: process-level setup (stdout discipline via io.mjs — imported first —, crash guards,
// module resolution: Bun.plugin onLoad rewriting on Bun, module.register() hooks on Node) and
// the JSON-RPC dispatch of initialize / load / validate / execute / abort / hook / shutdown,
// and auth.load / auth.fetch / auth.step / auth.callback (auth.mjs).
// Every request runs concurrently; each execute has its own AbortController. A plugin error
// never ends the process.

import { flushAndExit, logErr, respond, respondError, startReading, streamOutput } from "./io.mjs";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { IS_BUN, callError } from "./errors.mjs";
import { buildCtx, normaliseResult } from "./context.mjs";
import { HostError, findTool, hooksForErrors, importHooks, loadPlugin, registry } from "./plugins.mjs";
import { validateArgs } from "./validate.mjs";
import { authCallback, authFetch, authLoad, authStep } from "./auth.mjs";

const HOST_DIR = fileURLToPath(new URL(".", import.meta.url)).replace(/\/$/, "");
const SHIM_URL = new URL("./shim/plugin.mjs", import.meta.url);
const HOST_ZOD_URL = new URL("./vendor/zod.mjs", import.meta.url);

process.on("uncaughtException", (err) => logErr("podcode plugin host: uncaught exception:", err));
process.on("unhandledRejection", (err) => logErr("podcode plugin host: unhandled rejection:", err));

hooksForErrors.hostDir = HOST_DIR;

if (IS_BUN) {
  const { installBunResolution, prepareBunImport } = await import("./bun_resolve.mjs");
  installBunResolution({ shimPath: fileURLToPath(SHIM_URL), hostZodPath: fileURLToPath(HOST_ZOD_URL) });
  importHooks.beforeImport = prepareBunImport;
} else {
  const { register } = await import("node:module");
  const { sucraseOptions } = await import("./node_loader.mjs");
  register(new URL("./node_loader.mjs", import.meta.url), { parentURL: import.meta.url, data: { shimURL: SHIM_URL.href, hostZodURL: HOST_ZOD_URL.href } });
  // V8 reports no location for a syntax error in an ES module; errors.mjs then runs
  // `node --check` on the JavaScript, which for a .ts file is its type-stripped text.
  // sucrase (bundled in vendor/) is imported on this thread only once a load fails.
  let transform;
  hooksForErrors.prepare = async () => {
    transform ??= (await import("./vendor/sucrase.mjs")).transform;
  };
  hooksForErrors.strippedSource = (file) => {
    if (!/\.(ts|mts|tsx)$/.test(file)) return undefined;
    if (!transform) return null;
    try {
      return transform(readFileSync(file, "utf8"), sucraseOptions(file)).code;
    } catch {
      return null;
    }
  };
}

const calls = new Map(); // callId → AbortController

const methods = {
  async initialize({ protocolVersion, directory } = {}) {
    if (protocolVersion !== undefined && protocolVersion !== 1) {
      throw new HostError(`unsupported plugin host protocol version ${protocolVersion} (this host speaks 1)`, {});
    }
    // Plugins run in the session's directory, as in opencode: `process.cwd()`, relative
    // paths and `$` (Bun.$ starts commands in the cwd). The process started in the host dir,
    // where Bun read bunfig.toml (no auto-install); that setting stays.
    if (typeof directory === "string" && directory !== "") {
      try {
        process.chdir(directory);
      } catch (err) {
        logErr(`podcode plugin host: cannot work in ${directory}:`, err);
      }
    }
    return { runtime: IS_BUN ? "bun" : "node", version: IS_BUN ? process.versions.bun : process.versions.node };
  },

  async load(params) {
    return loadPlugin(params ?? {});
  },

  async validate({ path, tool, args } = {}) {
    const { def } = findTool(path, tool);
    return validateArgs(def.parameters, args);
  },

  async execute({ path, tool, callId, args, ctx } = {}) {
    const controller = new AbortController();
    const key = callId ?? ctx?.callID;
    if (key !== undefined) calls.set(key, controller);
    try {
      const { entry, def } = findTool(path, tool);
      let value;
      try {
        value = await def.execute(args ?? {}, buildCtx(key, ctx, controller.signal));
      } catch (err) {
        const { message, data } = callError(err, path, entry.bunApis);
        throw new HostError(message, data);
      }
      const result = normaliseResult(value);
      if (typeof result?.output === "string") result.output = await streamOutput(key, result.output);
      return result;
    } finally {
      if (key !== undefined && calls.get(key) === controller) calls.delete(key);
    }
  },

  "auth.load": authLoad,
  "auth.step": authStep,
  "auth.callback": authCallback,

  async "auth.fetch"(params) {
    const controller = new AbortController();
    const key = params?.fetchId;
    calls.set(key, controller);
    const done = () => {
      if (calls.get(key) === controller) calls.delete(key);
    };
    try {
      return await authFetch(params ?? {}, controller, done);
    } catch (err) {
      done();
      throw err;
    }
  },

  async hook({ path, name, input, output } = {}) {
    const entry = registry.get(path);
    if (!entry) throw new HostError(`${path} is not loaded`, { file: path });
    for (const hooks of entry.hookSets) {
      const fn = hooks?.[name];
      if (typeof fn !== "function") continue;
      try {
        await fn.call(hooks, input, output);
      } catch (err) {
        const { message, data } = callError(err, path, entry.bunApis);
        throw new HostError(message, data);
      }
    }
    // opencode's `config` hook changes its one argument, the config object: that is its output.
    if (name === "config") return { output: input ?? null };
    return { output: output === undefined ? null : output };
  },
};

function dispatch(frame) {
  const { id, method, params } = frame ?? {};
  const isNotification = id === undefined || id === null;
  if (method === "abort") {
    calls.get(params?.callId)?.abort();
    if (!isNotification) respond(id, {});
    return;
  }
  if (method === "shutdown") {
    for (const c of calls.values()) c.abort();
    if (!isNotification) respond(id, {});
    flushAndExit(0);
    return;
  }
  const fn = Object.prototype.hasOwnProperty.call(methods, method) ? methods[method] : undefined;
  if (!fn) {
    if (!isNotification) respondError(id, `unknown method ${JSON.stringify(method)}`, undefined, -32601);
    return;
  }
  // Called synchronously so an execute registers its AbortController before the next frame
  // (possibly its `abort`) is read.
  let pending;
  try {
    pending = Promise.resolve(fn(params));
  } catch (err) {
    pending = Promise.reject(err);
  }
  pending.then(
    (result) => {
      if (!isNotification) respond(id, result);
    },
    (err) => {
      if (isNotification) {
        logErr(`podcode plugin host: ${method} failed:`, err);
        return;
      }
      if (err instanceof HostError) respondError(id, err.message, err.data);
      else {
        const { message, data } = callError(err, params?.path);
        respondError(id, message, data);
      }
    },
  );
}

startReading(dispatch, () => flushAndExit(0));
