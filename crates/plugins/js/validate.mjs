// validate.mjs — argument validation with the tool's OWN zod schema (v3 or v4, any copy).
//
// Owns: running `safeParseAsync` (falling back to `safeParse` or the Standard Schema
// `~standard.validate`) on a tool's parameters, the raw-shape rule (each key's schema parses
// `args[key]`, unknown keys are dropped, a missing key passes `undefined` so optional/default
// work), and mapping issues to `{path, message}` with dotted paths, `[i]` for array indexes and
// `(root)` for the whole value. The parsed value (defaults and coercions applied) is returned.

import { isRawShape, isZodSchema } from "./zod_schema.mjs";

/** Formats a zod / Standard Schema issue path: ["tags", 0, "name"] → "tags[0].name". */
export function formatPath(path) {
  if (!Array.isArray(path) || path.length === 0) return "(root)";
  let out = "";
  for (const raw of path) {
    const seg = raw !== null && typeof raw === "object" && "key" in raw ? raw.key : raw;
    if (typeof seg === "number") out += `[${seg}]`;
    else out += (out === "" ? "" : ".") + String(typeof seg === "symbol" ? seg.description ?? "symbol" : seg);
  }
  return out === "" ? "(root)" : out;
}

async function parseWith(schema, value) {
  if (typeof schema.safeParseAsync === "function") return schema.safeParseAsync(value);
  if (typeof schema.safeParse === "function") return schema.safeParse(value);
  const std = schema["~standard"];
  if (std && typeof std.validate === "function") {
    const r = await std.validate(value);
    if (r.issues) return { success: false, error: { issues: r.issues } };
    return { success: true, data: r.value };
  }
  throw new Error("the tool's parameters are not a Zod schema");
}

function issuesOf(result, prefix) {
  const list = result?.error?.issues ?? result?.error?.errors ?? [];
  const issues = list.map((i) => ({
    path: formatPath([...prefix, ...(Array.isArray(i.path) ? i.path : [])]),
    message: typeof i.message === "string" && i.message !== "" ? i.message : "invalid value",
  }));
  if (issues.length === 0) {
    issues.push({ path: formatPath(prefix), message: String(result?.error?.message ?? "invalid value") });
  }
  return issues;
}

/**
 * Validates `args` against `parameters` (a Zod schema, a raw shape, or undefined = no args).
 * Returns `{ok: true, args}` or `{ok: false, issues}`.
 */
export async function validateArgs(parameters, args) {
  if (parameters === undefined || parameters === null) parameters = {};
  if (isRawShape(parameters)) {
    const input = args === undefined || args === null ? {} : args;
    if (typeof input !== "object" || Array.isArray(input)) {
      return { ok: false, issues: [{ path: "(root)", message: "expected an object of arguments" }] };
    }
    const out = {};
    const issues = [];
    for (const [key, schema] of Object.entries(parameters)) {
      const r = await parseWith(schema, Object.prototype.hasOwnProperty.call(input, key) ? input[key] : undefined);
      if (r.success) {
        if (r.data !== undefined) out[key] = r.data;
      } else {
        issues.push(...issuesOf(r, [key]));
      }
    }
    return issues.length ? { ok: false, issues } : { ok: true, args: out };
  }
  if (!isZodSchema(parameters) && !parameters["~standard"]) {
    throw new Error("the tool's parameters are neither a Zod schema nor a Zod raw shape");
  }
  const r = await parseWith(parameters, args === undefined ? {} : args);
  if (r.success) return { ok: true, args: r.data };
  return { ok: false, issues: issuesOf(r, []) };
}
