/**
 * `search_schema`: the tables, views and columns whose name or comment holds
 * the words of a query, best first, in one catalog query — how a model finds
 * its way in a database of thousands of tables in one step.
 *
 * @module
 */

import * as s from "../../base/schema.ts";
import { searchWords } from "../../db/schema_search.ts";
import type { SchemaSearch } from "../../db/types.ts";
import type { ToolEntry } from "../catalog.ts";
import { catalogCall, type FeatureDeps } from "../deps.ts";
import { admit, resolveConnection } from "./access.ts";
import { privateFlag } from "./private_marks.ts";
import { defineTool } from "./define.ts";
import {
  discoveryBudget,
  fitting,
  limitArgument,
  limitOf,
  scopeOf,
  SEARCH_LIMIT,
} from "./discovery.ts";
import { invalidArgument, rethrow } from "./failure.ts";
import { CONNECTION_ID, SCHEMA } from "./shared.ts";

const KINDS = ["table", "view", "column"] as const;

/** One match: a table, view or column. */
const MATCH = s.object({
  schema: s.string(),
  table: s.string(),
  column: s.string(),
  kind: s.enumOf(["table", "view", "materialized_view", "column"]),
  data_type: s.string(),
  comment: s.string(),
  private: s.literal(true),
}, ["schema", "table", "kind"]);

/** What `search_schema` answers. */
const OUTPUT = s.object({
  matches: s.array(MATCH),
  words: s.array(s.string()),
  total: s.integer({ minimum: 0 }),
  is_truncated: s.boolean(),
}, ["matches", "words", "total", "is_truncated"]);

/** The `search_schema` tool. */
export function searchSchemaTool(deps: FeatureDeps): ToolEntry {
  return defineTool({
    name: "search_schema",
    description:
      "Find tables, views and columns whose name or comment contains words of query.",
    arguments: {
      properties: {
        connection_id: CONNECTION_ID,
        query: s.string({ description: 'Words, e.g. "customer email".' }),
        kinds: s.array(s.choice(KINDS), { uniqueItems: true }),
        schema: SCHEMA,
        limit: limitArgument(SEARCH_LIMIT),
      },
      required: ["connection_id", "query"],
    },
    outputSchema: OUTPUT,
    annotations: {
      title: "Search schema",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    async run(args, ctx) {
      const limit = limitOf(args.limit, SEARCH_LIMIT);
      if (args.query.length > 500) {
        throw invalidArgument(
          `query is ${args.query.length} characters; the limit is 500`,
        );
      }
      const words = searchWords(args.query);
      if (words.length === 0) throw invalidArgument("query must not be blank");
      const kinds = args.kinds === undefined || args.kinds.length === 0
        ? KINDS
        : args.kinds;
      const resolved = resolveConnection(
        deps,
        ctx,
        args.connection_id,
      );
      await admit(deps, ctx, resolved.connection, null, "searching its schema");
      // A named schema must exist; without one, every schema is searched.
      if (args.schema !== undefined) {
        await scopeOf(deps, ctx, resolved, args.schema);
      }
      const search: SchemaSearch = {
        words,
        kinds,
        limit,
        ...(args.schema === undefined ? {} : { schema: args.schema }),
      };
      const found = await resolved.driver.searchSchema({
        ...catalogCall(deps, ctx),
        ...search,
      }).catch((error) => rethrow(error, resolved.label));
      const entries = found.matches.map((match) => ({
        schema: match.schema,
        table: match.table,
        ...(match.column === null ? {} : { column: match.column }),
        kind: match.kind,
        ...(match.dataType === null ? {} : { data_type: match.dataType }),
        ...(match.comment === null ? {} : { comment: match.comment }),
        ...privateFlag(match),
      }));
      const answer = {
        matches: entries,
        words,
        total: found.total,
        is_truncated: false,
      };
      const kept = fitting(entries, discoveryBudget(deps, ctx), {
        ...answer,
        matches: [],
      });
      return {
        ...answer,
        matches: entries.slice(0, kept),
        is_truncated: kept < found.total,
      };
    },
  });
}
