// zod_schema.test.mjs — in-process unit tests of zod_schema.mjs and validate.mjs, one type at
// a time, for zod 3, real zod 4 and the zod 4 bundled in zod 3.25 (all from the fixtures'
// node_modules, i.e. copies other than the host's own).

import assert from "node:assert/strict";
import { test } from "node:test";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { FIXTURES, ensureFixtureDeps } from "./harness.mjs";
import { isRawShape, isZodSchema, toJsonSchemaBody as toJsonSchema } from "../zod_schema.mjs";
import { formatPath, validateArgs } from "../validate.mjs";

ensureFixtureDeps();
const req = createRequire(join(FIXTURES, "package.json"));
const load = async (spec) => import(pathToFileURL(req.resolve(spec)).href);
const z3 = (await load("zod")).z;
const z4 = (await load("zod4")).z;
const z4b = (await load("zod/v4")).z;

const NumEnum = { A: 0, B: 1, 0: "A", 1: "B" }; // what TypeScript emits for `enum { A, B }`

for (const [name, z] of [["zod 3", z3], ["zod 4", z4], ["zod 4 (bundled in 3.25)", z4b]]) {
  const eq = (schema, expected) => assert.deepEqual(toJsonSchema(schema), expected);

  test(`${name}: scalars, checks and descriptions`, () => {
    assert.ok(isZodSchema(z.string()));
    eq(z.string(), { type: "string" });
    eq(z.string().describe("d"), { type: "string", description: "d" });
    eq(z.string().min(1).max(9), { type: "string", minLength: 1, maxLength: 9 });
    eq(z.string().length(3), { type: "string", minLength: 3, maxLength: 3 });
    eq(z.string().regex(/^a/).regex(/b$/), { type: "string", pattern: "^a", allOf: [{ pattern: "b$" }] });
    eq(z.string().email(), { type: "string", format: "email" });
    eq(z.number(), { type: "number" });
    eq(z.number().int().min(1).max(5), { type: "integer", minimum: 1, maximum: 5 });
    // Integers carry zod 4's safe range, as opencode sends them; bounds in its key order.
    const bytes = (schema, expected) => assert.equal(JSON.stringify(toJsonSchema(schema)), expected);
    bytes(z.number().int(), '{"type":"integer","minimum":-9007199254740991,"maximum":9007199254740991}');
    bytes(z.number().int().nonnegative(), '{"type":"integer","minimum":0,"maximum":9007199254740991}');
    bytes(z.number().int().positive(), '{"type":"integer","exclusiveMinimum":0,"maximum":9007199254740991}');
    bytes(z.number().int().positive().min(3), '{"type":"integer","minimum":3,"maximum":9007199254740991}');
    bytes(z.number().int().lt(7), '{"type":"integer","minimum":-9007199254740991,"exclusiveMaximum":7}');
    bytes(z.number().multipleOf(2).max(5).min(1), '{"type":"number","minimum":1,"maximum":5,"multipleOf":2}');
    eq(z.number().gt(0).lt(1), { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 });
    eq(z.boolean(), { type: "boolean" });
    eq(z.date(), { type: "string", format: "date-time" });
    eq(z.any(), {});
    eq(z.unknown().describe("whatever"), { description: "whatever" });
  });

  test(`${name}: enums and literals`, () => {
    eq(z.enum(["a", "b"]), { type: "string", enum: ["a", "b"] });
    eq(z.nativeEnum(NumEnum), { type: "number", enum: [0, 1] });
    eq(z.nativeEnum({ X: "x", Y: "y" }), { type: "string", enum: ["x", "y"] });
    eq(z.literal("on"), { type: "string", const: "on" });
    eq(z.literal(3), { type: "number", const: 3 });
  });

  test(`${name}: objects, arrays, optional, default, nullable`, () => {
    eq(z.object({ a: z.string(), b: z.number().optional(), c: z.boolean().default(true) }), {
      type: "object",
      properties: { a: { type: "string" }, b: { type: "number" }, c: { type: "boolean", default: true } },
      required: ["a"],
    });
    eq(z.object({ a: z.string() }).strict(), { type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: false });
    eq(z.object({}).passthrough(), { type: "object", properties: {} });
    eq(z.object({}).catchall(z.number()), { type: "object", properties: {}, additionalProperties: { type: "number" } });
    eq(z.array(z.number()).min(1).max(4), { type: "array", items: { type: "number" }, minItems: 1, maxItems: 4 });
    eq(z.array(z.number()).length(2), { type: "array", items: { type: "number" }, minItems: 2, maxItems: 2 });
    eq(z.string().nullable(), { anyOf: [{ type: "string" }, { type: "null" }] });
    eq(z.enum(["a"]).nullable(), { anyOf: [{ type: "string", enum: ["a"] }, { type: "null" }] });
    eq(z.union([z.string(), z.number()]).nullable(), { anyOf: [{ anyOf: [{ type: "string" }, { type: "number" }] }, { type: "null" }] });
    eq(z.string().default(() => "gen"), { type: "string", default: "gen" });
    eq(z.string().describe("inner").optional(), { type: "string", description: "inner" });
    eq(z.string().optional().describe("outer"), { type: "string", description: "outer" });
    eq(z.number().default(2).describe("n"), { type: "number", default: 2, description: "n" });
  });

  test(`${name}: unions, records, tuples, intersections`, () => {
    eq(z.union([z.string(), z.literal(1)]), { anyOf: [{ type: "string" }, { type: "number", const: 1 }] });
    eq(z.discriminatedUnion("k", [z.object({ k: z.literal("a") }), z.object({ k: z.literal("b") })]), {
      anyOf: [
        { type: "object", properties: { k: { type: "string", const: "a" } }, required: ["k"] },
        { type: "object", properties: { k: { type: "string", const: "b" } }, required: ["k"] },
      ],
    });
    eq(z.record(z.string(), z.number()), { type: "object", propertyNames: { type: "string" }, additionalProperties: { type: "number" } });
    eq(z.record(z.enum(["x", "y"]), z.string()), { type: "object", additionalProperties: { type: "string" }, propertyNames: { type: "string", enum: ["x", "y"] } });
    eq(z.tuple([z.string(), z.number()]), { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], minItems: 2, items: false, maxItems: 2 });
    eq(z.intersection(z.object({ a: z.string() }), z.object({ b: z.string() })), {
      allOf: [
        { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
        { type: "object", properties: { b: { type: "string" } }, required: ["b"] },
      ],
    });
  });

  test(`${name}: transforms, pipes, refinements and preprocess use the input side`, () => {
    eq(z.string().transform((s) => s.length), { type: "string" });
    eq(z.string().refine(() => true).describe("r"), { type: "string", description: "r" });
    eq(z.string().pipe(z.string().min(1)), { type: "string" });
    eq(z.preprocess((v) => v, z.number()), { type: "number" });
  });

  test(`${name}: recursive lazy schemas are bounded`, () => {
    const Tree = z.lazy(() => z.object({ name: z.string(), children: z.array(Tree) }));
    const js = toJsonSchema(Tree);
    assert.equal(js.type, "object");
    let depth = 0;
    for (let node = js; node && node.type === "object"; node = node.properties.children.items) depth++;
    assert.ok(depth >= 1 && depth <= 5, `depth ${depth}`);
  });

  test(`${name}: raw shapes`, () => {
    const shape = { a: z.string().describe("A"), b: z.number().default(1) };
    assert.ok(isRawShape(shape));
    eq(shape, { type: "object", properties: { a: { type: "string", description: "A" }, b: { type: "number", default: 1 } }, required: ["a"] });
  });

  test(`${name}: validation (own safeParse; defaults; dotted paths; unknown keys dropped)`, async () => {
    const shape = { name: z.string(), n: z.number().default(7), tags: z.array(z.object({ v: z.string() })).optional() };
    assert.deepEqual(await validateArgs(shape, { name: "x", extra: true }), { ok: true, args: { name: "x", n: 7 } });
    const bad = await validateArgs(shape, { name: 1, tags: [{ v: "ok" }, { v: 2 }] });
    assert.deepEqual(bad.issues.map((i) => i.path), ["name", "tags[1].v"]);
    const obj = z.object({ list: z.array(z.number()) });
    assert.deepEqual((await validateArgs(obj, { list: [1, "2"] })).issues.map((i) => i.path), ["list[1]"]);
    assert.deepEqual((await validateArgs(z.string(), 5)).issues.map((i) => i.path), ["(root)"]);
    assert.deepEqual(await validateArgs(z.object({ s: z.string().transform((s) => s.toUpperCase()) }), { s: "a" }), { ok: true, args: { s: "A" } });
  });
}

test("raw shape helpers and path formatting", async () => {
  assert.ok(isRawShape({}));
  assert.equal(isRawShape({ a: 1 }), false);
  assert.equal(isRawShape(z3.object({})), false);
  assert.deepEqual(toJsonSchema("not a schema"), {});
  assert.equal(formatPath([]), "(root)");
  assert.equal(formatPath(["tags", 0, "name"]), "tags[0].name");
  assert.equal(formatPath([{ key: "a" }, { key: 2 }]), "a[2]");
  assert.deepEqual(await validateArgs(undefined, { any: 1 }), { ok: true, args: {} });
  assert.deepEqual((await validateArgs({ a: z3.string() }, [1])).issues, [{ path: "(root)", message: "expected an object of arguments" }]);
});
