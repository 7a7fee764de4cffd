/**
 * `describe_table`: one table's columns, indexes, foreign keys and DDL — the
 * call to make before writing SQL against it.
 *
 * @module
 */

import { noSuchTable } from "../../db/errors.ts";
import { didYouMean, nearest } from "./nearest.ts";
import type { ToolEntry } from "../catalog.ts";
import type { JsonObject } from "../../protocol/jsonrpc.ts";
import type { CallContext } from "../context.ts";
import { admit, resolveConnection, type Resolved } from "./access.ts";
import { privateFlag } from "./private_marks.ts";
import { cutText } from "../../db/budget.ts";
import { discoveryBudget, fitting } from "./discovery.ts";
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
      "Columns, keys, indexes and foreign keys of a table or view. Call it before writing SQL on an unfamiliar table.",
    arguments: {
      properties: {
        connection_id: CONNECTION_ID,
        table: {
          type: "string",
          description: "As stored, unquoted.",
        },
        schema: SCHEMA,
        include_ddl: { type: "boolean" },
        column_offset: {
          type: "integer",
          minimum: 0,
          description: "To read on in a wide table.",
        },
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
              comment: { type: "string" },
              enum_values: { type: "array", items: { type: "string" } },
              private: {
                const: true,
                description:
                  "A private column: the database refuses it to AI clients; leave it out of queries (no SELECT *).",
              },
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
        comment: { type: "string" },
        total_columns: { type: "integer", minimum: 0 },
        column_offset: { type: "integer", minimum: 0 },
        is_truncated: {
          type: "boolean",
          description:
            "Columns were left out at the answer budget: pass column_offset to read on.",
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
        "total_columns",
        "is_truncated",
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
        ctx,
        args.connection_id,
      );
      await admit(deps, ctx, resolved.connection, null, "reading its schema");
      return await tableDescription(deps, ctx, resolved, table, {
        ...(args.schema === undefined ? {} : { schema: args.schema }),
        ddl: args.include_ddl === true,
        columnOffset: args.column_offset ?? 0,
      });
    },
  });
}

/** What a description holds beyond the table's name. */
export interface Describing {
  schema?: string;
  /** Add the DDL. */
  ddl: boolean;
  /** The first column to show. */
  columnOffset: number;
}

/** Tables a catalog page holds for suggestions: one query, bounded. */
const SUGGESTION_POOL = 2_000;

/**
 * Up to three tables the login sees whose names are nearest `table`; none
 * when the catalog cannot say (the not_found stands on its own).
 */
async function nearTables(
  deps: FeatureDeps,
  ctx: CallContext,
  driver: Resolved["driver"],
  table: string,
  schema: string | undefined,
): Promise<string[]> {
  try {
    const page = await driver.listTables({
      ...catalogCall(deps, ctx),
      rowCounts: false,
      limit: SUGGESTION_POOL,
      ...(schema === undefined ? {} : { schema }),
    });
    return nearest(table, page.tables.map((t) => t.name));
  } catch {
    return [];
  }
}

/**
 * The `describe_table` payload of one table of a resolved connection (the
 * tool's, and the `.../tables/{table}` resource's), within the discovery
 * budget; `not_found` when there is no such table.
 */
export async function tableDescription(
  deps: FeatureDeps,
  ctx: CallContext,
  { driver, label }: Resolved,
  table: string,
  describing: Describing,
): Promise<JsonObject> {
  const { schema, columnOffset } = describing;
  const detail = await driver.describeTable(table, {
    ...catalogCall(deps, ctx),
    ...(schema === undefined ? {} : { schema }),
  }).catch((error) => rethrow(error, label));
  if (detail === null) {
    const near = await nearTables(deps, ctx, driver, table, schema);
    throw new ToolFailure(
      "not_found",
      `${noSuchTable(table, schema, label)}${
        didYouMean(near)
      }; list_tables or search_schema show what exists`,
    );
  }
  ctx.record?.({ object: `${detail.schema}.${detail.name}` });
  if (columnOffset > 0 && columnOffset >= detail.columns.length) {
    throw invalidArgument(
      `column_offset is ${columnOffset}, but ${
        JSON.stringify(detail.name)
      } has ${detail.columns.length} columns`,
    );
  }
  const columns: JsonObject[] = detail.columns.slice(columnOffset).map((
    column,
  ) => ({
    name: column.name,
    data_type: column.dataType,
    is_nullable: column.nullable,
    default_value: column.defaultValue,
    is_primary_key: column.primaryKey,
    ...(column.comment === null ? {} : { comment: column.comment }),
    ...(column.enumValues === null ? {} : { enum_values: column.enumValues }),
    ...privateFlag(column),
  }));
  const budget = discoveryBudget(deps, ctx);
  const answer: JsonObject = {
    table: detail.name,
    schema: detail.schema,
    type: detail.type,
    ...(detail.comment === null ? {} : { comment: detail.comment }),
    columns: [],
    total_columns: detail.columns.length,
    ...(columnOffset > 0 ? { column_offset: columnOffset } : {}),
    is_truncated: false,
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
  };
  const kept = fitting(columns, budget, answer);
  answer.columns = columns.slice(0, kept);
  answer.is_truncated = kept < columns.length;
  if (describing.ddl && detail.ddl !== null) {
    // The DDL gets what the budget has left, cut with a marker past that.
    const room = Math.max(200, budget - JSON.stringify(answer).length - 20);
    answer.ddl = detail.ddl.length <= room
      ? detail.ddl
      : cutText(detail.ddl, room);
    if (detail.ddl.length > room) answer.is_truncated = true;
  }
  return answer;
}
