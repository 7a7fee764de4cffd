/**
 * `confirm_destructive_operation`: runs one destructive statement (DROP,
 * TRUNCATE, ALTER ... DROP) and nothing else. It needs the `admin` scope (a
 * `fullAccess` token: `readWrite` tokens and the stdio bridge get `-33007`),
 * a connection open to writes, and always the user's consent (docs/wire.md
 * "Authentication" 2, "Result state of a call").
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
import { callSettings, type FeatureDeps } from "../deps.ts";
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

/** The `confirm_destructive_operation` tool. */
export function confirmDestructiveTool(deps: FeatureDeps): ToolEntry {
  return defineTool({
    name: "confirm_destructive_operation",
    description:
      "Run one DROP, TRUNCATE or ALTER ... DROP once the user approves it (the server asks them).",
    arguments: {
      properties: {
        connection_id: CONNECTION_ID,
        query: QUERY,
        timeout_seconds: TIMEOUT_SECONDS,
      },
      required: ["connection_id", "query"],
    },
    outputSchema: RESULT_SET_SCHEMA,
    annotations: {
      title: "Confirm destructive operation",
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    },
    scope: "admin",
    async run(args, ctx) {
      const settings = callSettings(deps, ctx);
      const id = args.connection_id;
      checkConnectionId(id);
      const query = queryText(args);
      ctx.record?.({ sql: query });
      const timeout = timeoutSeconds(args, settings);
      ctx.progress(0, 1, "Checking the statement");
      // An unknown connection is not_found before the statement is read.
      const resolved = resolveConnection(deps, ctx, id);
      const statement = await classifyQuery(query, resolved, ctx);
      if (statement.tier !== "destructive") {
        throw invalidArgument(
          "this tool only runs destructive statements (DROP, TRUNCATE, ALTER ... DROP); use execute_query for everything else",
        );
      }
      checkWrite(ctx, resolved.connection);
      const spent = ctx.budget?.refuse("write");
      if (spent !== undefined && spent !== null) {
        throw new ToolFailure("denied", spent);
      }
      const preview = await admitStatement(
        deps,
        ctx,
        resolved,
        statement,
        "a destructive statement",
        timeout,
      );
      return await runClassified(deps, ctx, resolved, statement, {
        maxRows: Math.min(settings.defaultRowLimit, settings.maxRowLimit),
        timeoutSeconds: timeout,
        preview,
      });
    },
  });
}
