/**
 * Building a tool from its parts: the published definition (input schema from
 * the argument specs, output schema, annotations), argument checking, and the
 * result envelope — the typed object in `structuredContent` and the same JSON
 * as the one text item, or a tool error.
 *
 * @module
 */

import type { Infer, Schema } from "../../base/schema.ts";
import { DbError } from "../../db/errors.ts";
import { toolError } from "../../protocol/errors.ts";
import { knownJson } from "../../protocol/json_text.ts";
import type { JsonObject } from "../../protocol/jsonrpc.ts";
import type { ToolEntry } from "../catalog.ts";
import { NeedsInput } from "../consent.ts";
import type { CallContext, Scope } from "../context.ts";
import {
  type ArgumentsOf,
  type ArgumentSpec,
  type ArgumentsSpec,
  checkArguments,
  inputSchema,
} from "./arguments.ts";
import { fromDbError, ToolFailure } from "./failure.ts";
import {
  type Annotations,
  leanAnnotations,
  leanOutputSchema,
} from "./lean_schema.ts";

export type { Annotations };

/**
 * Everything that makes a tool. `run` gets arguments typed from their specs
 * and must answer the type its output schema describes: a result that drifts
 * from the published schema fails `deno task check`.
 */
export interface ToolSpec<
  P extends Readonly<Record<string, ArgumentSpec>>,
  R extends keyof P & string,
  O extends OutputSchema,
> {
  name: string;
  description: string;
  arguments: ArgumentsSpec<P, R>;
  outputSchema: O;
  annotations: Annotations;
  /** The tool's own scope on top of `tools:read`, if any. */
  scope?: Scope;
  run(args: ArgumentsOf<P, R>, ctx: CallContext): Promise<Infer<O>>;
}

/** A tool's output schema: an object (lib/base/schema.ts). */
export type OutputSchema = Schema & { readonly type: "object" };

/** What a tool whose output schema is `O` answers. */
export type OutputOf<O extends OutputSchema> = Infer<O>;

/** A tool's result: the typed object, and the same JSON as text. */
export function toolResult(structured: JsonObject): JsonObject {
  const text = JSON.stringify(structured);
  return {
    content: [{ type: "text", text }],
    // The message is encoded with this text, not by serialising it again.
    structuredContent: knownJson(structured, text),
  };
}

/**
 * Build a catalog entry from a spec.
 *
 * @example A tool that answers with one field
 * ```ts
 * import * as s from "../../base/schema.ts";
 * import { defineTool } from "./define.ts";
 *
 * const echo = defineTool({
 *   name: "echo",
 *   description: "Say the text back.",
 *   arguments: {
 *     properties: { text: s.string({ description: "What to say." }) },
 *     required: ["text"],
 *   },
 *   // run() must answer { text: string }: anything else fails the check.
 *   outputSchema: s.object({ text: s.string() }, ["text"]),
 *   annotations: {
 *     title: "Echo",
 *     readOnlyHint: true,
 *     destructiveHint: false,
 *     idempotentHint: true,
 *     openWorldHint: false,
 *   },
 *   run(args) {
 *     return Promise.resolve({ text: args.text });
 *   },
 * });
 * ```
 */
export function defineTool<
  const P extends Readonly<Record<string, ArgumentSpec>>,
  const R extends keyof P & string = never,
  const O extends OutputSchema = OutputSchema,
>(spec: ToolSpec<P, R, O>): ToolEntry {
  return {
    definition: {
      name: spec.name,
      description: spec.description,
      inputSchema: inputSchema(spec.arguments),
      outputSchema: leanOutputSchema(spec.outputSchema),
      annotations: leanAnnotations(spec.annotations),
    },
    outputSchema: spec.outputSchema,
    scope: spec.scope ?? null,
    async call(args, ctx) {
      // checkArguments() holds the values to the very specs the type is
      // read from: this is the one place the two meet.
      const checked = checkArguments(
        spec.name,
        spec.arguments,
        args,
      ) as ArgumentsOf<P, R>;
      try {
        return toolResult(await spec.run(checked, ctx) as JsonObject);
      } catch (error) {
        // The user must answer first: the result is input_required.
        if (error instanceof NeedsInput) return error.result;
        const failure = error instanceof DbError
          ? fromDbError(error, "the database")
          : error;
        if (failure instanceof ToolFailure) {
          return toolError(failure.code, failure.message);
        }
        // A WireError is the client's answer as it stands; anything else is a
        // bug, which the dispatcher logs and answers -32603 with no detail.
        throw failure;
      }
    },
  };
}
