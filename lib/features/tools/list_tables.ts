/**
 * `list_tables`: the tables, views and materialized views of a connection.
 *
 * @module
 */

import { ENGINES, enginesWhere, perEngine } from "../../db/engines.ts";
import type { ToolEntry } from "../catalog.ts";
import type { JsonObject } from "../../protocol/jsonrpc.ts";
import type { CallContext } from "../context.ts";
import { admit, resolveConnection, type Resolved } from "./access.ts";
import { defineTool } from "./define.ts";
import { catalogCall, type FeatureDeps } from "../deps.ts";
import { rethrow } from "./failure.ts";
import { CONNECTION_ID, SCHEMA } from "./shared.ts";

/** The `list_tables` tool. */
export function listTablesTool(deps: FeatureDeps): ToolEntry {
  return defineTool({
    name: "list_tables",
    description:
      `List the tables, views and materialized views of a connection, with their schema. Without schema: ${
        perEngine((facts) => facts.unscopedListing)
      }. include_row_counts adds row counts from engine statistics (approximate on ${
        enginesWhere((facts) => facts.rowCountsAreEstimates)
      }).`,
    arguments: {
      properties: {
        connection_id: CONNECTION_ID,
        schema: SCHEMA,
        include_row_counts: {
          type: "boolean",
          description: "Add row_count to each table (default false).",
        },
      },
      required: ["connection_id"],
    },
    outputSchema: {
      type: "object",
      properties: {
        tables: {
          type: "array",
          items: {
            type: "object",
            properties: {
              name: { type: "string" },
              schema: { type: "string" },
              type: { enum: ["table", "view", "materialized_view"] },
              row_count: { type: "integer", minimum: 0 },
            },
            required: ["name", "schema", "type"],
            additionalProperties: false,
          },
        },
        row_counts_included: { type: "boolean" },
        row_counts_are_approximate: { type: "boolean" },
      },
      required: ["tables", "row_counts_included", "row_counts_are_approximate"],
      additionalProperties: false,
    },
    annotations: {
      title: "List tables",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    async run(args, ctx) {
      const resolved = resolveConnection(
        deps,
        ctx.principal,
        args.connection_id,
      );
      await admit(deps, ctx, resolved.connection, null, "listing its tables");
      return await tableList(deps, ctx, resolved, {
        rowCounts: args.include_row_counts === true,
        ...(args.schema === undefined ? {} : { schema: args.schema }),
      });
    },
  });
}

/**
 * The `list_tables` payload of a resolved connection (the tool's, and the
 * `.../tables` resource's).
 */
export async function tableList(
  deps: FeatureDeps,
  ctx: CallContext,
  { driver, label }: Resolved,
  options: { schema?: string; rowCounts: boolean },
): Promise<JsonObject> {
  const tables = await driver.listTables({
    ...catalogCall(deps, ctx),
    ...options,
  }).catch((error) => rethrow(error, label));
  return {
    tables: tables.map((table) => ({
      name: table.name,
      schema: table.schema,
      type: table.type,
      ...(table.rowCount === undefined ? {} : { row_count: table.rowCount }),
    })),
    row_counts_included: options.rowCounts,
    row_counts_are_approximate: options.rowCounts &&
      ENGINES[driver.engine].rowCountsAreEstimates,
  };
}
