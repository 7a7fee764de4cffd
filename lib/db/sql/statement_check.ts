/**
 * A statement's verdict from two readers that must agree: dbport's lexer
 * (`classifier.ts`) and the engine itself (`Driver.check`: PostgreSQL's
 * parser and catalog, a server-side PREPARE elsewhere). The higher tier of
 * the two wins; where one reads a read and the other does not, the statement
 * is refused, since one of them has misread it (docs/security.md "Two
 * readers").
 *
 * @module
 */

import { type Classified, classify, type Tier } from "./classifier.ts";
import type { CallOptions, Driver } from "../types.ts";

/** The verdict: a classified statement, or why it is refused. */
export type Checked =
  | ({ ok: true; why: string | null } & Classified)
  | {
    ok: false;
    /** `invalid_argument` (not one statement), `query_failed` (syntax), `denied`. */
    code: "invalid_argument" | "query_failed" | "denied";
    message: string;
  };

const ORDER: Record<Tier, number> = { read: 0, write: 1, destructive: 2 };

function higher(a: Tier, b: Tier): Tier {
  return ORDER[a] >= ORDER[b] ? a : b;
}

/**
 * Classify `sql` for `driver`'s engine, asking the engine too.
 *
 * @example
 * ```ts
 * import { checkStatement } from "./statement_check.ts";
 * import type { Driver } from "../types.ts";
 *
 * async function tierOf(driver: Driver, sql: string) {
 *   const checked = await checkStatement(sql, driver, {
 *     timeoutMs: 10_000,
 *     signal: AbortSignal.timeout(10_000),
 *   });
 *   return checked.ok ? checked.tier : checked.message;
 * }
 * ```
 */
export async function checkStatement(
  sql: string,
  driver: Driver,
  options: CallOptions,
): Promise<Checked> {
  const lexical = classify(sql, driver.engine);
  if (!lexical.ok) return lexical;
  if (lexical.reach !== null) return { ...lexical, why: null };
  const engine = await driver.check(lexical.text, lexical.tier, options);
  if (!engine.ok) {
    return { ok: false, code: "query_failed", message: engine.message };
  }
  if (engine.denied) {
    return { ok: false, code: "denied", message: engine.denied };
  }
  if (engine.parsedTier !== null && engine.reach === null) {
    // The engine's grammar and the lexer must agree on whether it only
    // reads. The lexer's name lists may call a read a write where the
    // catalog agrees (a volatile function): that is no disagreement.
    const lexerReads = lexical.tier === "read";
    const parserReads = engine.parsedTier === "read";
    const explained = !lexerReads && parserReads && engine.tier !== "read";
    if (lexerReads !== parserReads && !explained) {
      return {
        ok: false,
        code: "denied",
        message:
          `dbport's lexer and the database's own parser read this statement differently (the lexer: ${lexical.tier}; the parser: ${engine.parsedTier}), so it was refused. ${
            lexical.uncertain.length > 0
              ? `The lexer found ${lexical.uncertain.join("; ")}. `
              : ""
          }Write it without unusual comments, quoting or control characters.`,
      };
    }
  }
  const tier = higher(lexical.tier, engine.tier ?? lexical.tier);
  const danger = lexical.danger ?? engine.danger ?? null;
  return {
    ...lexical,
    tier,
    dangerous: lexical.dangerous || engine.dangerous || danger !== null,
    ...(danger === null ? {} : { danger }),
    reach: engine.reach,
    why: engine.why,
    ...(engine.noPlan === undefined ? {} : { noPlan: engine.noPlan }),
    ...(engine.noDryRun === undefined ? {} : { noDryRun: engine.noDryRun }),
  };
}
