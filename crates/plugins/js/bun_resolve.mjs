// bun_resolve.mjs — module resolution for plugins on Bun.
//
// Owns: making `@opencode-ai/plugin`, `@opencode-ai/plugin/tool` and `@podcode/plugin` resolve to
// the host's shim on Bun even when they are not installed beside the plugin file.
//
// Why onLoad and not onResolve: in Bun 1.4 a runtime plugin's `onResolve` never fires for bare
// specifiers imported by a module (only `onLoad` does; oven-sh/bun#40579, #40397). So before a
// plugin file is imported, `prepareBunImport(file)` walks the file and its relative imports
// (outside node_modules) and, for each one whose text names one of those packages, registers
// an `onLoad` hook for exactly that path. The hook rewrites the three specifiers to the shim's
// absolute path and hands the text back to Bun's own transpiler with the loader its extension
// calls for. Nothing else changes (line numbers stay true), and files that do not name the
// shim are never hooked, so Bun loads them as usual (CommonJS helpers included). The hook
// matches a `?v=<n>` query, which is how the host busts Bun's module cache on reload.
//
// A bare `zod` import that the file's own folder cannot resolve is rewritten the same way to
// the host's zod (3.25.76, vendor/zod.mjs), as the specification promises plugins zod@^3.
//
// Bun must not auto-install packages a plugin imports: bunfig.toml beside host.mjs sets
// `install.auto = "disable"` (Bun reads it from the cwd, which is the host dir).

import { readFileSync, realpathSync } from "node:fs";
import { dirname } from "node:path";

const SPECIFIER_RE = /(\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(["'])(@opencode-ai\/plugin(?:\/tool)?|@podcode\/plugin)\2/g;
const ZOD_RE = /(\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(["'])(zod(?:\/v3)?)\2/g;
const RELATIVE_RE = /(?:\bfrom\s*|\bimport\s*\(?\s*)(["'])(\.{1,2}\/[^"'\n]+)\1/g;
const SOURCE_RE = /\.(?:[mc]?[jt]s|[jt]sx)$/;

let shimPath = null;
let hostZodPath = null;
const hooked = new Set();

function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

function loaderFor(path) {
  if (/\.(ts|mts|cts)$/.test(path)) return "ts";
  if (path.endsWith(".tsx")) return "tsx";
  if (path.endsWith(".jsx")) return "jsx";
  return "js";
}

function namesShim(source) {
  return source.includes("@opencode-ai/plugin") || source.includes("@podcode/plugin");
}

/** Does `file` import a bare `zod` its own folder cannot resolve? Then it gets the host's. */
function needsHostZod(file, source) {
  if (!hostZodPath || !source.includes("zod")) return false;
  ZOD_RE.lastIndex = 0;
  if (!ZOD_RE.test(source)) return false;
  try {
    globalThis.Bun.resolveSync("zod", dirname(file));
    return false;
  } catch {
    return true;
  }
}

/** Rewrites the shim specifiers in `source` to `shim`, and a bare `zod` to `zod` when given
 * (exported for tests). */
export function rewriteShimImports(source, shim, zod) {
  let out = source;
  if (namesShim(out)) out = out.replace(SPECIFIER_RE, (_all, lead) => `${lead}${JSON.stringify(shim)}`);
  if (zod) out = out.replace(ZOD_RE, (_all, lead) => `${lead}${JSON.stringify(zod)}`);
  return out;
}

export function installBunResolution({ shimPath: shim, hostZodPath: zod }) {
  shimPath = shim;
  hostZodPath = zod ?? null;
}

const zodFallback = new Set(); // files whose bare `zod` is rewritten to the host's

function realOrSelf(file) {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/** Hooks `entry` and the relative modules it reaches that import the shim packages. */
export function prepareBunImport(entry) {
  const fresh = [];
  const seen = new Set();
  const queue = [entry];
  while (queue.length && seen.size < 500) {
    const file = queue.shift();
    if (seen.has(file)) continue;
    seen.add(file);
    let source;
    try {
      source = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    const zod = needsHostZod(file, source);
    for (const name of [file, realOrSelf(file)]) {
      if (zod) zodFallback.add(name);
      else zodFallback.delete(name);
    }
    if ((namesShim(source) || zod) && !hooked.has(file)) fresh.push(file);
    for (const m of source.matchAll(RELATIVE_RE)) {
      try {
        const target = globalThis.Bun.resolveSync(m[2], dirname(file));
        if (SOURCE_RE.test(target) && !target.includes("/node_modules/")) queue.push(target);
      } catch {
        // unresolvable here: the import itself will report it
      }
    }
  }
  if (fresh.length === 0) return;
  const paths = new Set();
  for (const f of fresh) {
    hooked.add(f);
    paths.add(f);
    try {
      paths.add(realpathSync(f)); // Bun may report a symlinked file by its real path
    } catch {
      // vanished meanwhile: the import will say so
    }
  }
  const filter = new RegExp(`^(?:${[...paths].map(escapeRe).join("|")})(?:\\?.*)?$`);
  globalThis.Bun.plugin({
    name: "podcode-plugin-shim",
    setup(build) {
      build.onLoad({ filter }, (args) => {
        const file = args.path.replace(/\?.*$/, "");
        const zod = zodFallback.has(file) ? hostZodPath : undefined;
        return { contents: rewriteShimImports(readFileSync(file, "utf8"), shimPath, zod), loader: loaderFor(file) };
      });
    },
  });
}
