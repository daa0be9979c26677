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
// Bun must not auto-install packages a plugin imports: bunfig.toml beside host.mjs sets
// `install.auto = "disable"` (Bun reads it from the cwd, which is the host dir).

import { readFileSync, realpathSync } from "node:fs";
import { dirname } from "node:path";

const SPECIFIER_RE = /(\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(["'])(@opencode-ai\/plugin(?:\/tool)?|@podcode\/plugin)\2/g;
const RELATIVE_RE = /(?:\bfrom\s*|\bimport\s*\(?\s*)(["'])(\.{1,2}\/[^"'\n]+)\1/g;
const SOURCE_RE = /\.(?:[mc]?[jt]s|[jt]sx)$/;

let shimPath = null;
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

/** Rewrites the shim specifiers in `source` to `shim` (exported for tests). */
export function rewriteShimImports(source, shim) {
  if (!namesShim(source)) return source;
  return source.replace(SPECIFIER_RE, (_all, lead) => `${lead}${JSON.stringify(shim)}`);
}

export function installBunResolution({ shimPath: shim }) {
  shimPath = shim;
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
    if (namesShim(source) && !hooked.has(file)) fresh.push(file);
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
        return { contents: rewriteShimImports(readFileSync(file, "utf8"), shimPath), loader: loaderFor(file) };
      });
    },
  });
}
