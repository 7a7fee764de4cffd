/**
 * `describe_table`: one table's columns, indexes, foreign keys and DDL — the
 * call to make before writing SQL against it.
 *
 * @module
 */

import { noSuchTable } from "../../db/errors.ts";
import { didYouMean, nearest } from "./nearest.ts";
import type { ToolEntry } from "../catalog.ts";
import * as s from "../../base/schema.ts";
import type { CallContext } from "../context.ts";
import { admit, resolveConnection, type Resolved } from "./access.ts";
import { privateFlag } from "./private_marks.ts";
import { cutText } from "../../db/budget.ts";
import { discoveryBudget, fitting } from "./discovery.ts";
import { invalidArgument, rethrow, ToolFailure } from "./failure.ts";
import { defineTool } from "./define.ts";
import { catalogCall, type FeatureDeps } from "../deps.ts";
import { CONNECTION_ID, SCHEMA } from "./shared.ts";

const strings = s.array(s.string());

/** One column of a description. */
const COLUMN = s.object({
  name: s.string(),
  data_type: s.string(),
  is_nullable: s.boolean(),
  default_value: s.nullable(s.string()),
  is_primary_key: s.boolean(),
  comment: s.string(),
  enum_values: strings,
  private: s.literal(true, {
    description:
      "A private column: the database refuses it to AI clients; leave it out of queries (no SELECT *).",
  }),
}, ["name", "data_type", "is_nullable", "default_value", "is_primary_key"]);

/** One index of a description. */
const INDEX = s.object({
  name: s.string(),
  columns: strings,
  is_unique: s.boolean(),
  is_primary: s.boolean(),
  type: s.nullable(s.string()),
}, ["name", "columns", "is_unique", "is_primary", "type"]);

/** One foreign key of a description. */
const FOREIGN_KEY = s.object({
  name: s.string(),
  columns: strings,
  referenced_schema: s.string(),
  referenced_table: s.string(),
  referenced_columns: strings,
  on_update: s.string(),
  on_delete: s.string(),
}, [
  "name",
  "columns",
  "referenced_schema",
  "referenced_table",
  "referenced_columns",
  "on_update",
  "on_delete",
]);

/** What `describe_table` answers (and `.../tables/{table}` reads). */
const OUTPUT = s.object({
  table: s.string(),
  schema: s.string(),
  type: s.enumOf(["table", "view", "materialized_view"]),
  columns: s.array(COLUMN),
  indexes: s.array(INDEX),
  foreign_keys: s.array(FOREIGN_KEY),
  comment: s.string(),
  total_columns: s.integer({ minimum: 0 }),
  column_offset: s.integer({ minimum: 0 }),
  is_truncated: s.boolean({
    description:
      "Columns were left out at the answer budget: pass column_offset to read on.",
  }),
  ddl: s.string(),
}, [
  "table",
  "schema",
  "type",
  "columns",
  "indexes",
  "foreign_keys",
  "total_columns",
  "is_truncated",
]);

/** A table's description. */
export type TableDescription = s.Infer<typeof OUTPUT>;

/** The `describe_table` tool. */
export function describeTableTool(deps: FeatureDeps): ToolEntry {
  return defineTool({
    name: "describe_table",
    description:
      "Columns, keys, indexes and foreign keys of a table or view. Call it before writing SQL on an unfamiliar table.",
    arguments: {
      properties: {
        connection_id: CONNECTION_ID,
        table: s.string({ description: "As stored, unquoted." }),
        schema: SCHEMA,
        include_ddl: s.boolean(),
        column_offset: s.integer({
          minimum: 0,
          description: "To read on in a wide table.",
        }),
      },
      required: ["connection_id", "table"],
    },
    outputSchema: OUTPUT,
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
): Promise<TableDescription> {
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
  const columns: TableDescription["columns"] = detail.columns.slice(
    columnOffset,
  ).map((
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
  const answer: TableDescription = {
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
