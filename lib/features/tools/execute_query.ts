/**
 * `execute_query`: one statement with a row cap and a statement timeout that
 * stops the query on the database. Reads run in the engine's read-only mode;
 * writes need the `tools:write` scope, a connection open to writes and, where
 * the user's policy says so, their consent; destructive statements belong to
 * `confirm_destructive_operation`.
 *
 * @module
 */

import type { ToolEntry } from "../catalog.ts";
import { checkConnectionId } from "./access.ts";
import { defineTool } from "./define.ts";
import { callSettings, type FeatureDeps } from "../deps.ts";
import { PARAMS } from "./bind.ts";
import { invalidArgument } from "./failure.ts";
import { vetStatement } from "./vet.ts";
import { runVetted } from "./every_row.ts";
import { CONNECTION_ID } from "./shared.ts";
import {
  QUERY,
  queryText,
  RESULT_SET_SCHEMA,
  TIMEOUT_SECONDS,
  timeoutSeconds,
} from "./statement.ts";

/** The `execute_query` tool. */
export function executeQueryTool(deps: FeatureDeps): ToolEntry {
  return defineTool({
    name: "execute_query",
    description:
      "Run one SQL statement: reads run read-only within the answer budget (truncation says how to get the rest); writes may ask the user. DROP/TRUNCATE: confirm_destructive_operation.",
    arguments: {
      properties: {
        connection_id: CONNECTION_ID,
        query: QUERY,
        params: PARAMS,
        max_rows: {
          type: "integer",
          minimum: 1,
          description: "Default: the user's row limit.",
        },
        timeout_seconds: TIMEOUT_SECONDS,
      },
      required: ["connection_id", "query"],
    },
    outputSchema: RESULT_SET_SCHEMA,
    annotations: {
      title: "Execute query",
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
    },
    async run(args, ctx) {
      const settings = callSettings(deps, ctx);
      const id = args.connection_id;
      // The id's form is checked before the query; the connection itself is
      // resolved after progress 0.
      checkConnectionId(id);
      const query = queryText(args);
      ctx.record?.({ sql: query });
      const maxRows = args.max_rows ??
        Math.min(settings.defaultRowLimit, settings.maxRowLimit);
      if (maxRows < 1 || maxRows > settings.maxRowLimit) {
        throw invalidArgument(
          `max_rows must be from 1 to ${settings.maxRowLimit} (the user's maximum), got ${maxRows}`,
        );
      }
      const timeout = timeoutSeconds(args, settings);
      ctx.progress(0, 1, "Checking the statement");
      const vetted = await vetStatement(deps, ctx, {
        connectionId: id,
        query,
        timeoutSeconds: timeout,
        operation: "a query",
        readsOnly: false,
        ...(args.params === undefined ? {} : { params: args.params }),
        planLimits: true,
      });
      return await runVetted(deps, ctx, vetted, {
        maxRows,
        timeoutSeconds: timeout,
        operation: "a query",
      });
    },
  });
}
