// shim/plugin.mjs — what `@opencode-ai/plugin`, `@opencode-ai/plugin/tool` and `@podcode/plugin`
// resolve to inside the Podcode plugin host (whether or not they are installed beside a plugin).
//
// Owns: `tool(def)` (the identity function, as in opencode: it only gives TypeScript its types)
// with `tool.schema` = the host's zod `z` (zod 3.25.76, bundled in vendor/zod.mjs), and
// `z` itself. Types such as `Plugin` are TypeScript-only and vanish when types are stripped.

import { z } from "../vendor/zod.mjs";

export function tool(input) {
  return input;
}

tool.schema = z;

export { z };
