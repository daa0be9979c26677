// opencode_schema.test.mjs — the JSON Schema Podcode sends for a tool is byte for byte what
// opencode sends for the same tool file. opencode converts `z.object(args)` with zod 4's own
// serialiser (`z.toJSONSchema(schema, { io: "input" })`, zod 4.1.8 in its lock file); the
// fixtures install that zod as `zod-opencode`. Each shape of the table is built with every
// zod copy a tool file may use (the host's zod 3 through `tool.schema`, zod 3, zod 4, zod 4
// bundled in zod 3.25) and must serialise to the reference's exact bytes.

import assert from "node:assert/strict";
import { test } from "node:test";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { FIXTURES, ensureFixtureDeps } from "./harness.mjs";
import { toJsonSchema } from "../zod_schema.mjs";
import { z as hostZ } from "../vendor/zod.mjs";

ensureFixtureDeps();
const req = createRequire(join(FIXTURES, "package.json"));
const load = async (spec) => import(pathToFileURL(req.resolve(spec)).href);
const reference = (await load("zod-opencode")).z;
const COPIES = [
  ["host zod (tool.schema)", hostZ],
  ["zod 3", (await load("zod")).z],
  ["zod 4", (await load("zod4")).z],
  ["zod 4 (bundled in 3.25)", (await load("zod/v4")).z],
];

/** The table: name → shape builder over a given `z`. */
const SHAPES = {
  "required string": (z) => ({ a: z.string() }),
  optional: (z) => ({ a: z.string().optional() }),
  default: (z) => ({ a: z.number().default(3) }),
  nullable: (z) => ({ a: z.string().nullable() }),
  enum: (z) => ({ a: z.enum(["x", "y"]) }),
  union: (z) => ({ a: z.union([z.string(), z.number()]) }),
  "discriminated union": (z) => ({
    u: z.discriminatedUnion("k", [z.object({ k: z.literal("a"), x: z.string() }), z.object({ k: z.literal("b") })]),
  }),
  "nested objects": (z) => ({ o: z.object({ b: z.string().optional() }), o2: z.object({ c: z.number() }) }),
  "nullable nested object": (z) => ({ o: z.object({ x: z.string().nullable() }).nullable() }),
  "array of objects": (z) => ({ a: z.array(z.object({ n: z.string() })).min(1).max(4) }),
  record: (z) => ({ r: z.record(z.string(), z.number()) }),
  literal: (z) => ({ a: z.literal("on") }),
  "no arguments": () => ({}),
  "strict object": (z) => ({ o: z.object({ a: z.string() }).strict() }),
  "integer range": (z) => ({ n: z.number().int().min(1).max(5) }),
  "bare integer": (z) => ({ n: z.number().int() }),
  "integer bounds": (z) => ({ a: z.number().int().nonnegative(), b: z.number().int().positive(), c: z.number().int().lt(7) }),
  "number bounds in any order": (z) => ({ n: z.number().multipleOf(2).max(5).min(1), p: z.number().positive() }),
  "string checks": (z) => ({ a: z.string().min(2).max(5).regex(/^a/).describe("s") }),
  descriptions: (z) => ({ a: z.string().describe("the a"), b: z.object({ c: z.string().describe("cc") }).describe("bee") }),
  "optional, described after": (z) => ({ a: z.string().optional().describe("d") }),
  "described, optional after": (z) => ({ a: z.string().describe("d").optional() }),
  "default, described after": (z) => ({ a: z.number().default(3).describe("d") }),
  "described, default after": (z) => ({ a: z.number().describe("d").default(3) }),
  "nullable, described after": (z) => ({ a: z.string().nullable().describe("d") }),
  "described, nullable after": (z) => ({ a: z.string().describe("d").nullable() }),
  "array default": (z) => ({ t: z.array(z.string()).default([]).describe("tags") }),
  "optional enum": (z) => ({ a: z.enum(["a", "b"]).optional().describe("x") }),
  "described any": (z) => ({ a: z.any().describe("x") }),
  "optional boolean": (z) => ({ b: z.boolean().optional() }),
};

for (const [shape, build] of Object.entries(SHAPES)) {
  test(`${shape}: the bytes opencode sends`, () => {
    const expected = JSON.stringify(reference.toJSONSchema(reference.object(build(reference)), { io: "input" }));
    for (const [copy, z] of COPIES) {
      assert.equal(JSON.stringify(toJsonSchema(build(z))), expected, `${shape} built with ${copy}`);
    }
  });
}

test("the top level names the 2020-12 dialect and no level has an empty required", () => {
  const js = toJsonSchema({ o: hostZ.object({ p: hostZ.string().optional() }).optional() });
  assert.equal(
    JSON.stringify(js),
    '{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"o":{"type":"object","properties":{"p":{"type":"string"}}}}}',
  );
});
