// deps.mjs — what a plugin file's load depended on, for the Rust side's manifest cache.
//
// Owns: `dependenciesOf(entry)`, a static walk from the plugin file through the modules it
// imports (`import … from`, `export … from`, `import()`, `require()` with a literal
// specifier), resolving each specifier from the importing file as the runtime does: local
// modules (relative or absolute, outside node_modules) are followed transitively and listed
// in `files`; a bare specifier is a package, listed in `packages` with the version and the
// package.json it resolved to (packages are not walked: their version stands for them).
// Built-ins (`node:*`, `bun:*`) and the shim packages the host provides are skipped. The walk
// is static, so it also runs when the import itself fails (a missing package): the Rust side
// then watches the resolution path of every listed file for the package to appear.

import { builtinModules, createRequire } from "node:module";
import { readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve as resolvePath } from "node:path";

const SPEC_RE = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)(["'])([^"'\n]+)\1/g;
const SHIMS = new Set(["@opencode-ai/plugin", "@opencode-ai/plugin/tool", "@podcode/plugin"]);
const BUILTINS = new Set(builtinModules);
const MAX_FILES = 500;

function isFile(p) {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** TypeScript-style candidates for a relative specifier (`./x` → `./x.ts`, `./x.js` → `./x.ts`). */
function candidates(base) {
  const out = [base];
  const m = /^(.*)\.(js|mjs|jsx)$/.exec(base);
  if (m) out.push(`${m[1]}.ts`, `${m[1]}.tsx`, `${m[1]}.mts`);
  for (const ext of [".ts", ".tsx", ".mts", ".js", ".mjs", ".cjs", ".jsx"]) out.push(base + ext);
  for (const ext of ["ts", "js", "mjs"]) out.push(join(base, `index.${ext}`));
  return out;
}

function resolveLocal(spec, from) {
  const base = spec.startsWith("file://") ? new URL(spec).pathname : isAbsolute(spec) ? spec : resolvePath(dirname(from), spec);
  const found = candidates(base).find(isFile);
  if (found) return found;
  try {
    return globalThis.Bun ? globalThis.Bun.resolveSync(spec, dirname(from)) : createRequire(from).resolve(spec);
  } catch {
    return undefined;
  }
}

function packageName(spec) {
  return spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0];
}

/** The package.json `name` resolves to from `from` (walking node_modules upwards), if any. */
function findPackage(name, from) {
  let dir = dirname(from);
  for (;;) {
    const pj = join(dir, "node_modules", name, "package.json");
    if (isFile(pj)) {
      let version = null;
      try {
        version = JSON.parse(readFileSync(pj, "utf8")).version ?? null;
      } catch {
        // unreadable: its stamp still keys the cache
      }
      return { name, version, packageJson: pj };
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** `{files, packages}` the load of `entry` depends on (see the module comment). */
export function dependenciesOf(entry) {
  const files = [];
  const packages = new Map();
  const seen = new Set();
  const queue = [entry];
  while (queue.length && files.length < MAX_FILES) {
    const file = queue.shift();
    if (seen.has(file)) continue;
    seen.add(file);
    let source;
    try {
      source = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    files.push(file);
    for (const m of source.matchAll(SPEC_RE)) {
      const spec = m[2];
      if (SHIMS.has(spec) || spec.startsWith("node:") || spec.startsWith("bun:") || spec === "bun" || BUILTINS.has(spec)) continue;
      if (/^(\.{1,2}\/|\/|file:\/\/)/.test(spec)) {
        const target = resolveLocal(spec, file);
        if (target && !target.includes("/node_modules/")) queue.push(target);
        continue;
      }
      const name = packageName(spec);
      if (!packages.has(name)) {
        const found = findPackage(name, file);
        if (found) packages.set(name, found);
      }
    }
  }
  return { files, packages: [...packages.values()] };
}
