/**
 * The kinds of schema (lib/base/schema.ts): each a plain JSON Schema object
 * built by a function that writes its keys in the order given, and the
 * TypeScript type read from it ({@linkcode Infer}).
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
