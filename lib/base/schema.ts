/**
 * One schema idiom for untrusted input and published shapes. A schema is a
 * plain JSON Schema object (what tools/list and the results resource publish,
 * byte for byte: the builders write keys in the order they are given), and
 * its TypeScript type is read from it with {@linkcode Infer} — so the value a
 * handler reads and the object a tool answers are checked by the compiler
 * against the very schema that is published. {@linkcode issueOf} checks an
 * unknown value against a schema and says what is wrong, naming the field
 * and quoting the value ({@linkcode expected}, {@linkcode shown}).
 *
 * The subset: `type` (one name or a list), `enum`, `const`, `properties`,
 * `required`, `additionalProperties: false`, `items`, `uniqueItems`,
 * `maxItems`, and the bounds `minimum`, `maximum`, `maxLength`, which are
 * checked only when asked ({@linkcode CheckOptions.bounds}): a tool's
 * argument out of range is the tool's own error, not a schema violation.
 *
 * Chosen over zod 4 and valibot (issue 35): nothing to download or import
 * at start-up, the published bytes are the schema itself, and the messages
 * are the project's own.
 *
 * @module
 */

/** Any JSON value (a schema with no shape stands for this). */
export type Json =
  | string
  | number
  | boolean
  | null
  | Json[]
  | { [key: string]: Json };

/** The JSON Schema type names. */
export type TypeName =
  | "string"
  | "integer"
  | "number"
  | "boolean"
  | "null"
  | "object"
  | "array";

/** Prose a schema may carry (published). */
type Described = {
  readonly description?: string;
};

/** A string, optionally one of a fixed set. */
export type StringSchema<E extends string = string> = Described & {
  readonly type: "string";
  readonly enum?: readonly E[];
  readonly maxLength?: number;
  readonly default?: string;
};

/** An integer or a number, optionally bounded. */
export type NumberSchema = Described & {
  readonly type: "integer" | "number";
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: number;
};

/** true or false. */
export type BooleanSchema = Described & {
  readonly type: "boolean";
  readonly default?: boolean;
};

/** One of several JSON types (`["string", "null"]`). */
export type UnionSchema = Described & {
  readonly type: readonly TypeName[];
  readonly minimum?: number;
};

/** One of a fixed set of values, of no declared type. */
export type EnumSchema<E extends string = string> = Described & {
  readonly enum: readonly E[];
};

/** Exactly one value. */
export type ConstSchema<C extends string | number | boolean = boolean> =
  & Described
  & {
    readonly const: C;
  };

/** Any JSON value, said in prose only (`{"description": ...}`). */
export type AnySchema = {
  readonly description: string;
  readonly type?: never;
  readonly enum?: never;
  readonly const?: never;
};

/** A list; with `items`, of one kind. */
export type ArraySchema<I extends Schema = Schema> = Described & {
  readonly type: "array";
  readonly items?: I;
  readonly uniqueItems?: boolean;
  readonly maxItems?: number;
};

/** A closed object (`additionalProperties: false`) with its fields. */
export type ObjectSchema<
  P extends Properties = Properties,
  R extends string = string,
> = {
  readonly type: "object";
  readonly description?: string;
  readonly properties: P;
  /** Absent when no field is required. */
  readonly required?: readonly R[];
  readonly additionalProperties: false;
};

/**
 * Where a refined schema keeps its own check (a symbol: JSON.stringify and
 * Object.keys never see it, so what is published stays the JSON Schema).
 */
export const CHECK: unique symbol = Symbol("schema.check");
declare const TYPE: unique symbol;

/** A schema's own check: a problem (`must be ...`) or null. */
export type Check = (value: unknown) => string | null;

/** A schema with its own check and, where JSON Schema cannot say it, type. */
export type Refined<T> = {
  readonly [CHECK]: Check;
  readonly [TYPE]?: T;
};

/** Every kind of schema. */
export type Schema =
  | StringSchema
  | NumberSchema
  | BooleanSchema
  | UnionSchema
  | EnumSchema
  | ConstSchema<string | number | boolean>
  | AnySchema
  | AnyArraySchema
  | AnyObjectSchema;

/** A list of any kind (a recursive {@linkcode Schema}). */
type AnyArraySchema = Described & {
  readonly type: "array";
  readonly items?: Schema;
  readonly uniqueItems?: boolean;
  readonly maxItems?: number;
};

/** An object of any fields (a recursive {@linkcode Schema}). */
type AnyObjectSchema = Described & {
  readonly type: "object";
  readonly properties?: { readonly [key: string]: Schema };
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean;
};

/** An object's fields. */
export type Properties = { readonly [key: string]: Schema };

type Named<T> = T extends "string" ? string
  : T extends "integer" | "number" ? number
  : T extends "boolean" ? boolean
  : T extends "null" ? null
  : T extends "array" ? Json[]
  : T extends "object" ? { [key: string]: Json }
  : never;

/** One flat object type (what the compiler says in a message). */
type Flat<T> = { [K in keyof T]: T[K] } & unknown;

/** The fields of an object: the required ones present, the others optional. */
export type InferObject<P extends Properties, R extends string> = Flat<
  & { [K in keyof P & R]: Infer<P[K]> }
  & { [K in Exclude<keyof P & string, R>]?: Infer<P[K]> }
>;

/** The TypeScript type of the values schema `S` admits. */
export type Infer<S> = S extends Refined<infer T> ? T
  : S extends { readonly const: infer C } ? C
  : S extends { readonly enum: readonly (infer E)[] } ? E
  : S extends { readonly type: "object"; readonly properties: infer P }
    ? P extends Properties ? InferObject<
        P,
        S extends { readonly required?: readonly (infer R)[] } ? R & string
          : never
      >
    : never
  : S extends { readonly type: "array"; readonly items: infer I } ? Infer<I>[]
  : S extends { readonly type: infer T }
    ? T extends readonly (infer N)[] ? Named<N>
    : Named<T>
  : Json;

/**
 * `true` when `A` and `B` are the same type, optional fields included (each
 * assignable to the other, with the same keys): `const _: Same<Settings,
 * Infer<typeof SCHEMA>> = true` fails the check once they part.
 */
export type Same<A, B> = [A, keyof A] extends [B, keyof B]
  ? [B, keyof B] extends [A, keyof A] ? true : false
  : false;

/** A string's published options (written in the order given). */
export type StringOptions = Omit<StringSchema, "type" | "enum">;
/** A number's published options (written in the order given). */
export type NumberOptions = Omit<NumberSchema, "type">;
/** A list's published options (written in the order given). */
export type ArrayOptions = Omit<ArraySchema, "type" | "items">;

/** A string (options are published as given, in order). */
export function string(
  options?: StringOptions,
): StringSchema & { readonly enum?: never } {
  return { type: "string", ...options };
}

/** A string from a fixed set: `{"type": "string", "enum": [...]}`. */
export function choice<const E extends string>(
  values: readonly E[],
  options?: StringOptions,
): StringSchema<E> & { readonly enum: readonly E[] } {
  return { type: "string", enum: values, ...options };
}

/** One of a fixed set, no type named: `{"enum": [...]}`. */
export function enumOf<const E extends string>(
  values: readonly E[],
): EnumSchema<E> {
  return { enum: values };
}

/** Exactly `value`: `{"const": value}`. */
export function literal<const C extends string | number | boolean>(
  value: C,
  options?: Described,
): ConstSchema<C> {
  return { const: value, ...options };
}

/** An integer. */
export function integer(
  options?: NumberOptions,
): NumberSchema & { readonly type: "integer" } {
  return { type: "integer", ...options };
}

/** A finite number. */
export function number(
  options?: NumberOptions,
): NumberSchema & { readonly type: "number" } {
  return { type: "number", ...options };
}

/** true or false. */
export function boolean(
  options?: Omit<BooleanSchema, "type">,
): BooleanSchema {
  return { type: "boolean", ...options };
}

/** `schema`'s type or null: `{"type": ["string", "null"], ...}`. */
export function nullable<
  const S extends (StringSchema | NumberSchema | BooleanSchema) & {
    readonly enum?: never;
  },
>(
  schema: S,
): Omit<S, "type"> & { readonly type: readonly [S["type"], "null"] } {
  return { ...schema, type: [schema.type, "null"] as const };
}

/** Any JSON value, described: `{"description": ...}`. */
export function any(description: string): AnySchema {
  return { description };
}

/** A list of `items`. */
export function array<const I extends Schema>(
  items: I,
  options?: ArrayOptions,
): ArrayOptions & { readonly type: "array"; readonly items: I } {
  return { type: "array", items, ...options };
}

/**
 * `schema` with a check of its own, which decides in the schema's stead:
 * what it says is the message (`has "x", which is not an origin`), and `T`
 * is its type where the JSON Schema subset cannot say it (a word or an
 * object). The schema is what is published.
 */
export function refine<const S extends Schema, T = Infer<S>>(
  schema: S,
  check: Check,
): S & Refined<T> {
  return Object.assign({ ...schema }, { [CHECK]: check }) as S & Refined<T>;
}

/** Strings, numbers, booleans or nulls (`execute_query`'s `params`). */
export const SCALAR = {
  type: ["string", "number", "boolean", "null"],
} as const satisfies UnionSchema;

/**
 * A closed object: `{"type": "object", "description"?, "properties",
 * "required" (when any), "additionalProperties": false}`.
 */
export function object<
  const P extends Properties,
  const R extends keyof P & string = never,
>(
  properties: P,
  required: readonly R[] = [],
  options: Described = {},
): ObjectSchema<P, R> {
  return {
    type: "object",
    ...options,
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

/** What a value failed: its place, and what was wanted there. */
export type Issue =
  | {
    kind: "type";
    /** Field names and list indexes from the top; [] for the value itself. */
    path: readonly (string | number)[];
    /** What the value must be ({@linkcode expected}). */
    expected: string;
    value: unknown;
  }
  | {
    kind: "unknown";
    path: readonly (string | number)[];
    /** The field a closed object does not take. */
    key: string;
    /** The fields it does take, in order. */
    known: readonly string[];
  }
  | {
    kind: "required";
    path: readonly (string | number)[];
    key: string;
  }
  | {
    kind: "invalid";
    path: readonly (string | number)[];
    /** What a refined schema's own check said. */
    problem: string;
    value: unknown;
  };

/** How {@linkcode issueOf} checks. */
export interface CheckOptions {
  /** Check `minimum`, `maximum` and `maxLength` too (default: false). */
  bounds?: boolean;
}

const PLURAL: Readonly<Record<TypeName, string>> = {
  string: "strings",
  integer: "integers",
  number: "numbers",
  boolean: "booleans",
  null: "nulls",
  object: "objects",
  array: "lists",
};

const SINGULAR: Readonly<Record<TypeName, string>> = {
  string: "a string",
  integer: "an integer",
  number: "a number",
  boolean: "true or false",
  null: "null",
  object: "an object",
  array: "a list",
};

function either(words: readonly string[]): string {
  return words.length < 2
    ? words.join("")
    : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}

function quoted(values: readonly unknown[]): string {
  return values.map((value) => JSON.stringify(value)).join(", ");
}

function bounds(schema: Schema, options: CheckOptions): string {
  if (!options.bounds || !("minimum" in schema || "maximum" in schema)) {
    return "";
  }
  const { minimum, maximum } = schema as NumberSchema;
  if (minimum !== undefined && maximum !== undefined) {
    return ` from ${minimum} to ${maximum}`;
  }
  return minimum !== undefined
    ? ` of at least ${minimum}`
    : ` of at most ${maximum}`;
}

/** The plural of a list's items: `strings`, `values of "a", "b"`. */
function pluralOf(items: Schema | undefined): string {
  if (items === undefined) return "values";
  if ("enum" in items && items.enum !== undefined) {
    return `values of ${quoted(items.enum)}`;
  }
  if ("const" in items) return `values of ${quoted([items.const])}`;
  if (!("type" in items) || items.type === undefined) return "values";
  const type: TypeName | readonly TypeName[] = items.type;
  return either(
    (typeof type === "string" ? [type] : type).map((t) => PLURAL[t]),
  );
}

/**
 * What a value of `schema` must be, as a message says it: `a string`,
 * `one of "csv", "jsonl"`, `an integer from 1 to 300` (bounds when checked),
 * `a list of distinct values of "a", "b"`.
 */
export function expected(schema: Schema, options: CheckOptions = {}): string {
  if ("const" in schema) return JSON.stringify(schema.const);
  if ("enum" in schema && schema.enum !== undefined) {
    return `one of ${quoted(schema.enum)}`;
  }
  if (!("type" in schema) || schema.type === undefined) return "any value";
  const type: TypeName | readonly TypeName[] = schema.type;
  if (typeof type !== "string") {
    return either(type.map((t) => SINGULAR[t]));
  }
  if (type === "array") {
    const list = schema as ArraySchema;
    return `a list of ${list.uniqueItems ? "distinct " : ""}${
      pluralOf(list.items)
    }${list.maxItems === undefined ? "" : ` (at most ${list.maxItems})`}`;
  }
  const length = options.bounds && type === "string" &&
      (schema as StringSchema).maxLength !== undefined
    ? ` of at most ${(schema as StringSchema).maxLength} characters`
    : "";
  return `${SINGULAR[type]}${bounds(schema, options)}${length}`;
}

/** The longest echo of a wrong value in a message. */
const MAX_SHOWN = 200;

/**
 * A wrong value as a message quotes it: JSON cut to 200 characters (a 2 MB
 * list with one object in it is not echoed whole), and a number JSON cannot
 * write (`1e999` parses to Infinity) said as itself rather than as `null`.
 */
export function shown(value: unknown): string {
  const text = JSON.stringify(
    value,
    (_key, item) =>
      typeof item === "number" && !Number.isFinite(item) ? String(item) : item,
  ) ?? String(value);
  return text.length <= MAX_SHOWN
    ? text
    : `${text.slice(0, MAX_SHOWN)}… (${text.length} characters)`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hasType(value: unknown, type: TypeName): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "null":
      return value === null;
    case "object":
      return isObject(value);
    case "array":
      return Array.isArray(value);
  }
}

function inBounds(value: unknown, schema: Schema): boolean {
  const { minimum, maximum, maxLength } = schema as {
    minimum?: number;
    maximum?: number;
    maxLength?: number;
  };
  if (typeof value === "number") {
    return (minimum === undefined || value >= minimum) &&
      (maximum === undefined || value <= maximum);
  }
  return typeof value !== "string" || maxLength === undefined ||
    value.length <= maxLength;
}

/** Whether `value` is of the schema's own kind (not looking inside). */
function fits(value: unknown, schema: Schema, options: CheckOptions): boolean {
  if ("const" in schema) return value === schema.const;
  if ("enum" in schema && schema.enum !== undefined) {
    if (!(schema.enum as readonly unknown[]).includes(value)) return false;
  }
  if (!("type" in schema) || schema.type === undefined) return true;
  const type: TypeName | readonly TypeName[] = schema.type;
  if (
    typeof type === "string"
      ? !hasType(value, type)
      : !type.some((one) => hasType(value, one))
  ) return false;
  if (options.bounds && !inBounds(value, schema)) return false;
  if (!Array.isArray(value) || schema.type !== "array") return true;
  const list = schema as ArraySchema;
  return (list.maxItems === undefined || value.length <= list.maxItems) &&
    (!list.uniqueItems || new Set(value).size === value.length) &&
    // A list of scalars is one kind: its items are said in the message.
    (list.items === undefined || !isScalar(list.items) ||
      value.every((item) => fits(item, list.items as Schema, options)));
}

/** A schema with nothing inside (its items are checked with the list). */
function isScalar(schema: Schema): boolean {
  return !("type" in schema) ||
    (schema.type !== "array" && schema.type !== "object");
}

/**
 * The first thing wrong with `value` as a `schema`, or null. An object's
 * fields are checked in this order: names it does not take (in the order
 * given), then missing required ones (in `required`'s order), then each
 * field's value (in the order given); a list's items in order.
 */
export function issueOf(
  schema: Schema,
  value: unknown,
  options: CheckOptions = {},
  path: readonly (string | number)[] = [],
): Issue | null {
  const issue = find(schema, value, options);
  return issue === null || path.length === 0
    ? issue
    : { ...issue, path: [...path, ...issue.path] };
}

/** The place of an issue one field or item further out. */
function under(key: string | number, issue: Issue | null): Issue | null {
  return issue === null ? null : { ...issue, path: [key, ...issue.path] };
}

const HERE: readonly (string | number)[] = [];

/** issueOf() with paths from `value` (built only for an issue). */
function find(
  schema: Schema,
  value: unknown,
  options: CheckOptions,
): Issue | null {
  const check = (schema as Partial<Refined<unknown>>)[CHECK];
  if (check !== undefined) {
    // The refined schema's own check decides (it knows more than the JSON).
    const problem = check(value);
    return problem === null
      ? null
      : { kind: "invalid", path: HERE, problem, value };
  }
  if (!fits(value, schema, options)) {
    return {
      kind: "type",
      path: HERE,
      expected: expected(schema, options),
      value,
    };
  }
  if (Array.isArray(value) && "items" in schema && schema.items !== undefined) {
    if (isScalar(schema.items)) return null;
    for (let index = 0; index < value.length; index++) {
      const issue = find(schema.items, value[index], options);
      if (issue !== null) return under(index, issue);
    }
    return null;
  }
  if (isObject(value) && "properties" in schema && schema.properties) {
    return fieldsIssue(schema as ObjectSchema, value, options);
  }
  return null;
}

function fieldsIssue(
  schema: ObjectSchema,
  value: Record<string, unknown>,
  options: CheckOptions,
): Issue | null {
  const properties = schema.properties;
  const keys = Object.keys(value);
  for (const key of keys) {
    // Own keys only: "__proto__", "toString" and "constructor" are names a
    // client may send, never fields a schema declares.
    if (
      !Object.hasOwn(properties, key) && schema.additionalProperties === false
    ) {
      return {
        kind: "unknown",
        path: HERE,
        key,
        known: Object.keys(properties),
      };
    }
  }
  for (const key of schema.required ?? []) {
    if (!Object.hasOwn(value, key) || value[key] === undefined) {
      return { kind: "required", path: HERE, key };
    }
  }
  for (const key of keys) {
    const field = value[key];
    // An undefined field is an absent one (JSON has no undefined).
    if (field === undefined || !Object.hasOwn(properties, key)) continue;
    const issue = find(properties[key]!, field, options);
    if (issue !== null) return under(key, issue);
  }
  return null;
}

/**
 * The first field of `value` at fault in the order `schema` declares them
 * (not the order given): a required field that is absent is checked as
 * undefined, so a refined field's own check says why. Fields the schema
 * does not declare are left alone — for a file read by an older or newer
 * program (the handshake).
 */
export function firstFieldIssue(
  schema: ObjectSchema,
  value: Readonly<Record<string, unknown>>,
  options: CheckOptions = {},
): Issue | null {
  const required: readonly string[] = schema.required ?? [];
  for (const [key, field] of Object.entries(schema.properties)) {
    const given = Object.hasOwn(value, key) ? value[key] : undefined;
    if (given === undefined && !required.includes(key)) continue;
    const issue = issueOf(field, given, options, [key]);
    if (issue !== null) return issue;
  }
  return null;
}

/** Whether `value` is a `schema`; narrows it to the schema's type. */
export function is<const S extends Schema>(
  schema: S,
  value: unknown,
  options: CheckOptions = {},
): value is Infer<S> {
  return issueOf(schema, value, options) === null;
}
