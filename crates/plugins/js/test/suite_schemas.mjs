// suite_schemas.mjs — zod v3 and v4 side by side through a real host process: the same
// kitchen-sink schema built with four zod copies (fixture's zod 3, real zod 4, zod 3.25's
// bundled v4, the host's zod) converts to the same JSON Schema with every .describe() kept,
// validates with the tool's own copy (issue paths, defaults, transforms), and raw shapes from
// zod 3 and zod 4 drop unknown keys and apply defaults.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { HostClient, ensureFixtureDeps, fixture, load, makeHostDir } from "./harness.mjs";

const obj = (properties, required, extra = {}) => ({ type: "object", properties, required, ...extra });

const DIALECT = "https://json-schema.org/draft/2020-12/schema";
export const SINK_SCHEMA = { $schema: DIALECT, ...obj({
  s: { type: "string", minLength: 2, maxLength: 10, pattern: "^[a-z]+$", description: "a string" },
  n: { type: "number", minimum: 0, maximum: 100, description: "a number" },
  i: { type: "integer", minimum: -9007199254740991, maximum: 9007199254740991, description: "an int" },
  b: { type: "boolean", description: "a boolean" },
  e: { type: "string", enum: ["red", "green"], description: "an enum" },
  l: { type: "string", const: "fixed", description: "a literal" },
  a: { type: "array", items: { type: "string", description: "an item" }, minItems: 1, maxItems: 3, description: "an array" },
  o: obj({ inner: { type: "string", description: "an inner field" } }, ["inner"], { additionalProperties: false, description: "a strict object" }),
  opt: { type: "string", description: "an optional" },
  def: { type: "number", default: 5, description: "a default" },
  nul: { anyOf: [{ type: "string" }, { type: "null" }], description: "a nullable" },
  u: { anyOf: [{ type: "string" }, { type: "number" }], description: "a union" },
  du: {
    anyOf: [
      obj({ kind: { type: "string", const: "a" }, x: { type: "string" } }, ["kind", "x"]),
      obj({ kind: { type: "string", const: "b" }, y: { type: "number" } }, ["kind", "y"]),
    ],
    description: "a discriminated union",
  },
  r: { type: "object", propertyNames: { type: "string" }, additionalProperties: { type: "number" }, description: "a record" },
  t: { type: "string", description: "a transform" },
  lz: { type: "string", description: "a lazy" },
  any: { description: "anything" },
  ne: { type: "string", enum: ["red", "blue"], description: "a native enum" },
  tags: {
    type: "array",
    items: obj({ name: { type: "string", minLength: 1, description: "a tag name" } }, ["name"]),
    default: [],
    description: "tags",
  },
}, ["s", "n", "i", "b", "e", "l", "a", "o", "nul", "u", "du", "r", "t", "lz", "ne"]) };

const GOOD = {
  s: "abc", n: 5, i: 3, b: true, e: "red", l: "fixed", a: ["x"], o: { inner: "y" }, nul: null, u: 1,
  du: { kind: "a", x: "q" }, r: { k: 1 }, t: "abcd", lz: "z", ne: "blue",
};

const BAD = { ...GOOD, s: "A", n: 200, i: 1.5, o: { inner: "y", extra: 1 }, tags: [{ name: "ok" }, { name: "" }] };

export function schemaSuite(runtime, skip) {
  describe(`zod v3 and v4 side by side on ${runtime}`, { skip }, () => {
    let client;
    const SCHEMAS = fixture(".podcode/plugins/schemas.ts");
    const SHAPES = fixture(".opencode/tools/zod4-shape.ts");

    before(async () => {
      ensureFixtureDeps();
      client = new HostClient(runtime, makeHostDir());
    });
    after(async () => {
      await client?.close();
    });

    const TOOLS = ["sink_v3", "sink_v4", "sink_v4_bundled", "sink_host"];

    test("every zod copy converts to the same JSON Schema, descriptions kept", async () => {
      const r = await load(client, SCHEMAS, "podcode");
      assert.deepEqual(r.warnings, []);
      assert.deepEqual(r.tools.map((t) => t.id), TOOLS);
      for (const t of r.tools) assert.deepEqual(t.parameters, SINK_SCHEMA, t.id);
    });

    test("validation with the tool's own zod: defaults and transforms applied", async () => {
      for (const tool of TOOLS) {
        const v = await client.request("validate", { path: SCHEMAS, tool, args: { ...GOOD, unknown: "dropped" } });
        assert.deepEqual(v, { ok: true, args: { ...GOOD, t: 4, def: 5, tags: [] } }, tool);
      }
    });

    test("validation issues carry dotted paths with [i] indexes", async () => {
      for (const tool of TOOLS) {
        const v = await client.request("validate", { path: SCHEMAS, tool, args: BAD });
        assert.equal(v.ok, false, tool);
        assert.deepEqual([...new Set(v.issues.map((i) => i.path))].sort(), ["i", "n", "o", "s", "tags[1].name"], tool);
        for (const i of v.issues) assert.ok(typeof i.message === "string" && i.message.length > 0);
      }
      const root = await client.request("validate", { path: SCHEMAS, tool: "sink_v4", args: "not an object" });
      assert.deepEqual(root.issues.map((i) => i.path), ["(root)"]);
    });

    test("raw shapes from zod 3 and zod 4: unknown keys dropped, defaults applied, paths", async () => {
      const r = await load(client, SHAPES, "opencode-tools");
      // A module namespace lists its exports in code-point order, hence v3 before v4.
      assert.deepEqual(r.tools.map((t) => t.id), ["zod4-shape_v3", "zod4-shape_v4"]);
      const expected = { $schema: DIALECT, ...obj({
        name: { type: "string", minLength: 1, description: "A name" },
        count: { type: "integer", minimum: -9007199254740991, maximum: 9007199254740991, default: 3, description: "How many" },
        tags: { type: "array", items: obj({ name: { type: "string" } }, ["name"]), description: "Tags" },
      }, ["name"]) };
      for (const t of r.tools) assert.deepEqual(t.parameters, expected, t.id);
      for (const tool of ["zod4-shape_v3", "zod4-shape_v4"]) {
        assert.deepEqual(await client.request("validate", { path: SHAPES, tool, args: { name: "x", other: 1 } }), { ok: true, args: { name: "x", count: 3 } });
        const bad = await client.request("validate", { path: SHAPES, tool, args: { name: "", count: 1.5, tags: [{ name: 1 }] } });
        assert.deepEqual(bad.issues.map((i) => i.path), ["name", "count", "tags[0].name"], tool);
        const missing = await client.request("validate", { path: SHAPES, tool, args: {} });
        assert.deepEqual(missing.issues.map((i) => i.path), ["name"], tool);
      }
    });
  });
}
