/**
 * Tool arguments checked against the tool's own published `inputSchema`: an
 * unknown, missing or mistyped argument is `-32602` naming it (the schema is
 * violated); a well-typed value out of range is the tool's `invalid_argument`.
 *
 * @module
 */

import { wire } from "../../protocol/errors.ts";
import type { JsonObject } from "../../protocol/jsonrpc.ts";

/** One argument of a tool: a string, an integer or a boolean. */
export type ArgumentSpec = StringArgument | IntegerArgument | BooleanArgument;

/** A string argument. */
export interface StringArgument {
  type: "string";
  description: string;
}

/** An integer argument, optionally bounded (the bounds are published). */
export interface IntegerArgument {
  type: "integer";
  description: string;
  minimum?: number;
  maximum?: number;
}

/** A boolean argument. */
export interface BooleanArgument {
  type: "boolean";
  description: string;
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

/** Checked argument values, untyped. */
export type Arguments = Readonly<Record<string, string | number | boolean>>;

/** The published `inputSchema` for a tool's arguments. */
export function inputSchema(spec: ArgumentsSpec): JsonObject {
  const properties: JsonObject = {};
  for (const [name, argument] of Object.entries(spec.properties)) {
    properties[name] = { ...argument };
  }
  return {
    type: "object",
    properties,
    ...(spec.required.length > 0 ? { required: [...spec.required] } : {}),
    additionalProperties: false,
  };
}

const TYPE_TEXT = {
  string: "a string",
  integer: "an integer",
  boolean: "true or false",
} as const;

function hasType(
  value: unknown,
  type: ArgumentSpec["type"],
): value is string | number | boolean {
  if (type === "integer") {
    return typeof value === "number" && Number.isInteger(value);
  }
  return type === "string"
    ? typeof value === "string"
    : typeof value === "boolean";
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
  const checked: Record<string, string | number | boolean> = {};
  for (const [name, value, argument] of given) {
    if (!hasType(value, argument.type)) {
      throw wire.invalidParams(
        `Invalid arguments for ${tool}: "${name}" must be ${
          TYPE_TEXT[argument.type]
        }, got ${JSON.stringify(value)}`,
        { argument: name },
      );
    }
    checked[name] = value;
  }
  return checked;
}
