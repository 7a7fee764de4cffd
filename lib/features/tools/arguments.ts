/**
 * Tool arguments checked against the tool's own published `inputSchema`: an
 * unknown, missing or mistyped argument is `-32602` naming it (the schema is
 * violated); a well-typed value out of range is the tool's `invalid_argument`.
 *
 * @module
 */

import type { BindValue } from "../../db/types.ts";
import { wire } from "../../protocol/errors.ts";
import { previewJson } from "../../protocol/json_preview.ts";
import type { JsonObject } from "../../protocol/jsonrpc.ts";

/** One argument of a tool: a string, a number, a boolean, choices or values. */
export type ArgumentSpec =
  | StringArgument
  | IntegerArgument
  | NumberArgument
  | BooleanArgument
  | ChoicesArgument
  | ValuesArgument;

/** A string argument, optionally one of a fixed set (`enum`). */
export interface StringArgument {
  type: "string";
  enum?: readonly string[];
  /** Published; the tool checks it (in UTF-16 code units). */
  maxLength?: number;
  /** Left out where the name and type say it all (tools/list is lean). */
  description?: string;
  /** What a call that leaves it out gets (published). */
  default?: string;
}

/** An integer argument, optionally bounded (the bounds are published). */
export interface IntegerArgument {
  type: "integer";
  description?: string;
  /** What a call that leaves it out gets (published). */
  default?: number;
  minimum?: number;
  maximum?: number;
}

/** A number argument (a saved query's `float` or `decimal` parameter). */
export interface NumberArgument {
  type: "number";
  description?: string;
  /** What a call that leaves it out gets (published). */
  default?: number;
}

/**
 * A list of scalar values (`execute_query`'s `params`): each a string, a
 * number, a boolean or null. Published as a JSON Schema array.
 */
export interface ValuesArgument {
  type: "values";
  description?: string;
  maxItems?: number;
}

/** A boolean argument. */
export interface BooleanArgument {
  type: "boolean";
  description?: string;
  /** What a call that leaves it out gets (published). */
  default?: boolean;
}

/** A list of values from a fixed set (each at most once). */
export interface ChoicesArgument<T extends string = string> {
  type: "array";
  items: { type: "string"; enum: readonly T[] };
  description?: string;
}

/** A tool's arguments: each spec, and which are required. */
export interface ArgumentsSpec<
  P extends Readonly<Record<string, ArgumentSpec>> = Readonly<
    Record<string, ArgumentSpec>
  >,
  R extends keyof P & string = keyof P & string,
> {
  properties: P;
  required: readonly R[];
}

/** The value an argument of spec `S` has once checked. */
export type ValueOf<S extends ArgumentSpec> = S extends StringArgument ? string
  : S extends IntegerArgument ? number
  : S extends NumberArgument ? number
  : S extends ChoicesArgument<infer T> ? readonly T[]
  : S extends ValuesArgument ? readonly BindValue[]
  : boolean;

/**
 * Checked argument values typed from their specs (as the MCP SDK infers
 * them from its schemas): required ones present, the others optional.
 */
export type ArgumentsOf<
  P extends Readonly<Record<string, ArgumentSpec>>,
  R extends keyof P & string,
> =
  & { readonly [K in R]: ValueOf<P[K]> }
  & { readonly [K in Exclude<keyof P & string, R>]?: ValueOf<P[K]> };

/** A checked argument value. */
export type ArgumentValue =
  | string
  | number
  | boolean
  | readonly string[]
  | readonly BindValue[];

/** Checked argument values, untyped. */
export type Arguments = Readonly<Record<string, ArgumentValue>>;

/** The published `inputSchema` for a tool's arguments. */
export function inputSchema(spec: ArgumentsSpec): JsonObject {
  const properties: JsonObject = {};
  for (const [name, argument] of Object.entries(spec.properties)) {
    properties[name] = argument.type === "values"
      ? {
        type: "array",
        items: { type: ["string", "number", "boolean", "null"] },
        ...(argument.maxItems === undefined
          ? {}
          : { maxItems: argument.maxItems }),
        ...(argument.description === undefined
          ? {}
          : { description: argument.description }),
      }
      : argument.type === "array"
      ? {
        type: "array",
        items: { type: "string", enum: [...argument.items.enum] },
        uniqueItems: true,
        ...(argument.description === undefined
          ? {}
          : { description: argument.description }),
      }
      : argument.type === "string" && argument.enum !== undefined
      ? { ...argument, enum: [...argument.enum] }
      : { ...argument };
  }
  return {
    type: "object",
    properties,
    ...(spec.required.length > 0 ? { required: [...spec.required] } : {}),
    additionalProperties: false,
  };
}

function typeText(argument: ArgumentSpec): string {
  switch (argument.type) {
    case "string":
      return argument.enum === undefined
        ? "a string"
        : `one of ${
          argument.enum.map((value) => JSON.stringify(value)).join(", ")
        }`;
    case "integer":
      return "an integer";
    case "number":
      return "a number";
    case "values":
      return `a list of strings, numbers, booleans or nulls${
        argument.maxItems === undefined ? "" : ` (at most ${argument.maxItems})`
      }`;
    case "boolean":
      return "true or false";
    case "array":
      return `a list of distinct values of ${
        argument.items.enum.map((value) => JSON.stringify(value)).join(", ")
      }`;
  }
}

/**
 * A wrong value as the message quotes it: a bounded preview (a 2 MB
 * `params` list, or one nested a million deep, is neither echoed whole nor
 * walked whole), a number JSON cannot write (`1e999` parses to Infinity)
 * said as itself rather than as JSON's `null`.
 */
function shown(value: unknown): string {
  return previewJson(value);
}

function hasType(
  value: unknown,
  argument: ArgumentSpec,
): value is ArgumentValue {
  switch (argument.type) {
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "values":
      return Array.isArray(value) &&
        (argument.maxItems === undefined ||
          value.length <= argument.maxItems) &&
        value.every((item) =>
          item === null || typeof item === "string" ||
          typeof item === "boolean" ||
          (typeof item === "number" && Number.isFinite(item))
        );
    case "string":
      return typeof value === "string" &&
        (argument.enum === undefined || argument.enum.includes(value));
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value) &&
        value.every((item) => argument.items.enum.includes(item)) &&
        new Set(value).size === value.length;
  }
}

/** Check `args` against `spec`; throws `-32602` naming the argument at fault. */
export function checkArguments(
  tool: string,
  spec: ArgumentsSpec,
  args: JsonObject,
): Arguments {
  const given: [string, unknown, ArgumentSpec][] = [];
  for (const [name, value] of Object.entries(args)) {
    // Own keys only: "__proto__", "toString" and "constructor" are names a
    // client may send, never arguments a tool takes.
    const argument = Object.hasOwn(spec.properties, name)
      ? spec.properties[name]
      : undefined;
    if (argument === undefined) {
      const known = Object.keys(spec.properties);
      throw wire.invalidParams(
        `Invalid arguments for ${tool}: unknown argument "${name}" (${
          known.length === 0
            ? "it takes none"
            : `it takes ${known.map((k) => `"${k}"`).join(", ")}`
        })`,
        { argument: name },
      );
    }
    given.push([name, value, argument]);
  }
  for (const name of spec.required) {
    if (!Object.hasOwn(args, name) || args[name] === undefined) {
      throw wire.invalidParams(
        `Invalid arguments for ${tool}: "${name}" is required`,
        { argument: name },
      );
    }
  }
  const checked: Record<string, ArgumentValue> = {};
  for (const [name, value, argument] of given) {
    if (!hasType(value, argument)) {
      throw wire.invalidParams(
        `Invalid arguments for ${tool}: "${name}" must be ${
          typeText(argument)
        }, got ${shown(value)}`,
        { argument: name },
      );
    }
    checked[name] = value;
  }
  return checked;
}
