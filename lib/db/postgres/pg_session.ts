/**
 * A reserved PostgreSQL session's end (docs/security.md "Bounded answers"):
 * cleaned and given back when it is alive, never when it died. postgres.js,
 * asked to write to a session that has closed, queues the write and later
 * writes to a socket it has dropped (an exception no caller can catch), and
 * `release()` would put the dead session in its open queue for the next
 * query (tests/db/session_gone_test.ts).
 *
 * @module
 */

import { thrown } from "../../base/thrown.ts";
import { DbError } from "../errors.ts";
import { sessionLost } from "../stoppable.ts";
import { CLEAN_UP_MS, reusable } from "./pg_stopped_sessions.ts";
import type { Reserved } from "./pg_reserve.ts";
import { awaitWire, type Wire } from "./pg_wire.ts";

// Where tests/db/session_gone_test.ts reaches it; its home is pg_reserve.ts.
export { reserveSession } from "./pg_reserve.ts";

/**
 * A statement of dbport's own (BEGIN, COMMIT) that must be answered within
 * `ms`: on a session that died, postgres.js's write is lost and no answer
 * ever comes.
 */
export async function answered<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(sessionLost(ms)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Clean a reserved session and give it back to the pool, unless it is gone:
 * postgres.js would hand a dead session, released, to the next query, and a
 * write to it is lost without an answer. A session that died (or whose
 * clean-up failed or did not finish in time) is never released; the whole
 * postgres.js pool is replaced instead (`lost`), which other calls do not
 * notice but for a new connection.
 */
export async function giveBack(
  reserved: Reserved,
  gone: boolean,
  statements: readonly string[],
  lost: () => void,
): Promise<void> {
  // A cancel request still on its way would stop the clean-up, or the next
  // caller's statement on this session: a session for which one was sent
  // is cleaned and reused only when it is known to have landed
  // (`reusable`); otherwise it is closed.
  if (!gone && !(await reusable(reserved))) {
    if (!(await closeSession(reserved))) lost();
    return;
  }
  if (!gone) {
    // Pipelined in one write.
    const done = Promise.all(statements.map((text) => reserved.unsafe(text)))
      .then(() => true, () => false);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), CLEAN_UP_MS);
    });
    const clean = await Promise.race([done, late]);
    clearTimeout(timer);
    if (clean) return reserved.release();
  }
  lost();
}

/**
 * Close one reserved session under postgres.js, where dbport opened its
 * socket (pg_pools.ts: plain TCP, TLS's clear side, an SSH channel — all
 * `wired`): a marker written through postgres.js names the socket, which is
 * destroyed instead of written to; postgres.js sees it close and the marker
 * fail. Settles true once closed; false where the socket is postgres.js's
 * own (a Unix socket, several hosts): the marker, an empty query, was
 * answered, and the caller must close the session otherwise.
 */
export async function closeSession(reserved: Reserved): Promise<boolean> {
  const { marker, forget } = awaitWire({
    start: (wire: Wire) => queueMicrotask(() => wire.destroy()),
    data: () => {},
    closed: () => {},
  });
  try {
    await reserved.unsafe(marker).simple();
    return false;
  } catch {
    return true;
  } finally {
    forget();
  }
}

/**
 * Whether the session itself is gone (the server or the tunnel closed it):
 * then nothing more may be sent on it. postgres.js, asked to write to a
 * reserved session that has closed, queues the write and later writes to a
 * socket it has dropped: an exception no caller can catch, which ended the
 * whole server (tests/e2e/ssh_tunnel_test.ts: sshd killed mid-session).
 */
export function sessionGone(error: unknown): boolean {
  const code = thrown(error).code;
  return /^CONNECTION_(CLOSED|DESTROYED|ENDED)$/.test(code) ||
    /^E(CONNRESET|PIPE|CONNREFUSED)$/.test(code) ||
    (error instanceof DbError && error.kind === "connect");
}

/**
 * The same postgres.js write after close, where dbport cannot see it coming
 * (a session that closes between two of its statements, or one the
 * administrator ends with pg_terminate_backend: the soak, bench/soak.ts):
 * raised from postgres.js's own write timer — a TypeError on the dropped
 * socket, or Deno's "ended by the other party" on one the server closed,
 * which arrives as an unhandled rejection — it is not allowed to end the
 * process. Its statement fails as the session's loss instead.
 */
export function isWriteAfterClose(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const stack = error.stack ?? "";
  return (
    (error instanceof TypeError &&
      error.message === "Cannot read properties of null (reading 'write')") ||
    error.message === "This socket has been ended by the other party"
  ) && /postgres[\\/][^\n]*connection\.js/.test(stack) &&
    /nextWrite/.test(stack);
}

/**
 * postgres.js's own note that a connection closed under it, or the server's
 * word that it is closing it (an
 * administrator's pg_terminate_backend of an idle pooled session, a server
 * restart): raised from its socket's close handler on a promise of its own
 * that no caller holds, so it would arrive as an unhandled rejection and end
 * the process. Every statement dbport sends has its own handler; this one
 * carries no statement and is only the session's loss, which the next call
 * on that session meets as its own error.
 */
export function isOrphanedClose(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = thrown(error).code;
  // 57P01 admin_shutdown (pg_terminate_backend), 57P02 crash_shutdown,
  // 57P05 idle_session_timeout: said to an idle session before it closes.
  if (
    /^(CONNECTION_(CLOSED|DESTROYED|ENDED)|57P0[125])$/.test(code) &&
    /postgres[\\/][^\n]*connection\.js/.test(error.stack ?? "")
  ) return true;
  // The socket reset under postgres.js's own type query, which a new
  // session of a new pool sends first (fetch_types) and no caller holds:
  // the socket's error, with no postgres.js frame, that postgres.js named
  // the query on (an outsider ended sessions under reads: the process
  // would have ended).
  const query = (error as { query?: unknown }).query;
  return /^(ECONNRESET|EPIPE)$/.test(code) && typeof query === "string" &&
    /\bpg_catalog\.pg_type\b/.test(query) && /\btyparray\b/.test(query);
}

globalThis.addEventListener("error", (event) => {
  if (isWriteAfterClose(event.error)) event.preventDefault();
});
globalThis.addEventListener("unhandledrejection", (event) => {
  if (isWriteAfterClose(event.reason) || isOrphanedClose(event.reason)) {
    event.preventDefault();
  }
});
