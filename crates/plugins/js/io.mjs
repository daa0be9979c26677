// io.mjs — the sidecar's stdio: frame transport and stdout discipline.
//
// Owns: capturing the real stdout writer for JSON-RPC frames (and only frames), redirecting
// `console.*` and `process.stdout.write` to stderr so plugin output cannot corrupt the stream,
// reading newline-delimited frames from stdin, and the sidecar → Rust side of the protocol:
// requests with string ids "js-<n>" (ctx.ask, ctx.messages) and notifications
// (ctx.metadata, ctx.recordChange, and `output` chunks of a long result). Must be imported before anything that prints.

import { Console } from "node:console";
import { createInterface } from "node:readline";

const realStdout = process.stdout;
const realWrite = process.stdout.write.bind(process.stdout);

// --- stdout discipline -------------------------------------------------------------------
process.stdout.write = function (chunk, encoding, cb) {
  return process.stderr.write(chunk, encoding, cb);
};
{
  // Every console method that prints goes to stderr (Bun's console writes to fd 1 natively,
  // not through process.stdout.write, so the methods themselves are replaced).
  const methods = ["log", "info", "debug", "dir", "dirxml", "table", "trace", "group", "groupCollapsed",
    "groupEnd", "count", "countReset", "time", "timeLog", "timeEnd", "assert"];
  let errConsole = null;
  try {
    errConsole = new Console({ stdout: process.stderr, stderr: process.stderr });
  } catch {
    errConsole = null;
  }
  const fallback = console.error.bind(console);
  for (const key of methods) {
    const fn = errConsole && typeof errConsole[key] === "function" ? errConsole[key].bind(errConsole) : fallback;
    try {
      console[key] = fn;
    } catch {
      // a non-writable console member: leave it
    }
  }
}

export function logErr(...parts) {
  try {
    process.stderr.write(parts.map((p) => (typeof p === "string" ? p : String(p?.stack ?? p))).join(" ") + "\n");
  } catch {
    // stderr gone: nothing left to tell
  }
}

// --- frames out --------------------------------------------------------------------------
// A plugin's string cut mid-emoji holds half of a UTF-16 surrogate pair, which JSON.stringify
// writes as a lone `\udXXX` escape that the Rust side's JSON reader refuses. Every string
// value leaves well-formed, the broken half replaced by U+FFFD (`toWellFormed` where the
// runtime has it; the regular expression is the same rule for older Node).
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
export const wellFormed =
  typeof String.prototype.toWellFormed === "function"
    ? (s) => s.toWellFormed()
    : (s) => s.replace(LONE_SURROGATE, "\ufffd");

function wellFormedStrings(_key, value) {
  return typeof value === "string" ? wellFormed(value) : value;
}

function stringify(frame) {
  return JSON.stringify(frame, wellFormedStrings);
}

export function writeFrame(frame, cb) {
  let line;
  try {
    line = stringify(frame);
  } catch (err) {
    // A result that cannot be serialised (BigInt, cycle): answer with an error instead.
    if (frame.id !== undefined && frame.id !== null && !frame.method) {
      line = stringify({
        jsonrpc: "2.0",
        id: frame.id,
        error: { code: -32000, message: `the tool returned an invalid result: ${err.message}` },
      });
    } else {
      logErr(`podcode plugin host: dropped an unserialisable frame: ${err.message}`);
      return;
    }
  }
  realWrite(line + "\n", cb);
}

/** Like writeFrame, but resolves only once stdout can take more (for long streams). */
export function writeFrameDrained(frame) {
  return new Promise((resolve) => {
    const line = stringify(frame) + "\n";
    if (realWrite(line)) resolve();
    else realStdout.once("drain", resolve);
  });
}

/** Output chunks are at most this many UTF-16 code units. */
const CHUNK = 256 * 1024;

/**
 * Sends a long `output` ahead of its result as `output` notifications `{callId, data}` of
 * at most CHUNK code units each (never splitting a surrogate pair), waiting for stdout to
 * drain, so the Rust side streams it into truncation and the spill file instead of
 * reading one huge frame. Returns the output left for the result itself ("" or `output`).
 */
export async function streamOutput(callId, output) {
  if (typeof output !== "string" || output.length <= CHUNK || callId === undefined) return output;
  for (let at = 0; at < output.length; ) {
    let end = Math.min(at + CHUNK, output.length);
    const last = output.charCodeAt(end - 1);
    if (end < output.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    await writeFrameDrained({ jsonrpc: "2.0", method: "output", params: { callId, data: output.slice(at, end) } });
    at = end;
  }
  return "";
}

export function respond(id, result) {
  writeFrame({ jsonrpc: "2.0", id, result });
}

export function respondError(id, message, data, code = -32000) {
  const error = { code, message };
  if (data && Object.keys(data).length) error.data = data;
  writeFrame({ jsonrpc: "2.0", id, error });
}

export function notify(method, params) {
  writeFrame({ jsonrpc: "2.0", method, params });
}

// --- sidecar → Rust requests -------------------------------------------------------------
let nextId = 1;
const pending = new Map();

/** Sends a request to Rust; resolves with its result, rejects with Error(error.message). */
export function request(method, params, signal) {
  const id = `js-${nextId++}`;
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      pending.delete(id);
      reject(new Error(`${method} was cancelled: the call was aborted`));
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    pending.set(id, {
      resolve: (v) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(v);
      },
      reject: (e) => {
        signal?.removeEventListener("abort", onAbort);
        reject(e);
      },
    });
    writeFrame({ jsonrpc: "2.0", id, method, params });
  });
}

function settle(frame) {
  const p = pending.get(frame.id);
  if (!p) return; // answer to a cancelled request
  pending.delete(frame.id);
  if (frame.error) p.reject(new Error(String(frame.error.message ?? "request failed")));
  else p.resolve(frame.result);
}

// --- frames in ---------------------------------------------------------------------------
/**
 * Reads frames from stdin. `onRequest(frame)` is called for requests and notifications
 * (without awaiting: calls run concurrently); responses to our own requests settle here.
 */
export function startReading(onRequest, onClose) {
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on("line", (line) => {
    if (line.trim() === "") return;
    let frame;
    try {
      frame = JSON.parse(line);
    } catch (err) {
      writeFrame({ jsonrpc: "2.0", id: null, error: { code: -32700, message: `parse error: ${err.message}` } });
      return;
    }
    if (frame && frame.method === undefined && frame.id !== undefined && ("result" in frame || "error" in frame)) {
      settle(frame);
      return;
    }
    try {
      onRequest(frame);
    } catch (err) {
      logErr("podcode plugin host: dispatch failed:", err);
    }
  });
  rl.on("close", onClose);
}

export function flushAndExit(code) {
  if (realStdout.writableLength === 0) process.exit(code);
  realWrite("", () => process.exit(code));
  setTimeout(() => process.exit(code), 500).unref?.();
}
