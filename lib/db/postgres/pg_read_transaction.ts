/**
 * A PostgreSQL read's session: reserved, inside `BEGIN READ ONLY` with the
 * statement timeout as a server-side net, then cleaned and given back (or
 * dropped, when it died).
 *
 * @module
 */

import type postgres from "postgres";
import { throwIfAborted } from "../stoppable.ts";
import { setApplicationName, type Signature } from "../signature.ts";
import { type Reserved, reserveSession } from "./pg_reserve.ts";
import { giveBack, sessionGone } from "./pg_session.ts";

/**
 * Run `work` on a reserved session inside `BEGIN READ ONLY` with the
 * statement timeout as a server-side net, then clean the session and give
 * it back (or drop it, when it died): every read's session, answered or
 * streamed.
 */
export async function inReadTransaction<T>(
  sql: ReturnType<typeof postgres>,
  options: {
    signal: AbortSignal;
    timeoutMs: number;
    sessionWaitMs?: number;
    sign?: Signature;
  },
  lost: () => void,
  work: (reserved: Reserved) => Promise<T>,
): Promise<T> {
  throwIfAborted(options.signal);
  const reserved = await reserveSession(
    sql,
    options.signal,
    options.timeoutMs,
    options.sessionWaitMs,
  );
  let gone = false;
  try {
    // Sent with the statement in one write rather than a round trip ahead of
    // it (a third of the driver's CPU per read, bench W1): the session's
    // read-only default covers the statement should BEGIN fail. SET LOCAL is
    // a server-side net under our own timer, should a cancel request be lost.
    const begin = reserved.unsafe(
      `BEGIN READ ONLY; SET LOCAL statement_timeout = ${
        options.timeoutMs + 5_000
      }${setApplicationName(options.sign)}`,
    ).simple();
    begin.catch(() => {});
    const result = await work(reserved).catch((error: unknown) => {
      gone = sessionGone(error);
      throw error;
    });
    await begin;
    return result;
  } finally {
    // Pipelined: advisory locks, prepared statements, LISTEN and settings a
    // read left on the session never reach the next request.
    await giveBack(reserved, gone, ["ROLLBACK", "DISCARD ALL"], lost);
  }
}
