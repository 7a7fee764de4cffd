/**
 * `execute_query`: one statement, read-only for now, with a row cap and a
 * statement timeout that stops the query on the database. Progress: 0.0 when
 * the call is checked, 0.3 when the statement starts, 1.0 when rows are in
 * (contract: "Progress streaming").
 *
 * @module
 */

import { checkRead } from "../../db/read_gate.ts";
import type { ToolEntry } from "../catalog.ts";
import { checkConnectionId, resolveConnection } from "./access.ts";
import { defineTool } from "./define.ts";
import type { ToolDeps } from "./deps.ts";
import { invalidArgument, rethrow, ToolFailure } from "./failure.ts";
import { CONNECTION_ID } from "./shared.ts";

/** The longest query text, in UTF-16 code units ("100 KB"). */
export const MAX_QUERY_LENGTH = 102_400;
/** The longest statement timeout a client may ask for. */
export const MAX_TIMEOUT_SECONDS = 300;

/** The `execute_query` tool. */
export function executeQueryTool(deps: ToolDeps): ToolEntry {
  return defineTool({
    name: "execute_query",
    description:
      "Run one SQL statement on a connection and return its rows. Reads run in the database's read-only mode. Results are capped at max_rows (is_truncated tells when rows were left out); the statement is stopped on the database after timeout_seconds. Values: 64-bit integers and decimals as strings, dates and timestamps as ISO 8601, binary as base64, JSON as JSON. Call describe_table first for unfamiliar tables.",
    arguments: {
      properties: {
        connection_id: CONNECTION_ID,
        query: {
          type: "string",
          description: "One SQL statement (at most 100 KB).",
        },
        max_rows: {
          type: "integer",
          minimum: 1,
          description:
            "Most rows to return (default: the user's default row limit; at most the user's maximum).",
        },
        timeout_seconds: {
          type: "integer",
          minimum: 1,
          maximum: MAX_TIMEOUT_SECONDS,
          description:
            "Statement timeout in seconds, 1-300 (default: the user's query timeout).",
        },
      },
      required: ["connection_id", "query"],
    },
    outputSchema: {
      type: "object",
      properties: {
        columns: { type: "array", items: { type: "string" } },
        rows: { type: "array", items: { type: "array" } },
        row_count: { type: "integer", minimum: 0 },
        rows_affected: { type: "integer", minimum: 0 },
        execution_time_ms: { type: "number", minimum: 0 },
        is_truncated: { type: "boolean" },
      },
      required: [
        "columns",
        "rows",
        "row_count",
        "rows_affected",
        "execution_time_ms",
        "is_truncated",
      ],
      additionalProperties: false,
    },
    annotations: {
      title: "Execute query",
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
    },
    async run(args, ctx) {
      const settings = deps.settings();
      const id = String(args.connection_id);
      // The id's form is checked before the query; the connection itself is
      // resolved after progress 0.
      checkConnectionId(id);
      const query = String(args.query);
      if (query.trim() === "") throw invalidArgument("query must not be blank");
      if (query.length > MAX_QUERY_LENGTH) {
        throw invalidArgument(
          `query is ${query.length} characters; the limit is 100KB (${MAX_QUERY_LENGTH} characters)`,
        );
      }
      const maxRows = args.max_rows === undefined
        ? Math.min(settings.defaultRowLimit, settings.maxRowLimit)
        : Number(args.max_rows);
      if (maxRows < 1 || maxRows > settings.maxRowLimit) {
        throw invalidArgument(
          `max_rows must be from 1 to ${settings.maxRowLimit} (the user's maximum), got ${maxRows}`,
        );
      }
      const timeoutSeconds = args.timeout_seconds === undefined
        ? settings.queryTimeoutSeconds
        : Number(args.timeout_seconds);
      if (timeoutSeconds < 1 || timeoutSeconds > MAX_TIMEOUT_SECONDS) {
        throw invalidArgument(
          `timeout_seconds must be from 1 to ${MAX_TIMEOUT_SECONDS}, got ${timeoutSeconds}`,
        );
      }
      ctx.progress(0, 1, "Checking the statement");
      const { connection, driver, label } = resolveConnection(
        deps,
        ctx.principal,
        id,
      );
      const gate = checkRead(query, connection.driver);
      if (!gate.ok) throw new ToolFailure(gate.code, gate.message);
      ctx.progress(0.3, 1, `Running the statement on ${label}`);
      const started = performance.now();
      const result = await driver.query(gate.text, {
        maxRows,
        timeoutMs: timeoutSeconds * 1000,
        signal: ctx.signal,
      }).catch((error) => rethrow(error, label));
      const elapsed = Math.round((performance.now() - started) * 100) / 100;
      ctx.progress(
        1,
        1,
        `Read ${result.rows.length} row${result.rows.length === 1 ? "" : "s"}${
          result.truncated ? ` (cut at max_rows ${maxRows})` : ""
        }`,
      );
      return {
        columns: result.columns,
        rows: result.rows,
        row_count: result.rows.length,
        rows_affected: result.rowsAffected,
        execution_time_ms: elapsed,
        is_truncated: result.truncated,
      };
    },
  });
}
