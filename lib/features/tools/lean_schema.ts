/**
 * What `tools/list` publishes of a tool, sized for a model's context (every
 * client pays for it in every conversation): the output schema names the
 * fields every answer has, and only the annotations that say something. The
 * full output schemas with their prose — each field's type, how each value
 * is encoded, what a truncation means — are read once, when wanted, from the
 * `dbport://docs/results` resource (docs/wire.md "Results").
 *
 * @module
 */

import type { JsonObject } from "../../protocol/jsonrpc.ts";

/** The hints a client reads about a tool (MCP `ToolAnnotations`). */
export interface Annotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/**
 * The published output schema: an object with the fields every answer has.
 * A client validates `structuredContent` against it; the full schema (types,
 * optional and nested fields) is the resource's.
 */
export function leanOutputSchema(schema: JsonObject): JsonObject {
  const required = Array.isArray(schema.required) ? schema.required : [];
  return { type: "object", required };
}

/**
 * The annotations that carry meaning (MCP `ToolAnnotations`): a read-only
 * tool says so and whether it reaches outside; destructiveHint and
 * idempotentHint mean something only for a tool that may write.
 */
export function leanAnnotations(annotations: Annotations): JsonObject {
  return annotations.readOnlyHint
    ? { readOnlyHint: true, openWorldHint: annotations.openWorldHint }
    : {
      readOnlyHint: false,
      destructiveHint: annotations.destructiveHint,
      idempotentHint: annotations.idempotentHint,
      openWorldHint: annotations.openWorldHint,
    };
}
