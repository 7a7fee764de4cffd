/**
 * What a feature asks an engine to do differently, one {@linkcode Dialect}
 * per engine. {@linkcode DIALECTS} is a `Record<Engine, Dialect>`: adding an
 * engine to `Engine` (engines.ts) makes the compiler ask for its entry here,
 * so no feature needs an `engine === …` branch whose `else` would quietly
 * give a new engine another engine's behaviour. Facts that are data (labels,
 * default port, lexical rules) live in `ENGINES` (engines.ts).
 *
 * @example A plan, asked for and read the same way on every engine
 * ```ts
 * import { DIALECTS } from "./dialect.ts";
 * import type { Driver } from "./types.ts";
 *
 * async function planOf(driver: Driver, sql: string) {
 *   const dialect = DIALECTS[driver.engine];
 *   const text = dialect.planStatement(sql, { analyze: false, mariadb: false });
 *   const result = await driver.query(text, {
 *     mode: "read",
 *     maxRows: 100,
 *     maxBytes: 1_000_000,
 *     maxCellChars: 100_000,
 *     timeoutMs: 10_000,
 *     signal: AbortSignal.timeout(10_000),
 *   });
 *   return dialect.summarize(dialect.planOf(result.rows));
 * }
 * ```
 *
 * @module
 */

import type { Engine } from "./engines.ts";
import {
  documentPlan,
  emptySummary,
  mysqlSummary,
  mysqlWriteRows,
  type Plan,
  PLAN_STATEMENTS,
  type PlanRequest,
  type PlanSummary,
  postgresSummary,
  postgresWriteRows,
  sqlitePlan,
  sqliteSummary,
} from "./explain.ts";
import type { Cell } from "./types.ts";

/** One engine's answers to what the features ask of SQL text and plans. */
export interface Dialect {
  /** The statement that asks for a plan of `text` (one statement, already checked). */
  planStatement(text: string, request: PlanRequest): string;
  /**
   * Whether an analyzed plan is asked for differently by this server
   * (MariaDB's `ANALYZE FORMAT=JSON` beside MySQL's `EXPLAIN ANALYZE`), read
   * from the server's version string; null when one statement fits every
   * server of the engine (the version is then never read).
   */
  isMariaDb: ((version: string) => boolean) | null;
  /** The plan out of the rows its plan statement returned. */
  planOf(rows: readonly Cell[][]): Plan;
  /** What the plan says, read as far as its shape is known. */
  summarize(plan: Plan): PlanSummary;
  /**
   * An analyzed read, counted by dbport: the statement that counts what
   * `text` returns, for an engine whose plans measure nothing themselves;
   * null when the engine's analyzed plan carries the actual rows and time.
   */
  countedAnalyze: ((text: string) => string) | null;
  /**
   * A write preview's estimate: the rows a write's plan expects to change;
   * null when the engine's plan gives no row estimate, so none is asked for.
   */
  writeRows: ((plan: Plan) => number | null) | null;
  /**
   * Why a rollback cannot undo a statement that starts with `keyword` on
   * this engine (MySQL/MariaDB commit DDL at once), or null.
   */
  commitsAtOnce(keyword: string): string | null;
}

/** Every engine's dialect; the compiler asks for a new engine's entry. */
export const DIALECTS: { readonly [E in Engine]: Readonly<Dialect> } = {
  postgres: {
    planStatement: PLAN_STATEMENTS.postgres,
    isMariaDb: null,
    planOf: documentPlan,
    summarize: (plan) => filled(postgresSummary, plan),
    countedAnalyze: null,
    writeRows: postgresWriteRows,
    commitsAtOnce: () => null,
  },
  mysql: {
    planStatement: PLAN_STATEMENTS.mysql,
    isMariaDb: (version) => /mariadb/i.test(version),
    planOf: documentPlan,
    summarize: (plan) => filled(mysqlSummary, plan),
    countedAnalyze: null,
    writeRows: mysqlWriteRows,
    commitsAtOnce: (keyword) =>
      ["INSERT", "UPDATE", "DELETE", "REPLACE"].includes(keyword.toUpperCase())
        ? null
        : "MySQL/MariaDB commits this statement at once, so it cannot be tried and rolled back",
  },
  sqlite: {
    planStatement: PLAN_STATEMENTS.sqlite,
    isMariaDb: null,
    planOf: sqlitePlan,
    summarize: (plan) => filled(sqliteSummary, plan),
    // SQLite has no analyzing EXPLAIN: the read's rows are counted.
    countedAnalyze: (text) => `select count(*) from (${text})`,
    writeRows: null,
    commitsAtOnce: () => null,
  },
};

function filled(
  read: (plan: Plan, summary: PlanSummary) => void,
  plan: Plan,
): PlanSummary {
  const summary = emptySummary();
  read(plan, summary);
  return summary;
}
