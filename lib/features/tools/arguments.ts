/**
 * Tool arguments checked against the tool's own published `inputSchema`: an
 * unknown, missing or mistyped argument is `-32602` naming it (the schema is
 * violated); a well-typed value out of range is the tool's `invalid_argument`.
 *
 * @module
 */

import { wire } from "../../protocol/errors.ts";
import type { JsonObject } from "../../protocol/jsonrpc.ts";

/** One argument of a tool. */
export interface ArgumentSpec {
  type: "string" | "integer" | "boolean";
  description: string;
  minimum?: number;
  maximum?: number;
}

/** A tool's arguments: each spec, and which are required. */
export interface ArgumentsSpec {
  properties: Readonly<Record<string, ArgumentSpec>>;
  required: readonly string[];
}

/** Checked argument values. */
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

function hasType(value: unknown, type: ArgumentSpec["type"]): boolean {
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
  for (const name of Object.keys(args)) {
    // Own keys only: "__proto__", "toString" and "constructor" are names a
    // client may send, never arguments a tool takes.
    if (!Object.hasOwn(spec.properties, name)) {
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
  for (const [name, value] of Object.entries(args)) {
    const argument = spec.properties[name]!;
    if (!hasType(value, argument.type)) {
      throw wire.invalidParams(
        `Invalid arguments for ${tool}: "${name}" must be ${
          TYPE_TEXT[argument.type]
        }, got ${JSON.stringify(value)}`,
        { argument: name },
      );
    }
    checked[name] = value as string | number | boolean;
  }
  return checked;
}
