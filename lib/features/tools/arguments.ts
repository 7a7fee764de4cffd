/**
 * Tool arguments checked against the tool's own published `inputSchema`: an
 * unknown, missing or mistyped argument is `-32602` naming it (the schema is
 * violated); a well-typed value out of range is the tool's `invalid_argument`.
 * The specs are schemas of lib/base/schema.ts, so the handler's argument
 * types are read from the very objects tools/list publishes.
 *
 * @module
 */

import {
  type ArraySchema,
  type BooleanSchema,
  type Infer,
  issueOf,
  type NumberSchema,
  object,
  SCALAR,
  shown,
  type StringSchema,
} from "../../base/schema.ts";
import type { BindValue } from "../../db/types.ts";
import { wire } from "../../protocol/errors.ts";
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
export type StringArgument = StringSchema;

/** An integer argument, optionally bounded (the bounds are published). */
export type IntegerArgument = NumberSchema & { readonly type: "integer" };

/** A number argument (a saved query's `float` or `decimal` parameter). */
export type NumberArgument =
  & Omit<NumberSchema, "minimum" | "maximum">
  & { readonly type: "number" };

/**
 * A list of scalar values (`execute_query`'s `params`): each a string, a
 * number, a boolean or null ({@linkcode SCALAR} items).
 */
export type ValuesArgument = ArraySchema<typeof SCALAR> & {
  readonly items: typeof SCALAR;
};

/** A boolean argument. */
export type BooleanArgument = BooleanSchema;

/** A list of values from a fixed set (each at most once). */
export type ChoicesArgument<T extends string = string> =
  & ArraySchema<{ readonly type: "string"; readonly enum: readonly T[] }>
  & {
    readonly items: { readonly type: "string"; readonly enum: readonly T[] };
  };

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
export type ValueOf<S extends ArgumentSpec> = Infer<S>;

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

/** Each spec's closed object schema, made once (checked at every call). */
const objects = new WeakMap<ArgumentsSpec, ReturnType<typeof object>>();

/** The closed object schema of a tool's arguments. */
function objectOf(spec: ArgumentsSpec) {
  let made = objects.get(spec);
  if (made === undefined) {
    made = object(spec.properties, spec.required);
    objects.set(spec, made);
  }
  return made;
}

/** The published `inputSchema` for a tool's arguments. */
export function inputSchema(spec: ArgumentsSpec): JsonObject {
  return objectOf(spec);
}

/** Check `args` against `spec`; throws `-32602` naming the argument at fault. */
export function checkArguments(
  tool: string,
  spec: ArgumentsSpec,
  args: JsonObject,
): Arguments {
  const issue = issueOf(objectOf(spec), args);
  if (issue === null) return args as Arguments;
  const prefix = `Invalid arguments for ${tool}:`;
  switch (issue.kind) {
    case "unknown":
      throw wire.invalidParams(
        `${prefix} unknown argument "${issue.key}" (${
          issue.known.length === 0
            ? "it takes none"
            : `it takes ${issue.known.map((k) => `"${k}"`).join(", ")}`
        })`,
        { argument: issue.key },
      );
    case "required":
      throw wire.invalidParams(`${prefix} "${issue.key}" is required`, {
        argument: issue.key,
      });
    case "type":
    case "invalid": {
      const name = String(issue.path[0]);
      const problem = issue.kind === "type"
        ? `must be ${issue.expected}`
        : issue.problem;
      throw wire.invalidParams(
        `${prefix} "${name}" ${problem}, got ${shown(issue.value)}`,
        { argument: name },
      );
    }
  }
}
