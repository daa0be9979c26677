// zod_schema.mjs — Zod (v3 or v4, from ANY copy of zod) → JSON Schema (draft 2020-12 subset).
//
// Owns: recognising Zod schemas and Zod raw shapes (`{key: zodSchema}`), and converting them
// to the JSON Schema that goes into a ToolManifest's `parameters`. It reads only the public-ish
// internals every zod copy carries (v3: `schema._def.typeName`, v4: `schema._zod.def.type`), so
// it never needs the plugin's zod instance. Conversion never throws: a type it does not know
// becomes `{}` (accept anything). The INPUT side is described (transforms/pipes/effects use the
// schema they parse, defaults make a key optional), because that is what the model must send.

const LAZY_LIMIT = 4; // how many nested z.lazy() expansions before giving up with {}

export function isZodV4(x) {
  return !!x && typeof x === "object" && !!x._zod && !!x._zod.def && typeof x._zod.def.type === "string";
}

export function isZodV3(x) {
  return !!x && typeof x === "object" && !!x._def && typeof x._def.typeName === "string" && !isZodV4(x);
}

export function isZodSchema(x) {
  return isZodV4(x) || isZodV3(x);
}

/** A plain object (not itself a schema) whose every value is a Zod schema; `{}` counts. */
export function isRawShape(x) {
  if (!x || typeof x !== "object" || Array.isArray(x) || isZodSchema(x)) return false;
  return Object.values(x).every(isZodSchema);
}

export const SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema";

/** Converts a Zod schema or raw shape to the JSON Schema a tool's parameters are sent as:
 * the bytes opencode sends for the same tool (zod 4.1's `z.toJSONSchema(z.object(args),
 * {io: "input"})`): `$schema` first, `description` before the other keywords, a wrapper's own
 * keywords before its inner schema's, nullable as `anyOf [.., {type: "null"}]`, records with
 * `propertyNames`, and no empty `required`. Anything else becomes `{$schema}` only. */
export function toJsonSchema(schemaOrShape) {
  let body = {};
  if (isRawShape(schemaOrShape)) body = objectFromShape(schemaOrShape, {}, newState());
  else if (isZodSchema(schemaOrShape)) body = convert(schemaOrShape, newState());
  return { $schema: SCHEMA_DIALECT, ...body };
}

/** The same conversion without the top-level `$schema` (nested use, tests). */
export function toJsonSchemaBody(schemaOrShape) {
  const { $schema: _dialect, ...body } = toJsonSchema(schemaOrShape);
  return body;
}

function newState() {
  return { lazyDepth: 0, stack: new Set() };
}

/** Does this schema accept a missing (undefined) value on its input side? */
export function isOptionalInput(schema) {
  try {
    if (isZodV4(schema)) {
      // `optin` is zod 4's own answer (zod >= 4.x requires even an `any` key to be present).
      if (schema._zod.optin === "optional") return true;
      const t = schema._zod.def.type;
      return t === "optional" || t === "default" || t === "prefault";
    }
    if (isZodV3(schema)) {
      if (typeof schema.isOptional === "function") return !!schema.isOptional();
      const t = schema._def.typeName;
      return t === "ZodOptional" || t === "ZodDefault" || t === "ZodAny" || t === "ZodUnknown";
    }
  } catch {
    // isOptional() runs safeParse(undefined); an async refinement throws — treat as required.
  }
  return false;
}

/** May an object leave this key out? As zod 4 says (the reference); zod 3 also calls a bare
 * `any` / `unknown` optional, zod 4 (and so opencode) lists it as required. */
function isOptionalKey(schema) {
  if (isZodV3(schema) && (schema._def.typeName === "ZodAny" || schema._def.typeName === "ZodUnknown")) return false;
  return isOptionalInput(schema);
}

/** `.describe()` text of a schema, from any copy of zod. */
export function descriptionOf(schema) {
  try {
    if (isZodV3(schema)) {
      return strOrUndef(schema._def.description) ?? strOrUndef(schema.description);
    }
    if (isZodV4(schema)) {
      // Classic zod 4 exposes a `description` getter backed by its global registry; zod-mini does
      // not, so also ask the (shared, since 4.1) global registry and the def itself.
      const fromGetter = strOrUndef(schema.description);
      if (fromGetter !== undefined) return fromGetter;
      const reg = globalThis.__zod_globalRegistry;
      const fromReg = reg && typeof reg.get === "function" ? strOrUndef(reg.get(schema)?.description) : undefined;
      if (fromReg !== undefined) return fromReg;
      if (typeof schema.meta === "function") {
        const meta = schema.meta();
        if (meta && typeof meta === "object" && typeof meta.description === "string") return meta.description;
      }
      return strOrUndef(schema._zod.def.description);
    }
  } catch {
    // getters of exotic copies — no description then
  }
  return undefined;
}

function strOrUndef(v) {
  return typeof v === "string" ? v : undefined;
}

function convert(schema, state) {
  if (!isZodSchema(schema)) return {};
  if (state.stack.has(schema)) return {}; // recursive reference: accept anything
  state.stack.add(schema);
  let out;
  try {
    out = isZodV4(schema) ? convertV4(schema, state) : convertV3(schema, state);
  } catch {
    out = {};
  } finally {
    state.stack.delete(schema);
  }
  const desc = ownDescription(schema);
  if (desc !== undefined) {
    const { description: _inner, ...rest } = out;
    out = { description: desc, ...rest };
  }
  return out;
}

const V3_WRAPPERS = new Set(["ZodOptional", "ZodNullable", "ZodDefault", "ZodCatch", "ZodReadonly", "ZodBranded"]);

/** A schema's own description. zod 3 copies the inner schema's description onto the
 * wrappers `.optional()`, `.nullable()`, `.default()` make; zod 4 does not, and zod 4's output
 * is the reference, so a copied description counts as the inner schema's only. */
function ownDescription(schema) {
  const desc = descriptionOf(schema);
  if (desc === undefined || !isZodV3(schema) || !V3_WRAPPERS.has(schema._def.typeName)) return desc;
  const inner = schema._def.innerType ?? schema._def.type;
  return isZodSchema(inner) && descriptionOf(inner) === desc ? undefined : desc;
}

function lazy(getter, state) {
  if (state.lazyDepth >= LAZY_LIMIT) return {};
  state.lazyDepth++;
  try {
    return convert(getter(), state);
  } finally {
    state.lazyDepth--;
  }
}

function objectFromShape(shape, extra, state) {
  const properties = {};
  const required = [];
  for (const [key, value] of Object.entries(shape)) {
    properties[key] = convert(value, state);
    if (!isOptionalKey(value)) required.push(key);
  }
  return required.length ? { type: "object", properties, required, ...extra } : { type: "object", properties, ...extra };
}

function withDefault(js, value) {
  try {
    const v = typeof value === "function" ? value() : value;
    if (v === undefined || JSON.stringify(v) === undefined) return js;
    const { default: _inner, ...rest } = js;
    return { default: JSON.parse(JSON.stringify(v)), ...rest };
  } catch {
    return js;
  }
}

function nullable(js) {
  return { anyOf: [js, { type: "null" }] };
}

function literal(values) {
  const vals = values.filter((v) => v === null || ["string", "number", "boolean"].includes(typeof v));
  if (vals.length === 0) return {};
  const types = [...new Set(vals.map((v) => (v === null ? "null" : typeof v)))];
  const type = types.length === 1 ? { type: types[0] } : {};
  return vals.length === 1 ? { ...type, const: vals[0] } : { ...type, enum: vals };
}

function enumValues(entries) {
  // TS numeric enums carry reverse mappings (`{0: "A", A: 0}`); keep only the forward values.
  const keys = Object.keys(entries).filter((k) => typeof entries[entries[k]] !== "number");
  return keys.map((k) => entries[k]);
}

const FORMATS = {
  email: "email", url: "uri", uuid: "uuid", guid: "uuid", datetime: "date-time", date: "date",
  time: "time", duration: "duration", ipv4: "ipv4", ipv6: "ipv6", emoji: undefined,
};

function addPattern(js, re) {
  const src = re instanceof RegExp ? re.source : typeof re === "string" ? re : undefined;
  if (src === undefined) return;
  if (js.pattern === undefined) js.pattern = src;
  else (js.allOf ??= []).push({ pattern: src });
}

// ---------------------------------------------------------------- zod v3

function convertV3(s, state) {
  const def = s._def;
  switch (def.typeName) {
    case "ZodString": {
      const js = { type: "string" };
      for (const c of def.checks ?? []) {
        if (c.kind === "min") js.minLength = c.value;
        else if (c.kind === "max") js.maxLength = c.value;
        else if (c.kind === "length") js.minLength = js.maxLength = c.value;
        else if (c.kind === "regex") addPattern(js, c.regex);
        else if (FORMATS[c.kind]) js.format = FORMATS[c.kind];
      }
      return js;
    }
    case "ZodNumber": {
      const js = { type: "number" };
      for (const c of def.checks ?? []) {
        if (c.kind === "int") js.type = "integer";
        else if (c.kind === "min") js[c.inclusive === false ? "exclusiveMinimum" : "minimum"] = c.value;
        else if (c.kind === "max") js[c.inclusive === false ? "exclusiveMaximum" : "maximum"] = c.value;
        else if (c.kind === "multipleOf") js.multipleOf = c.value;
      }
      // zod 3's `.int()` is zod 4's safe integer, which opencode's serialiser bounds.
      return numberBounds(js, js.type === "integer" ? INT_RANGES.safeint : undefined);
    }
    case "ZodBigInt": return { type: "integer" };
    case "ZodBoolean": return { type: "boolean" };
    case "ZodDate": return { type: "string", format: "date-time" };
    case "ZodNull": return { type: "null" };
    case "ZodNever": return { not: {} };
    case "ZodLiteral": return literal([def.value]);
    case "ZodEnum": return { type: "string", enum: [...def.values] };
    case "ZodNativeEnum": return literal(enumValues(def.values));
    case "ZodArray": {
      // zod 4 writes the length keywords before `type` and `items`.
      const js = {};
      if (def.minLength) js.minItems = def.minLength.value;
      if (def.maxLength) js.maxItems = def.maxLength.value;
      if (def.exactLength) js.minItems = js.maxItems = def.exactLength.value;
      return { ...js, type: "array", items: convert(def.type, state) };
    }
    case "ZodObject": {
      const shape = typeof def.shape === "function" ? def.shape() : def.shape;
      const extra = {};
      const catchall = def.catchall;
      if (def.unknownKeys === "strict") extra.additionalProperties = false;
      else if (catchall && isZodV3(catchall) && catchall._def.typeName !== "ZodNever") {
        extra.additionalProperties = convert(catchall, state);
      }
      return objectFromShape(shape ?? {}, extra, state);
    }
    case "ZodOptional": return convert(def.innerType, state);
    case "ZodNullable": return nullable(convert(def.innerType, state));
    case "ZodDefault": return withDefault(convert(def.innerType, state), def.defaultValue);
    case "ZodCatch":
    case "ZodReadonly": return convert(def.innerType, state);
    case "ZodBranded": return convert(def.type, state);
    case "ZodPromise": return convert(def.type, state);
    case "ZodUnion":
    case "ZodDiscriminatedUnion": {
      const opts = def.options instanceof Map ? [...def.options.values()] : [...(def.options ?? [])];
      return { anyOf: opts.map((o) => convert(o, state)) };
    }
    case "ZodIntersection": return { allOf: [convert(def.left, state), convert(def.right, state)] };
    case "ZodRecord": return record(def.keyType, def.valueType, state);
    case "ZodSet": return { type: "array", uniqueItems: true, items: convert(def.valueType, state) };
    case "ZodTuple": return tuple(def.items ?? [], def.rest, state);
    case "ZodEffects": return convert(def.schema, state);
    case "ZodPipeline": return convert(def.in, state);
    case "ZodLazy": return lazy(def.getter, state);
    default: return {}; // ZodAny, ZodUnknown, ZodUndefined, ZodVoid, ZodMap, ZodFunction, ...
  }
}

function record(keyType, valueType, state) {
  const keys = keyType ? convert(keyType, state) : { type: "string" };
  delete keys.description;
  return { type: "object", propertyNames: keys, additionalProperties: valueType ? convert(valueType, state) : {} };
}

function tuple(items, rest, state) {
  const js = { type: "array", prefixItems: items.map((i) => convert(i, state)) };
  js.minItems = items.filter((i) => !isOptionalInput(i)).length;
  if (rest) js.items = convert(rest, state);
  else {
    js.items = false;
    js.maxItems = items.length;
  }
  return js;
}

// ---------------------------------------------------------------- zod v4

const INT_FORMATS = new Set(["safeint", "int32", "uint32", "int64", "uint64"]);

/** The range zod 4 gives each integer format (its JSON Schema states it as bounds). */
const INT_RANGES = {
  safeint: [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  int32: [-2147483648, 2147483647],
  uint32: [0, 4294967295],
};

const BOUND_KEYS = new Set(["minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf"]);

/**
 * A number's bounds as zod 4's serialiser (opencode's) writes them: an integer format's range
 * narrowed by the checks, the tighter of an inclusive and an exclusive bound, and the keys in
 * its order (lower bound, upper bound, multipleOf) whatever order the checks came in.
 */
function numberBounds(js, range) {
  let { minimum: min, exclusiveMinimum: xmin, maximum: max, exclusiveMaximum: xmax } = js;
  if (range && (min === undefined || min < range[0])) min = range[0];
  if (range && (max === undefined || max > range[1])) max = range[1];
  const out = {};
  for (const [k, v] of Object.entries(js)) if (!BOUND_KEYS.has(k)) out[k] = v;
  if (xmin !== undefined && (min === undefined || min <= xmin)) out.exclusiveMinimum = xmin;
  else if (min !== undefined) out.minimum = min;
  if (xmax !== undefined && (max === undefined || max >= xmax)) out.exclusiveMaximum = xmax;
  else if (max !== undefined) out.maximum = max;
  if (js.multipleOf !== undefined) out.multipleOf = js.multipleOf;
  return out;
}

function checkDefs(def) {
  return (def.checks ?? []).map((c) => c?._zod?.def ?? {}).filter((d) => typeof d.check === "string");
}

function applyV4Checks(js, def) {
  // A format schema (z.email(), z.int()) is itself a check; its def carries `check` + `format`.
  const defs = typeof def.check === "string" ? [def, ...checkDefs(def)] : checkDefs(def);
  const isArray = js.type === "array";
  for (const c of defs) {
    switch (c.check) {
      case "min_length": js[isArray ? "minItems" : "minLength"] = c.minimum; break;
      case "max_length": js[isArray ? "maxItems" : "maxLength"] = c.maximum; break;
      case "length_equals":
        if (isArray) js.minItems = js.maxItems = c.length;
        else js.minLength = js.maxLength = c.length;
        break;
      case "string_format":
        if (c.format === "regex") addPattern(js, c.pattern);
        else if (FORMATS[c.format]) js.format = FORMATS[c.format];
        break;
      case "number_format":
        if (INT_FORMATS.has(c.format)) js.type = "integer";
        break;
      case "greater_than": js[c.inclusive ? "minimum" : "exclusiveMinimum"] = numberOf(c.value); break;
      case "less_than": js[c.inclusive ? "maximum" : "exclusiveMaximum"] = numberOf(c.value); break;
      case "multiple_of": js.multipleOf = numberOf(c.value); break;
      default: break;
    }
  }
  return js;
}

function numberOf(v) {
  return typeof v === "bigint" ? Number(v) : v instanceof Date ? v.getTime() : v;
}

function convertV4(s, state) {
  const def = s._zod.def;
  switch (def.type) {
    case "string": return applyV4Checks({ type: "string" }, def);
    case "number": {
      const js = applyV4Checks({ type: "number" }, def);
      if (INT_FORMATS.has(def.format)) js.type = "integer";
      const format = [def.format, ...checkDefs(def).map((c) => c.format)].find((f) => INT_RANGES[f]);
      return numberBounds(js, INT_RANGES[format]);
    }
    case "bigint": return applyV4Checks({ type: "integer" }, def);
    case "boolean": return { type: "boolean" };
    case "date": return { type: "string", format: "date-time" };
    case "null": return { type: "null" };
    case "never": return { not: {} };
    case "literal": return literal([...(def.values ?? [])]);
    case "enum": {
      const values = enumValues(def.entries ?? {});
      return values.every((v) => typeof v === "string") ? { type: "string", enum: values } : literal(values);
    }
    case "template_literal": return def.pattern instanceof RegExp ? { type: "string", pattern: def.pattern.source } : { type: "string" };
    case "array": {
      // zod 4 writes the length keywords before `type` and `items`.
      const lengths = applyV4Checks({ type: "array" }, def);
      delete lengths.type;
      return { ...lengths, type: "array", items: convert(def.element, state) };
    }
    case "set": return { type: "array", uniqueItems: true, items: convert(def.valueType, state) };
    case "object": {
      const extra = {};
      const catchall = def.catchall;
      if (catchall && isZodV4(catchall)) {
        const t = catchall._zod.def.type;
        if (t === "never") extra.additionalProperties = false;
        else if (t !== "unknown" && t !== "any") extra.additionalProperties = convert(catchall, state);
      }
      return objectFromShape(def.shape ?? {}, extra, state);
    }
    case "optional":
    case "nonoptional":
    case "catch":
    case "readonly":
    case "promise": return convert(def.innerType, state);
    case "nullable": return nullable(convert(def.innerType, state));
    case "default":
    case "prefault": return withDefault(convert(def.innerType, state), def.defaultValue);
    case "union": return { anyOf: [...(def.options ?? [])].map((o) => convert(o, state)) };
    case "intersection": return { allOf: [convert(def.left, state), convert(def.right, state)] };
    case "record": return record(def.keyType, def.valueType, state);
    case "tuple": return tuple(def.items ?? [], def.rest, state);
    case "pipe": {
      // z.preprocess(fn, schema) is pipe(transform, schema): the input is then unknown,
      // but the schema after it is the best description of what to send.
      const input = def.in;
      if (isZodV4(input) && input._zod.def.type === "transform") return convert(def.out, state);
      return convert(input, state);
    }
    case "lazy": return lazy(def.getter, state);
    default: return {}; // any, unknown, undefined, void, transform, custom, map, file, symbol, nan, ...
  }
}
