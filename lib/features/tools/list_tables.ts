/**
 * `list_tables`: the tables, views and materialized views of one schema (by
 * default the login's own), a page at a time, optionally those whose name
 * holds a pattern.
 *
 * @module
 */

import { ENGINES } from "../../db/engines.ts";
import type { TableKey } from "../../db/types.ts";
import * as s from "../../base/schema.ts";
import type { ToolEntry } from "../catalog.ts";
import type { CallContext } from "../context.ts";
import { catalogCall, type FeatureDeps } from "../deps.ts";
import { admit, resolveConnection, type Resolved } from "./access.ts";
import { defineTool } from "./define.ts";
import {
  discoveryBudget,
  fitting,
  limitArgument,
  limitOf,
  LIST_LIMIT,
  OTHER_SCHEMA,
  otherSchemas,
  scopeOf,
} from "./discovery.ts";
import { invalidArgument, rethrow } from "./failure.ts";
import { CONNECTION_ID, SCHEMA } from "./shared.ts";

const TOOL = "list_tables";
const CURSOR_ROOM = 2_048;

/** What a `list_tables` call asks for. */
export interface TableListing {
  schema?: string;
  pattern?: string;
  limit?: number;
  cursor?: string;
  rowCounts: boolean;
}

/** What a null row_count means, and how to get a count. */
const UNCOUNTED =
  "row_count is null where the engine keeps no statistics for the table yet (never analysed) or for a view: run ANALYZE on the table (MySQL/MariaDB: ANALYZE TABLE), or count exactly with select count(*).";

/** One table or view of a listing. */
const TABLE = s.object({
  name: s.string(),
  schema: s.string(),
  type: s.enumOf(["table", "view", "materialized_view"]),
  row_count: s.nullable(s.integer({ minimum: 0 })),
}, ["name", "schema", "type"]);

/** What `list_tables` answers (and the `.../tables` resource reads). */
const OUTPUT = s.object({
  tables: s.array(TABLE),
  schema: s.nullable(s.string({
    description: "The schema listed; null when every schema is.",
  })),
  schema_is_default: s.boolean({
    description: "No schema was named: the login's default was listed.",
  }),
  // Published with its prose before its items, as it always was.
  other_schemas: {
    type: "array",
    description:
      "With the default schema: the others (the first 20), with their table and view counts.",
    items: OTHER_SCHEMA,
  },
  total: s.integer({
    minimum: 0,
    description: "Tables matching schema and pattern, on every page.",
  }),
  is_truncated: s.boolean({
    description: "More tables remain: pass next_cursor.",
  }),
  next_cursor: s.string(),
  row_counts_included: s.boolean(),
  row_counts_are_approximate: s.boolean(),
  row_counts_note: s.string(),
  private_columns: s.array(s.string(), {
    description:
      "Private columns (schema.table.column; * any run): the database refuses them; describe_table marks them.",
  }),
}, [
  "tables",
  "schema",
  "schema_is_default",
  "total",
  "is_truncated",
  "row_counts_included",
  "row_counts_are_approximate",
]);

/** A `list_tables` page. */
export type TableList = s.Infer<typeof OUTPUT>;

/** The `list_tables` tool. */
export function listTablesTool(deps: FeatureDeps): ToolEntry {
  return defineTool({
    name: TOOL,
    description:
      "Tables and views of a schema (default: the login's), a page at a time; include_row_counts adds estimates.",
    arguments: {
      properties: {
        connection_id: CONNECTION_ID,
        schema: SCHEMA,
        pattern: s.string({ description: "Part of the name, any case." }),
        limit: limitArgument(LIST_LIMIT),
        cursor: s.string({ description: "next_cursor of the previous page." }),
        include_row_counts: s.boolean(),
      },
      required: ["connection_id"],
    },
    outputSchema: OUTPUT,
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
        ctx,
        args.connection_id,
      );
      await admit(deps, ctx, resolved.connection, null, "listing its tables");
      return await tableList(deps, ctx, resolved, {
        rowCounts: args.include_row_counts === true,
        ...(args.schema === undefined ? {} : { schema: args.schema }),
        ...(args.pattern === undefined ? {} : { pattern: args.pattern }),
        ...(args.limit === undefined ? {} : { limit: args.limit }),
        ...(args.cursor === undefined ? {} : { cursor: args.cursor }),
      });
    },
  });
}

/** The listing a cursor continues: connection, schema, pattern. */
type Listing = [string, string | null, string | null];

/**
 * The table a cursor continues after, if it continues `listing`: a cursor
 * is sealed with the listing it came from, so one of another connection,
 * schema or pattern is refused rather than silently skipping tables.
 */
async function openCursor(
  deps: FeatureDeps,
  cursor: string,
  listing: Listing,
): Promise<TableKey> {
  const opened = await deps.cursors.open(TOOL, cursor);
  if (!opened.ok) {
    throw invalidArgument(
      "cursor is not a cursor of list_tables this server issued; start again without it",
    );
  }
  let state: unknown;
  try {
    state = JSON.parse(opened.after);
  } catch {
    state = null;
  }
  if (
    !Array.isArray(state) || state.length !== 5 ||
    state[0] !== listing[0] || state[1] !== listing[1] ||
    state[2] !== listing[2] || typeof state[3] !== "string" ||
    typeof state[4] !== "string"
  ) {
    throw invalidArgument(
      "cursor continues another listing (its connection_id, schema or pattern differ); pass the same ones, or start again without cursor",
    );
  }
  return { schema: state[3], name: state[4] };
}

/**
 * The `list_tables` payload of a resolved connection (the tool's, and the
 * `.../tables` resource's): one page within the discovery budget.
 */
export async function tableList(
  deps: FeatureDeps,
  ctx: CallContext,
  resolved: Resolved,
  listing: TableListing,
): Promise<TableList> {
  const limit = limitOf(listing.limit, LIST_LIMIT);
  if (listing.pattern !== undefined && listing.pattern.length > 200) {
    throw invalidArgument(
      `pattern is ${listing.pattern.length} characters; the limit is 200`,
    );
  }
  const bound: Listing = [
    resolved.connection.id,
    listing.schema ?? null,
    listing.pattern ?? null,
  ];
  const after = listing.cursor === undefined
    ? undefined
    : await openCursor(deps, listing.cursor, bound);
  const scope = await scopeOf(deps, ctx, resolved, listing.schema);
  const page = await resolved.driver.listTables({
    ...catalogCall(deps, ctx),
    rowCounts: listing.rowCounts,
    limit,
    ...(scope.schema === undefined ? {} : { schema: scope.schema }),
    ...(listing.pattern === undefined || listing.pattern === ""
      ? {}
      : { pattern: listing.pattern }),
    ...(after === undefined ? {} : { after }),
  }).catch((error) => rethrow(error, resolved.label));
  const entries: TableList["tables"] = page.tables.map((table) => ({
    name: table.name,
    schema: table.schema,
    type: table.type,
    // Asked for, a count is always there: null where the engine has none.
    ...(listing.rowCounts ? { row_count: table.rowCount ?? null } : {}),
  }));
  const uncounted = entries.some((entry) => entry.row_count === null);
  const answer: TableList = {
    tables: [],
    schema: scope.schema ?? null,
    schema_is_default: scope.defaulted,
    ...(scope.defaulted && scope.others.length > 0
      ? { other_schemas: otherSchemas(scope.others) }
      : {}),
    total: page.total,
    is_truncated: false,
    row_counts_included: listing.rowCounts,
    row_counts_are_approximate: listing.rowCounts &&
      ENGINES[resolved.driver.engine].rowCountsAreEstimates,
    ...(uncounted ? { row_counts_note: UNCOUNTED } : {}),
    ...(resolved.connection.privateColumns?.length
      ? { private_columns: resolved.connection.privateColumns }
      : {}),
  };
  // Room for next_cursor, which seals the last name (a few hundred bytes).
  const kept = fitting(
    entries,
    discoveryBudget(deps, ctx) - CURSOR_ROOM,
    answer,
  );
  const more = page.more || kept < entries.length;
  const last = page.tables[kept - 1];
  answer.tables = entries.slice(0, kept);
  answer.is_truncated = more;
  if (more && last !== undefined) {
    const state = [...bound, last.schema, last.name];
    answer.next_cursor = await deps.cursors.seal(TOOL, JSON.stringify(state));
  }
  return answer;
}
