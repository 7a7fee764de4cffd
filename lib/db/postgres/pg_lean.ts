/**
 * Lean PostgreSQL reads (issue 38): a plain SELECT sent as one batch —
 * `BEGIN READ ONLY`, the statement, `ROLLBACK`, one Sync — and answered
 * once, instead of `BEGIN READ ONLY; SET LOCAL …` and `ROLLBACK` as simple
 * queries of their own (three answers, three sends by the server). The
 * session-level settings it needs (the read-only default, the statement
 * timeout, the signed `application_name`) are set in the same write, and only
 * when the session does not have them already (pg_wire.ts `WireSession`).
 *
 * The ROLLBACK is the engine's own guarantee that the read leaves nothing on
 * the session a later client's read or write could run under: a user
 * function replaced after it was vetted (its owner is another database
 * user) and calling `set_config(…, false)` or `SET ROLE` had its setting
 * outlive a read that ran alone in an implicit transaction (outsider stop
 * 49: another client's reads ran with a 1 ms timeout, a search_path that
 * resolved `lower` to the attacker's function, a role the login does not
 * inherit). Settings not reported by the server (`search_path`,
 * `statement_timeout`, `role`) are undone by the ROLLBACK, not detected.
 *
 * @module
 */

import type postgres from "postgres";
import type { ExchangeAsk } from "./pg_messages.ts";
import type { WireSession } from "./pg_wire.ts";
import { applicationName } from "../signature.ts";
import type { QueryOptions } from "../types.ts";

type Sql = ReturnType<typeof postgres>;

/** The session-level settings a lean read runs with. */
export interface LeanAsk {
  /**
   * `statement_timeout`, in ms: the least the read may have (its own timeout
   * and the 5 s a stopped statement is given), or, in a plan, what its
   * session has ({@linkcode planFor}).
   */
  timeout: number;
  /** `application_name`; "" for the one the session started with. */
  app: string;
}

/** What one read sends, once it knows its session. */
export type Plan = {
  begin: string;
  /** The statement inside `BEGIN READ ONLY` … `ROLLBACK` before its Sync. */
  wrap: boolean;
  after: readonly string[];
  recover: readonly string[];
  /** The settings a lean read sets first ("" when the session has them). */
  lean: LeanAsk | null;
  /** Names a ParameterStatus may report during the lean read's settings. */
  reports: Map<string, string | null>;
};

/** The first PostgreSQL version that reports `default_transaction_read_only`. */
const REPORTS_READ_ONLY = 14;

/**
 * Whether a read may run lean — its statement, `BEGIN READ ONLY` and
 * `ROLLBACK` in one batch under the session's own timeout and name — and
 * with which session-level settings.
 *
 * Only a statement that leaves nothing the ROLLBACK does not undo
 * (`leavesNoState`: plain SELECTs whose functions the read allowlist
 * admitted, never an advisory lock) runs so, and only on a server that
 * reports a change of `default_transaction_read_only` (PostgreSQL 14 and
 * later, `GUC_REPORT`): a read that sees any report it did not cause closes
 * its session (pg_read.ts `changed`). On an older server, or one whose
 * version postgres.js did not learn, every read keeps `BEGIN READ ONLY; SET
 * LOCAL …` … `ROLLBACK` as simple queries.
 */
export function leanRead(
  sql: Sql,
  stateless: boolean,
  options: QueryOptions,
): LeanAsk | null {
  if (!stateless) return null;
  const version = (sql as { parameters?: Record<string, string> })
    .parameters?.server_version;
  const major = Number.parseInt(version ?? "", 10);
  if (!(major >= REPORTS_READ_ONLY)) return null;
  return {
    timeout: options.timeoutMs + 5_000,
    app: options.sign === undefined ? "" : applicationName(options.sign),
  };
}

/**
 * What a read sends on a session: a lean read, the settings its session lacks
 * (in one simple query) and the statement alone; any other read,
 * `BEGIN READ ONLY` … `ROLLBACK` as asked.
 */
export function planFor(
  ask: Pick<ExchangeAsk, "begin" | "after"> & {
    recover: readonly string[];
    lean?: LeanAsk | null;
  },
  session: WireSession,
): Plan {
  const lean = ask.lean ?? null;
  const reports = new Map<string, string | null>();
  if (lean === null) {
    return {
      begin: ask.begin,
      wrap: false,
      after: ask.after,
      recover: ask.recover,
      lean,
      reports,
    };
  }
  const sets: string[] = [];
  if (!session.readOnly) {
    sets.push("SET default_transaction_read_only = on");
    reports.set("default_transaction_read_only", "on");
  }
  const timeout = timeoutFits(session.timeout, lean.timeout)
    ? session.timeout!
    : Math.ceil(lean.timeout / TIMEOUT_STEP_MS) * TIMEOUT_STEP_MS;
  if (timeout !== session.timeout) {
    sets.push(`SET statement_timeout = ${timeout}`);
  }
  if (session.app !== lean.app) {
    // signature.ts leaves no quote or backslash in the name.
    sets.push(
      lean.app === ""
        ? "RESET application_name"
        : `SET application_name = '${lean.app}'`,
    );
    reports.set("application_name", lean.app === "" ? null : lean.app);
  }
  return {
    begin: sets.join("; "),
    wrap: true,
    after: [],
    // A statement that failed left its transaction aborted (its ROLLBACK,
    // before the Sync, was skipped), as a late cancel request may have.
    recover: ["ROLLBACK"],
    lean: timeout === lean.timeout ? lean : { ...lean, timeout },
    reports,
  };
}

/**
 * What a lean read's session timeout is rounded up to. A read's timeout is
 * what is left of its call's deadline (a few ms under the tool's seconds
 * after the checks and a wait for a session): set to the ms, nearly every
 * read of a busy pool set it again (bench W1 C=8, an strace of one backend:
 * a `SET statement_timeout` before 202 of 762 reads, a statement and a
 * send more for each).
 */
const TIMEOUT_STEP_MS = 1_000;

/**
 * Whether a session's `statement_timeout` serves a read that needs at least
 * `least` ms: never less, and less than a step more — the server's own stop
 * is a backstop 5 s after the read's, never before it.
 */
export function timeoutFits(session: number | null, least: number): boolean {
  return session !== null && session >= least &&
    session < least + TIMEOUT_STEP_MS;
}
