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
import {
  admitStatement,
  checkConnectionId,
  resolveConnection,
} from "./access.ts";
import { defineTool } from "./define.ts";
import type { FeatureDeps } from "../deps.ts";
import { invalidArgument, ToolFailure } from "./failure.ts";
import { CONNECTION_ID } from "./shared.ts";
import {
  checkWrite,
  classifyQuery,
  QUERY,
  queryText,
  RESULT_SET_SCHEMA,
  runClassified,
  TIMEOUT_SECONDS,
  timeoutSeconds,
} from "./statement.ts";

/** The `execute_query` tool. */
export function executeQueryTool(deps: FeatureDeps): ToolEntry {
  return defineTool({
    name: "execute_query",
    description:
      "Run one SQL statement on a connection. Reads run in the database's read-only mode and return rows, capped at max_rows (is_truncated tells when rows were left out). Writes (INSERT, UPDATE, DELETE, DDL) run in a transaction and report rows_affected; they need a token that may write, a connection the user opened to writes, and may ask the user to approve. DROP, TRUNCATE and ALTER ... DROP go through confirm_destructive_operation. The statement is stopped on the database after timeout_seconds. Values: SQL NULL as null, 64-bit integers and decimals as strings, dates and timestamps as ISO 8601, binary as base64, JSON objects and arrays as JSON (a JSON scalar, null included, as its JSON text), arrays as arrays (the output schema says it all). Results are bounded: long cells are cut and rows past the answer budget left out, said in truncation. Call describe_table first for unfamiliar tables.",
    arguments: {
      properties: {
        connection_id: CONNECTION_ID,
        query: QUERY,
        max_rows: {
          type: "integer",
          minimum: 1,
          description:
            "Most rows to return (default: the user's default row limit; at most the user's maximum).",
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
      const settings = deps.settings();
      const id = args.connection_id;
      // The id's form is checked before the query; the connection itself is
      // resolved after progress 0.
      checkConnectionId(id);
      const query = queryText(args);
      const maxRows = args.max_rows ??
        Math.min(settings.defaultRowLimit, settings.maxRowLimit);
      if (maxRows < 1 || maxRows > settings.maxRowLimit) {
        throw invalidArgument(
          `max_rows must be from 1 to ${settings.maxRowLimit} (the user's maximum), got ${maxRows}`,
        );
      }
      const timeout = timeoutSeconds(args, settings);
      ctx.progress(0, 1, "Checking the statement");
      const resolved = resolveConnection(deps, ctx.principal, id);
      const statement = await classifyQuery(query, resolved, ctx);
      if (statement.tier === "destructive") {
        // Name only what this caller can do: confirm_destructive_operation
        // needs the admin scope, which a bridge or readWrite token lacks.
        throw new ToolFailure(
          "denied",
          ctx.principal.scopes.has("admin")
            ? "this statement drops or truncates data; use confirm_destructive_operation for it"
            : "this statement drops or truncates data, which this client may not do: ask the user to run it in the app, or from a client with a fullAccess token (through confirm_destructive_operation)",
        );
      }
      if (statement.tier === "write") checkWrite(ctx, resolved.connection);
      const preview = await admitStatement(
        deps,
        ctx,
        resolved,
        statement,
        "a query",
        timeout,
      );
      return await runClassified(deps, ctx, resolved, statement, {
        maxRows,
        timeoutSeconds: timeout,
        preview,
      });
    },
  });
}
