/**
 * A tool's first step with a statement: what it is, for its connection's
 * engine. Its own file because the answer-size helpers (`result_set.ts`) and
 * the statement runner (`statement.ts`) both need it.
 *
 * @module
 */

import type { Classified } from "../../db/sql/classifier.ts";
import { checkStatement } from "../../db/sql/statement_check.ts";
import type { CallContext } from "../context.ts";
import type { Resolved } from "./access.ts";
import { rethrow, ToolFailure } from "./failure.ts";

/** The longest the check (the parser, the catalog) may take. */
const CHECK_TIMEOUT_MS = 10_000;

/**
 * Classify the query for its connection's engine, by dbport's lexer and the
 * engine's own parser (and, for a PostgreSQL read, its catalog). More than
 * one statement is `invalid_argument`; a syntax error is `query_failed` with
 * the engine's message (never a question to the user); reaching the file
 * system or running code, or a statement the two readers read differently,
 * is `denied`, whatever the token. The check takes at most 10 s, and no
 * longer than the statement's own `timeoutMs`: a call that asked for a
 * 1 s timeout is not held 10 s waiting for a session to vet it.
 */
export async function classifyQuery(
  query: string,
  resolved: Resolved,
  ctx: CallContext,
  timeoutMs: number = CHECK_TIMEOUT_MS,
): Promise<Classified & { why?: string | null }> {
  const result = await checkStatement(query, resolved.driver, {
    signal: ctx.signal,
    timeoutMs: Math.min(timeoutMs, CHECK_TIMEOUT_MS),
  }).catch((error) => rethrow(error, resolved.label));
  if (!result.ok) {
    throw new ToolFailure(
      result.code,
      result.code === "query_failed"
        ? `${result.message} (the statement was not run)`
        : result.message,
    );
  }
  if (result.reach !== null) {
    throw new ToolFailure(
      "denied",
      `the statement reaches the file system or runs code (${result.reach}); external clients may never send that, so the user must run it in the app`,
    );
  }
  return result;
}
