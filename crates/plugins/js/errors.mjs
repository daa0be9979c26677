// errors.mjs — turning thrown things into protocol errors `{message, data}`.
//
// Owns: the user/model-facing `message` (no "Error:" prefix, no stack) and `data`
// (`stack`, `file`, `line`, `column` when known) for load errors and call errors, across both
// runtimes: Bun build errors (AggregateError of BuildMessage), Bun ResolveMessage, Node
// ERR_MODULE_NOT_FOUND, V8 SyntaxErrors without a location (found with `node --check`),
// sucrase syntax errors from the Node loader, and "needs Bun" errors.

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const IS_BUN = typeof globalThis.Bun !== "undefined";

export const NEEDS_BUN_HINT = "install it with npm install -g bun";

/** file URL or path (maybe with ?query) → plain path. */
export function plainPath(p) {
  if (typeof p !== "string") return undefined;
  let s = p;
  if (s.startsWith("file://")) {
    try {
      s = fileURLToPath(s.replace(/[?#].*$/, ""));
    } catch {
      return undefined;
    }
  }
  return s.replace(/\?.*$/, "");
}

function messageOf(err) {
  if (err instanceof Error || (err && typeof err === "object" && typeof err.message === "string")) {
    const m = String(err.message).replace(/^(Error|TypeError|ReferenceError|RangeError):\s*/, "");
    return m !== "" ? m : String(err.name ?? "the plugin threw an error without a message");
  }
  if (err === undefined) return "the plugin threw undefined";
  try {
    return typeof err === "string" ? err : JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}

function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** First stack frame that points into `file` (any of its URL forms) → {line, column}. */
export function locationIn(stack, file) {
  if (typeof stack !== "string" || !file) return undefined;
  const re = new RegExp(`(?:file://)?${escapeRe(file)}(?:\\?[^:)\\s]*)?:(\\d+):(\\d+)`);
  const m = re.exec(stack);
  return m ? { line: Number(m[1]), column: Number(m[2]) } : undefined;
}

/** Where `specifier` appears (quoted) in `file` → {line, column} (1-based). */
function findImport(file, specifier) {
  try {
    const src = readFileSync(file, "utf8");
    for (const q of ['"', "'", "`"]) {
      const idx = src.indexOf(q + specifier + q);
      if (idx >= 0) {
        const before = src.slice(0, idx);
        const line = before.split("\n").length;
        return { line, column: idx - before.lastIndexOf("\n") };
      }
    }
  } catch {
    // unreadable: no location
  }
  return undefined;
}

function packageName(spec) {
  if (spec.startsWith("@")) return spec.split("/").slice(0, 2).join("/");
  return spec.split("/")[0];
}

function missingModule(specifier, importer, hostDir) {
  const from = plainPath(importer) ?? "the plugin";
  const bare = !/^(\.|\/|file:)/.test(specifier);
  const loc = importer ? findImport(from, specifier) : undefined;
  let message;
  if (bare) {
    const pkg = packageName(specifier);
    const dir = dirname(from);
    if (hostDir && from.startsWith(hostDir)) {
      message = `cannot find package '${pkg}' for the plugin host: ${hostDir} is incomplete (delete it; podcode writes it again on the next start)`;
    } else {
      message = `cannot find package '${pkg}' imported from ${from} (looked in node_modules of ${dir} and every folder above it); install it there, e.g. cd ${dir} && npm install ${pkg}`;
    }
  } else {
    message = `cannot find module '${specifier}' imported from ${from}`;
  }
  return { message, data: { file: from, ...(loc ?? {}) } };
}

/** `node --check` (as an ES module) on a file's source: the location V8 did not give us. */
function syntaxLocation(file, source) {
  if (source === null) return undefined; // a .ts file we could not strip: no JavaScript to check
  try {
    const input = source ?? readFileSync(file, "utf8");
    execFileSync(process.execPath, ["--input-type=module", "--check", "-"], { input, stdio: ["pipe", "pipe", "pipe"], timeout: 10000 });
  } catch (err) {
    const text = String(err.stderr ?? "");
    const m = /^\[stdin\]:(\d+)\r?\n(.*)\r?\n(\s*)\^/m.exec(text);
    if (m) return { line: Number(m[1]), column: m[3].length + 1 };
  }
  return undefined;
}

/** On Node: which Bun globals a file's source uses (`Bun.$`, `Bun.file`, ...). */
export function bunApisIn(file) {
  if (IS_BUN) return [];
  try {
    const src = readFileSync(file, "utf8");
    const found = new Set();
    for (const m of src.matchAll(/\bBun\s*\.\s*([A-Za-z_$][\w$]*)/g)) found.add(`Bun.${m[1]}`);
    return [...found];
  } catch {
    return [];
  }
}

function needsBunMessage(file, apis, fallback) {
  return `${file} needs Bun (it uses ${apis.length ? apis.join(", ") : fallback}); ${NEEDS_BUN_HINT}`;
}

/**
 * A load failure → `{message, data}`. `file` is the plugin file being loaded; `ctx.hostDir`
 * names the host install (for missing host deps); `ctx.strippedSource(file)` returns the
 * type-stripped source on Node so `node --check` sees JavaScript.
 */
export function loadError(err, file, ctx = {}) {
  const data = { file };
  if (err && typeof err === "object" && typeof err.stack === "string") data.stack = err.stack;

  // Bun: a build failure (syntax error) is an AggregateError of BuildMessages with positions.
  const buildMsgs = Array.isArray(err?.errors) ? err.errors.filter((e) => e?.position) : [];
  if (buildMsgs.length) {
    const first = buildMsgs[0];
    const pos = first.position;
    const more = buildMsgs.length > 1 ? ` (and ${buildMsgs.length - 1} more)` : "";
    const where = plainPath(pos.file) ?? file;
    return {
      message: `syntax error in ${where} at line ${pos.line}, column ${pos.column}: ${messageOf(first)}${more}`,
      data: { file: where, line: pos.line, column: pos.column },
    };
  }
  if (err?.position && err?.name === "BuildMessage") {
    const pos = err.position;
    const where = plainPath(pos.file) ?? file;
    return {
      message: `syntax error in ${where} at line ${pos.line}, column ${pos.column}: ${messageOf(err)}`,
      data: { file: where, line: pos.line, column: pos.column },
    };
  }

  const msg = messageOf(err);
  if (/needs Bun \(it uses /.test(msg)) return { message: msg, data };
  if (!IS_BUN && /\bBun is not defined\b/.test(msg)) {
    return { message: needsBunMessage(file, bunApisIn(file), "the Bun global"), data: { ...data, ...(locationIn(err?.stack, file) ?? {}) } };
  }

  // Missing modules: Bun ResolveMessage (specifier/referrer) or Node ERR_MODULE_NOT_FOUND.
  if (err?.name === "ResolveMessage" || err?.code === "ERR_MODULE_NOT_FOUND" || /^Cannot find (package|module) /.test(msg)) {
    let specifier = err?.specifier;
    let importer = err?.referrer ?? err?.importer;
    const m = /Cannot find (?:package|module) '([^']+)' (?:imported )?from '?([^']+?)'?$/.exec(msg);
    if (m) {
      specifier ??= m[1];
      importer ??= m[2];
    }
    if (specifier) {
      if (/^\//.test(specifier) && specifier.includes("/node_modules/")) {
        specifier = specifier.replace(/^.*\/node_modules\//, "");
      }
      const r = missingModule(specifier, importer ?? file, ctx.hostDir);
      if (data.stack) r.data.stack = data.stack;
      return r;
    }
  }

  // Syntax errors (Node; Bun reports BuildMessages above). sucrase (.ts) says
  // "Error transforming <file>: <what> (line:col)"; V8 gives a compile error no location and
  // no frame in the file, so `node --check` finds it. A SyntaxError *thrown by running code*
  // (JSON.parse in server()) has a frame in the file and is reported like any other throw.
  const sucrase = /^Error transforming [^:]+: (.*?)\s*\((\d+):(\d+)\)\s*$/.exec(msg);
  if (sucrase) {
    const loc = { line: Number(sucrase[2]), column: Number(sucrase[3]) + 1 };
    return { message: `syntax error in ${file} at line ${loc.line}, column ${loc.column}: ${sucrase[1]}`, data: { ...data, ...loc } };
  }
  if (!IS_BUN && (err?.name === "SyntaxError" || err instanceof SyntaxError) && !locationIn(err.stack, file)) {
    const loc = syntaxLocation(file, ctx.strippedSource?.(file));
    if (loc) {
      return { message: `syntax error in ${file} at line ${loc.line}, column ${loc.column}: ${msg}`, data: { ...data, ...loc } };
    }
    return { message: `syntax error in ${file} (or a module it imports): ${msg}`, data };
  }

  const loc = locationIn(err?.stack, file);
  return { message: msg, data: { ...data, ...(loc ?? {}) } };
}

/**
 * A failure of execute / a hook → `{message, data}`. On Node, a Bun global used by the
 * plugin becomes the "needs Bun" message.
 */
export function callError(err, file, bunApis = []) {
  let message = messageOf(err);
  if (!IS_BUN && (/\bBun is not defined\b/.test(message) || /\$ is not a function/.test(message))) {
    message = needsBunMessage(file, bunApis, /\$/.test(message) ? "$ (Bun Shell)" : "the Bun global");
  }
  const data = { file };
  if (err && typeof err === "object" && typeof err.stack === "string") data.stack = err.stack;
  const loc = locationIn(err?.stack, file);
  return { message, data: { ...data, ...(loc ?? {}) } };
}
