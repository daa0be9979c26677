// node_loader.mjs — Node (20+) module hooks, registered by host.mjs with `module.register()`.
//
// Owns, for every module the Node sidecar imports:
// - resolve: `@opencode-ai/plugin`, `@opencode-ai/plugin/tool`, `@podcode/plugin` → the host's
//   shim (so they work when not installed beside the plugin); `bun` / `bun:*` → a clear
//   "<file> needs Bun (it uses bun:sqlite); install it with npm install -g bun" error;
//   a bare `zod` (or `zod/v3`) that the plugin's folder cannot resolve → the host's zod 3;
//   TypeScript-style relative specifiers from a .ts file (`./x`, `./x.js` meaning `./x.ts`);
//   everything else through Node's own resolution from the importing file's location.
// - load: `.ts` / `.mts` / `.tsx` files are stripped of types with sucrase (line numbers kept)
//   (bundled in vendor/sucrase.mjs) and loaded as ES modules.
// Runs on Node's hooks thread: it shares nothing with host.mjs except the `data` passed in.

import { existsSync, readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const SHIM_NAMES = new Set(["@opencode-ai/plugin", "@opencode-ai/plugin/tool", "@podcode/plugin"]);
const TS_RE = /\.(ts|mts|tsx)$/;

let shimURL = null;
let hostZodURL = null;
let sucrase = null;

export async function initialize(data) {
  shimURL = data?.shimURL ?? null;
  hostZodURL = data?.hostZodURL ?? null;
}

/** `zod` and `zod/v3` name the host's zod (3.25.76) when the plugin's folder has none. */
const HOST_ZOD_NAMES = new Set(["zod", "zod/v3"]);

function pathOf(url) {
  try {
    return fileURLToPath(url.replace(/[?#].*$/, ""));
  } catch {
    return url;
  }
}

function isFile(p) {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** TypeScript resolves `./x` and `./x.js` to `./x.ts`; Node's ESM resolver does not. */
function tsCandidates(specifier) {
  const m = /^(.*?)(\.(?:js|mjs|jsx))?$/.exec(specifier);
  const base = m[1];
  const ext = m[2];
  if (ext === ".js") return [`${base}.ts`, `${base}.tsx`];
  if (ext === ".mjs") return [`${base}.mts`];
  if (ext === ".jsx") return [`${base}.tsx`];
  return [`${specifier}.ts`, `${specifier}.tsx`, `${specifier}.mts`, `${specifier}.js`, `${specifier}.mjs`,
    `${specifier}/index.ts`, `${specifier}/index.js`];
}

export async function resolve(specifier, context, nextResolve) {
  if (SHIM_NAMES.has(specifier) && shimURL) return { url: shimURL, format: "module", shortCircuit: true };
  if (specifier === "bun" || specifier.startsWith("bun:")) {
    const from = context.parentURL ? pathOf(context.parentURL) : "this plugin";
    const err = new Error(`${from} needs Bun (it uses ${specifier}); install it with npm install -g bun`);
    err.code = "ERR_PODCODE_NEEDS_BUN";
    throw err;
  }
  try {
    return await nextResolve(specifier, context);
  } catch (err) {
    if (HOST_ZOD_NAMES.has(specifier) && hostZodURL && err?.code === "ERR_MODULE_NOT_FOUND") {
      return { url: hostZodURL, format: "module", shortCircuit: true };
    }
    const parent = context.parentURL;
    if (parent && parent.startsWith("file:") && /^\.{1,2}\//.test(specifier) && TS_RE.test(pathOf(parent))) {
      for (const cand of tsCandidates(specifier)) {
        const url = new URL(cand, parent);
        if (isFile(fileURLToPath(url))) return { url: url.href, shortCircuit: true };
      }
    }
    throw err;
  }
}

async function stripper() {
  // Bundled with the host (vendor/), so it is always there and needs no install.
  sucrase ??= await import("./vendor/sucrase.mjs");
  return sucrase;
}

/** sucrase options: strip types only, keep line numbers (shared with host.mjs's error path). */
export function sucraseOptions(filePath) {
  return {
    transforms: filePath.endsWith(".tsx") ? ["typescript", "jsx"] : ["typescript"],
    filePath,
    disableESTransforms: true,
    injectCreateRequireForImportRequire: true,
    jsxRuntime: "automatic",
    production: true,
  };
}

export async function load(url, context, nextLoad) {
  if (url.startsWith("file:")) {
    const file = pathOf(url);
    if (TS_RE.test(file) && existsSync(file)) {
      const source = readFileSync(file, "utf8");
      const { transform } = await stripper(); // its own clear error when sucrase is missing
      let code;
      try {
        code = transform(source, sucraseOptions(file)).code;
      } catch (err) {
        // sucrase errors end in "(line:col)"; keep that so the host can report a location.
        throw new SyntaxError(String(err?.message ?? err));
      }
      return { format: "module", source: code, shortCircuit: true };
    }
  }
  return nextLoad(url, context);
}
