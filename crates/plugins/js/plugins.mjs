// plugins.mjs — loading plugin files and keeping what they registered.
//
// Owns: the fresh import of a file (`?v=<mtimeNs>-<size>` so a changed file reloads), the formats
// ("podcode", "opencode-tools", "opencode-plugin", and "plugin" = decide by shape), pluginConfig[id]
// as a podcode server()'s config, the plugin `input` (opencode's PluginInput: `$`, `client`
// from client.mjs, whose calls during the load are returned as `logs`, `project`,
// `serverUrl`, `experimental_workspace`),
// turning each tool into a ToolManifest (JSON Schema parameters, truncation, idempotent,
// timeout), and the registry `path → {tools, hookSets, bunApis}` used by validate / execute /
// hook. Failures throw a HostError carrying the protocol `{message, data}`; both a result and
// a failure carry `dependencies` (deps.mjs) for the Rust side's cache.

import { readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import { describeAuth } from "./auth.mjs";
import { collectingClientCalls, makeClient } from "./client.mjs";
import { dependenciesOf } from "./deps.mjs";
import { IS_BUN, NEEDS_BUN_HINT, bunApisIn, callError, loadError } from "./errors.mjs";
import { isRawShape, isZodSchema, toJsonSchema } from "./zod_schema.mjs";

/** The zod bundled in vendor/ (package.json pins it). */
const HOST_ZOD_VERSION = "3.25.76";

/** An error with the protocol's `data` ({file, line, column, stack, ...}) attached. */
export class HostError extends Error {
  constructor(message, data, original) {
    super(message);
    this.data = data;
    this.original = original;
  }
}

/** path → {format, tools: Map<id, ToolDef>, hookSets: object[], bunApis: string[]} */
export const registry = new Map();

/** Set by host.mjs on Node: returns the type-stripped source of a .ts file (for errors),
 * once `prepare()` has loaded the stripper. */
export const hooksForErrors = { hostDir: undefined, strippedSource: undefined, prepare: undefined };

/** Set by host.mjs on Bun: prepares the shim mapping for a file before it is imported. */
export const importHooks = { beforeImport: undefined };

/** Adapters plugins registered through `input.experimental_workspace.register` (Podcode
 * keeps them; it creates no workspaces of other types). */
export const workspaceAdapters = new Map();

/** opencode's PluginInput, keys in opencode's order: the data Rust sent (`directory`,
 * `worktree`, `project`, `serverUrl`) plus `client`, `experimental_workspace` and `$`
 * (`Bun.$`, running in the sidecar's cwd, which host.mjs set to the session directory). */
function pluginInput(input, path) {
  const given = input && typeof input === "object" ? input : {};
  const project = given.project && typeof given.project === "object" ? { ...given.project } : {};
  // opencode's project outside git has the `vcs` key, undefined.
  if (project.vcs === null) project.vcs = undefined;
  let serverUrl;
  try {
    serverUrl = new URL(given.serverUrl ?? "http://localhost:4096");
  } catch {
    serverUrl = new URL("http://localhost:4096");
  }
  return {
    client: makeClient(path),
    project,
    worktree: given.worktree,
    directory: given.directory,
    experimental_workspace: {
      register(type, adapter) {
        workspaceAdapters.set(type, adapter);
      },
    },
    serverUrl,
    $: IS_BUN && globalThis.Bun?.$ ? globalThis.Bun.$ : undefined,
  };
}

function fileStem(path) {
  return basename(path).replace(/\.(m|c)?(j|t)sx?$/, "");
}

async function freshImport(path) {
  let version;
  try {
    // No "." in the query: Bun takes the text after the last dot as the file's extension and
    // would then skip the onLoad hook that maps the shim imports.
    const st = statSync(path, { bigint: true });
    version = `${st.mtimeNs}-${st.size}`;
  } catch (err) {
    throw new HostError(`cannot read plugin file ${path}: ${err.code ?? err.message}`, { file: path });
  }
  // Bun drops the query of a file:// URL (so it would serve the cached module): give it the
  // plain path. Node needs a URL (a path with % or # in it is not a valid specifier).
  const url = IS_BUN ? `${path}?v=${version}` : `${pathToFileURL(path).href}?v=${version}`;
  try {
    importHooks.beforeImport?.(path);
    return await import(url);
  } catch (err) {
    await hooksForErrors.prepare?.().catch(() => {});
    const { message, data } = loadError(err, path, hooksForErrors);
    throw new HostError(message, data, err);
  }
}

function looksLikeTool(v) {
  return !!v && typeof v === "object" && "description" in v && "args" in v && typeof v.execute === "function";
}

/** Normalises one tool definition; returns {def, manifest} or a warning string. */
function makeTool(id, raw, schemaKey, path) {
  if (typeof id !== "string" || id === "") return `${path}: a tool has no id`;
  if (!raw || typeof raw !== "object") return `${path}: tool ${id} is not an object`;
  if (typeof raw.execute !== "function") return `${path}: tool ${id} has no execute function`;
  const description = typeof raw.description === "string" ? raw.description : "";
  let parameters = raw[schemaKey] ?? raw.parameters ?? raw.args;
  if (parameters === undefined || parameters === null) parameters = {};
  if (!isZodSchema(parameters) && !isRawShape(parameters)) {
    return `${path}: tool ${id} has ${schemaKey} that are neither a Zod schema nor a map of Zod schemas`;
  }
  const warnings = [];
  let truncation = raw.truncation ?? "head";
  if (truncation !== "head" && truncation !== "tail") {
    warnings.push(`${path}: tool ${id} has truncation ${JSON.stringify(truncation)}; using "head"`);
    truncation = "head";
  }
  const manifest = {
    id,
    description,
    parameters: toJsonSchema(parameters),
    truncation,
    idempotent: raw.idempotent === true,
  };
  if (typeof raw.timeout === "number" && Number.isFinite(raw.timeout) && raw.timeout > 0) {
    manifest.timeout = Math.round(raw.timeout);
  }
  return { def: { id, parameters, execute: raw.execute.bind(raw), raw }, manifest, warnings };
}

function hookNames(hookSets) {
  const names = new Set();
  for (const h of hookSets) {
    // `auth` and `provider` are objects in opencode's Hooks; every other hook is a function.
    for (const [k, v] of Object.entries(h ?? {})) {
      if (k !== "tool" && (typeof v === "function" || (v !== null && typeof v === "object"))) names.add(k);
    }
  }
  return [...names];
}

async function callPlugin(fn, args, path) {
  try {
    return await fn(...args);
  } catch (err) {
    const { message, data } = loadError(err, path, hooksForErrors);
    throw new HostError(message, data);
  }
}

function isPodcodePlugin(mod) {
  const d = mod?.default;
  return !!d && typeof d === "object" && typeof d.server === "function";
}

/** The `config` a podcode plugin's server() receives: `pluginConfig[id]`, else undefined. */
function configFor(pluginId, pluginConfig, legacyConfig) {
  if (pluginConfig && typeof pluginConfig === "object") {
    return pluginId !== undefined && Object.prototype.hasOwnProperty.call(pluginConfig, pluginId) ? pluginConfig[pluginId] : undefined;
  }
  return legacyConfig; // an older Rust side sent the plugin's own table as `config`
}

const BARE_ZOD_RE = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["']zod(?:\/v3)?["']/;

/** When `path` imports a bare `zod` its folder cannot resolve, the module hooks gave it the
 * host's zod: say so (`podcode plugins` prints it). */
function hostZodNote(path) {
  let source;
  try {
    source = readFileSync(path, "utf8");
  } catch {
    return null;
  }
  if (!BARE_ZOD_RE.test(source)) return null;
  try {
    createRequire(path).resolve("zod");
    return null;
  } catch {
    return {
      kind: "host",
      level: "info",
      service: "",
      message: `zod is not installed beside this file, so it uses Podcode's zod ${HOST_ZOD_VERSION} (run \`npm install zod\` in its folder to choose another)`,
    };
  }
}

/** Imports and registers `path`; returns the protocol LoadResult. */
export async function loadPlugin(params) {
  const path = params?.path;
  if (typeof path !== "string" || path === "") throw new HostError("load needs a path", {});
  // What the load depends on keys the Rust side's manifest cache, for failures too (a
  // missing package is retried once its node_modules changes).
  const dependencies = dependenciesOf(path);
  const calls = { file: path, entries: [] };
  try {
    const result = await collectingClientCalls(calls, () => loadUnregistered(params));
    const zodNote = hostZodNote(path);
    return { ...result, logs: zodNote ? [zodNote, ...calls.entries] : calls.entries, dependencies };
  } catch (err) {
    registry.delete(path); // a failed reload leaves nothing half-registered
    if (!(err instanceof HostError)) {
      const { message, data } = callError(err, path);
      throw new HostError(message, { ...data, dependencies });
    }
    err.data = { ...err.data, dependencies };
    throw err;
  }
}

async function loadUnregistered({ path, format: requested, pluginConfig, config, input }) {
  const known = ["podcode", "opencode-tools", "opencode-plugin", "plugin"];
  if (!known.includes(requested)) {
    throw new HostError(`unknown plugin format ${JSON.stringify(requested)} (expected ${known.join(", ")})`, { file: path });
  }
  const mod = await freshImport(path);
  // "plugin": a file from a plugins/ folder; its shape decides.
  const format = requested === "plugin" ? (isPodcodePlugin(mod) ? "podcode" : "opencode-plugin") : requested;
  const pin = pluginInput(input, path);
  const warnings = [];
  const candidates = []; // [id, rawToolDef, schemaKey]
  const hookSets = [];
  let pluginId;

  if (format === "podcode") {
    const plugin = mod.default;
    if (plugin && typeof plugin.id === "string") pluginId = plugin.id;
    if (!plugin || typeof plugin.server !== "function") {
      throw new HostError(`${path} does not export default { id, server() } (a Podcode plugin)`, { file: path });
    }
    let hooks;
    try {
      const cfg = configFor(pluginId, pluginConfig, config);
      hooks = (await callPlugin(plugin.server.bind(plugin), [pin, { config: cfg }], path)) ?? {};
    } catch (err) {
      if (pluginId !== undefined && err instanceof HostError) err.data = { ...err.data, pluginId };
      throw err;
    }
    hookSets.push(hooks);
    let defs = hooks.tool;
    if (typeof defs === "function") defs = await callPlugin(defs.bind(hooks), [pin], path);
    if (Array.isArray(defs)) for (const d of defs) candidates.push([d?.id, d, "parameters"]);
    else if (defs && typeof defs === "object") for (const [k, d] of Object.entries(defs)) candidates.push([d?.id ?? k, d, "parameters"]);
    else if (defs !== undefined) warnings.push(`${path}: hooks.tool returned neither a list nor a map of tools`);
  } else if (format === "opencode-tools") {
    const stem = fileStem(path);
    for (const [name, value] of Object.entries(mod)) {
      if (!looksLikeTool(value)) continue;
      candidates.push([name === "default" ? stem : `${stem}_${name}`, value, "args"]);
    }
    if (candidates.length === 0) warnings.push(`${path} exports no tool`);
  } else {
    // "opencode-plugin"
    const seen = new Set();
    for (const value of Object.values(mod)) {
      if (typeof value !== "function" || seen.has(value)) continue;
      seen.add(value);
      const hooks = (await callPlugin(value, [pin], path)) ?? {};
      hookSets.push(hooks);
      if (hooks.tool && typeof hooks.tool === "object") {
        for (const [id, d] of Object.entries(hooks.tool)) candidates.push([id, d, "args"]);
      }
    }
    if (seen.size === 0) warnings.push(`${path} exports no plugin function`);
  }

  const tools = new Map();
  const manifests = [];
  for (const [id, raw, key] of candidates) {
    const made = makeTool(id, raw, key, path);
    if (typeof made === "string") {
      warnings.push(made);
      continue;
    }
    if (tools.has(id)) {
      warnings.push(`${path}: tool ${id} is defined twice; keeping the first`);
      continue;
    }
    warnings.push(...made.warnings);
    tools.set(id, made.def);
    manifests.push(made.manifest);
  }

  const bunApis = bunApisIn(path);
  if (bunApis.length && manifests.length) {
    warnings.push(`${path} uses ${bunApis.join(", ")}, which only Bun provides: its calls fail on Node; ${NEEDS_BUN_HINT}`);
  }
  // Registered only now: calls in flight during a reload keep using the previous definitions.
  registry.set(path, { format, tools, hookSets, bunApis });
  const auth = describeAuth(hookSets, path, warnings);
  return { pluginId: pluginId ?? null, format, tools: manifests, hooks: hookNames(hookSets), ...(auth.length ? { auth } : {}), warnings };
}

export function findTool(path, id) {
  const entry = registry.get(path);
  if (!entry) throw new HostError(`${path} is not loaded`, { file: path });
  const def = entry.tools.get(id);
  if (!def) throw new HostError(`${path} has no tool ${id}`, { file: path });
  return { entry, def };
}
