// context.mjs — the JS side of one tool call: its `ctx` and its result.
//
// Owns: building the `ctx` a tool's execute(args, ctx) receives from the wire ctx (identity
// fields as given, `abort` an AbortSignal, `metadata()` / `recordChange()` notifications,
// `ask()` a request that resolves or throws, `messages` a lazy cached getter), and normalising
// whatever execute returned into a protocol ToolResult.

import { notify, request } from "./io.mjs";

const IDENTITY = ["sessionID", "messageID", "callID", "parentID", "rootID", "agent", "mainCwd", "directory", "worktree"];

export function buildCtx(callId, wire, signal) {
  const w = wire && typeof wire === "object" ? wire : {};
  const ctx = {};
  for (const k of IDENTITY) ctx[k] = w[k];
  if (ctx.callID === undefined) ctx.callID = callId;
  ctx.abort = signal;
  ctx.metadata = (input = {}) => {
    const params = { callId };
    if (input && input.title !== undefined) params.title = String(input.title);
    if (input && input.metadata !== undefined) params.metadata = input.metadata;
    notify("ctx.metadata", params);
  };
  ctx.ask = async (input = {}) => {
    const params = { callId, permission: input.permission, patterns: Array.isArray(input.patterns) ? input.patterns : [] };
    if (input.always !== undefined) params.always = input.always;
    if (input.metadata !== undefined) params.metadata = input.metadata;
    await request("ctx.ask", params, signal);
  };
  ctx.recordChange = (input = {}) => {
    notify("ctx.recordChange", {
      callId,
      file: input.file,
      op: input.op,
      oldContent: input.oldContent ?? null,
      newContent: input.newContent ?? null,
    });
  };
  let messages;
  // Lazy and non-enumerable: spreading or logging ctx must not trigger the history read.
  Object.defineProperty(ctx, "messages", {
    enumerable: false,
    configurable: true,
    get() {
      messages ??= request("ctx.messages", { callId }, signal).then((r) => (Array.isArray(r?.messages) ? r.messages : []));
      return messages;
    },
  });
  return ctx;
}

class InvalidResult extends Error {}

function checkAttachments(list) {
  if (!Array.isArray(list)) throw new InvalidResult(`attachments must be an array, got ${typeName(list)}`);
  list.forEach((a, i) => {
    if (!a || typeof a !== "object" || Array.isArray(a)) throw new InvalidResult(`attachments[${i}] must be an object {mime, url}`);
    if (typeof a.mime !== "string") throw new InvalidResult(`attachments[${i}].mime must be a string, got ${typeName(a.mime)}`);
    if (typeof a.url !== "string") throw new InvalidResult(`attachments[${i}].url must be a string, got ${typeName(a.url)}`);
    if (a.filename !== undefined && typeof a.filename !== "string") {
      throw new InvalidResult(`attachments[${i}].filename must be a string, got ${typeName(a.filename)}`);
    }
  });
  return list.map((a) => (a.filename === undefined ? { mime: a.mime, url: a.url } : { mime: a.mime, url: a.url, filename: a.filename }));
}

function typeName(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : typeof v;
}

function normaliseUnsafe(value) {
  if (value === undefined || value === null) return { output: "" };
  if (typeof value === "string") return { output: value };
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return { output: String(value) };
  if (typeof value === "object" && !Array.isArray(value) && "output" in value) {
    if (typeof value.output !== "string") throw new InvalidResult(`output must be a string, got ${typeName(value.output)}`);
    const out = { output: value.output };
    if (value.title !== undefined && value.title !== null) {
      if (typeof value.title !== "string") throw new InvalidResult(`title must be a string, got ${typeName(value.title)}`);
      out.title = value.title;
    }
    if (value.metadata !== undefined) out.metadata = value.metadata;
    if (value.attachments !== undefined) out.attachments = checkAttachments(value.attachments);
    // The result must survive JSON (metadata with a cycle or a BigInt would not).
    JSON.stringify(out);
    return out;
  }
  if (typeof value === "object") {
    const text = JSON.stringify(value, null, 2);
    return { output: text ?? "" };
  }
  throw new InvalidResult(`a ${typeof value} is not a tool result`);
}

/** Normalises execute's return value; throws Error("the tool returned an invalid result: …"). */
export function normaliseResult(value) {
  try {
    return normaliseUnsafe(value);
  } catch (err) {
    throw new Error(`the tool returned an invalid result: ${err.message}`);
  }
}
