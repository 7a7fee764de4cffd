/**
 * One schema idiom for untrusted input and published shapes. A schema is a
 * plain JSON Schema object (what tools/list and the results resource publish,
 * byte for byte: the builders write keys in the order they are given), and
 * its TypeScript type is read from it with {@linkcode Infer} - so the value a
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

import { previewJson } from "./json_preview.ts";
import {
  type ArraySchema,
  CHECK,
  type Infer,
  type NumberSchema,
  type ObjectSchema,
  type Refined,
  type Schema,
  type StringSchema,
  type TypeName,
} from "./schema_kinds.ts";

export * from "./schema_kinds.ts";

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
  // A list or object is previewed piece by piece: a 2 MB `params` list, or
  // one nested a million deep, is neither echoed whole nor walked whole.
  if (typeof value === "object" && value !== null) {
    return previewJson(value, MAX_SHOWN);
  }
  const text = JSON.stringify(
    typeof value === "number" && !Number.isFinite(value)
      ? String(value)
      : value,
  ) ?? String(value);
  return text.length <= MAX_SHOWN
    ? text
    : `${text.slice(0, MAX_SHOWN)}\u2026 (${text.length} characters)`;
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
 * does not declare are left alone - for a file read by an older or newer
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
