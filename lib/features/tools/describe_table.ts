/**
 * `describe_table`: one table's columns, indexes, foreign keys and DDL — the
 * call to make before writing SQL against it.
 *
 * @module
 */

import { noSuchTable } from "../../db/errors.ts";
import type { ToolEntry } from "../catalog.ts";
import type { JsonObject } from "../../protocol/jsonrpc.ts";
import type { CallContext } from "../context.ts";
import { admit, resolveConnection, type Resolved } from "./access.ts";
import { invalidArgument, rethrow, ToolFailure } from "./failure.ts";
import { defineTool } from "./define.ts";
import { catalogCall, type FeatureDeps } from "../deps.ts";
import { CONNECTION_ID, SCHEMA } from "./shared.ts";

const strings = { type: "array", items: { type: "string" } };

/** The `describe_table` tool. */
export function describeTableTool(deps: FeatureDeps): ToolEntry {
  return defineTool({
    name: "describe_table",
    description:
      "Describe one table or view: columns (type, nullability, default, primary key), indexes, foreign keys and its DDL. Call it before writing SQL against a table you have not seen.",
    arguments: {
      properties: {
        connection_id: CONNECTION_ID,
        table: {
          type: "string",
          description: "The table or view name, as stored (not quoted).",
        },
        schema: SCHEMA,
      },
      required: ["connection_id", "table"],
    },
    outputSchema: {
      type: "object",
      properties: {
        table: { type: "string" },
        schema: { type: "string" },
        type: { enum: ["table", "view", "materialized_view"] },
        columns: {
          type: "array",
          items: {
            type: "object",
            properties: {
              name: { type: "string" },
              data_type: { type: "string" },
              is_nullable: { type: "boolean" },
              default_value: { type: ["string", "null"] },
              is_primary_key: { type: "boolean" },
            },
            required: [
              "name",
              "data_type",
              "is_nullable",
              "default_value",
              "is_primary_key",
            ],
            additionalProperties: false,
          },
        },
        indexes: {
          type: "array",
          items: {
            type: "object",
            properties: {
              name: { type: "string" },
              columns: strings,
              is_unique: { type: "boolean" },
              is_primary: { type: "boolean" },
              type: { type: ["string", "null"] },
            },
            required: ["name", "columns", "is_unique", "is_primary", "type"],
            additionalProperties: false,
          },
        },
        foreign_keys: {
          type: "array",
          items: {
            type: "object",
            properties: {
              name: { type: "string" },
              columns: strings,
              referenced_schema: { type: "string" },
              referenced_table: { type: "string" },
              referenced_columns: strings,
              on_update: { type: "string" },
              on_delete: { type: "string" },
            },
            required: [
              "name",
              "columns",
              "referenced_schema",
              "referenced_table",
              "referenced_columns",
              "on_update",
              "on_delete",
            ],
            additionalProperties: false,
          },
        },
        ddl: { type: "string" },
      },
      required: [
        "table",
        "schema",
        "type",
        "columns",
        "indexes",
        "foreign_keys",
      ],
      additionalProperties: false,
    },
    annotations: {
      title: "Describe table",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    async run(args, ctx) {
      const table = args.table;
      if (table.trim() === "") throw invalidArgument("table must not be blank");
      const resolved = resolveConnection(
        deps,
        ctx.principal,
        args.connection_id,
      );
      await admit(deps, ctx, resolved.connection, null, "reading its schema");
      return await tableDescription(
        deps,
        ctx,
        resolved,
        table,
        args.schema,
      );
    },
  });
}

/**
 * The `describe_table` payload of one table of a resolved connection (the
 * tool's, and the `.../tables/{table}` resource's); `not_found` when there is
 * no such table.
 */
export async function tableDescription(
  deps: FeatureDeps,
  ctx: CallContext,
  { driver, label }: Resolved,
  table: string,
  schema: string | undefined,
): Promise<JsonObject> {
  const detail = await driver.describeTable(table, {
    ...catalogCall(deps, ctx),
    ...(schema === undefined ? {} : { schema }),
  }).catch((error) => rethrow(error, label));
  if (detail === null) {
    throw new ToolFailure(
      "not_found",
      `${noSuchTable(table, schema, label)}; list_tables shows what exists`,
    );
  }
  return {
    table: detail.name,
    schema: detail.schema,
    type: detail.type,
    columns: detail.columns.map((column) => ({
      name: column.name,
      data_type: column.dataType,
      is_nullable: column.nullable,
      default_value: column.defaultValue,
      is_primary_key: column.primaryKey,
    })),
    indexes: detail.indexes.map((index) => ({
      name: index.name,
      columns: index.columns,
      is_unique: index.unique,
      is_primary: index.primary,
      type: index.method,
    })),
    foreign_keys: detail.foreignKeys.map((key) => ({
      name: key.name,
      columns: key.columns,
      referenced_schema: key.referencedSchema,
      referenced_table: key.referencedTable,
      referenced_columns: key.referencedColumns,
      on_update: key.onUpdate,
      on_delete: key.onDelete,
    })),
    ...(detail.ddl === null ? {} : { ddl: detail.ddl }),
  };
}
