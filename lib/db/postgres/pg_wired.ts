/**
 * A PostgreSQL read on a wired session (pg_wire.ts, pg_read.ts): one write
 * and one round trip per read, where postgres.js's own path takes three
 * (`BEGIN` with the statement, the `Sync` its portal sends once complete,
 * then `ROLLBACK` + `DISCARD ALL`). The session is reserved from postgres.js,
 * lent to the read, and given back when the read left it idle, or dropped
 * with the pool when it did not (pg_session.ts).
 *
 * @module
 */

import { setApplicationName, signed } from "../signature.ts";
import type postgres from "postgres";
import type { Duplex } from "node:stream";
import { parsePostgres } from "./pg_parse.ts";
import { leanRead } from "./pg_lean.ts";
import { PgRead, type ReadAsk } from "./pg_read.ts";
import { diedParked } from "./pg_ask_again.ts";
import { poolRetired } from "./pg_retire.ts";
import { type Reserved, reserveSession, reserveWaiting } from "./pg_reserve.ts";
import { sessionGone } from "./pg_session.ts";
import { awaitWire, type Wire } from "./pg_wire.ts";
import {
  park,
  type Parked,
  parkingOn,
  takeParked,
  unpark,
} from "./pg_parked.ts";
import { DbError } from "../errors.ts";
import {
  formatSeconds,
  STOP_GRACE_MS,
  stoppable,
  throwIfAborted,
  unansweredStop,
} from "../stoppable.ts";
import type { QueryOptions, QueryResult } from "../types.ts";
import { type Alarm, alarm, settledWithin } from "../../base/alarms.ts";

type Sql = ReturnType<typeof postgres>;

/** Where a wired session connects; null when sessions cannot be wired. */
export type WireTarget = { host: string; port: number } | null;

/**
 * Whether this connection's sessions can be wired, from the options
 * postgres.js read from its URL: a Unix socket or a list of hosts is
 * postgres.js's own to open. (Under TLS dbport negotiates on the socket it
 * opens, pg_tls.ts, and wires the clear side; pg_pools.ts.)
 */
export function wireTarget(
  tunnel: (() => Promise<Duplex>) | undefined,
  options: { path?: unknown; host?: string[]; port?: number[] },
): WireTarget {
  if (tunnel !== undefined) return { host: "", port: 0 };
  if (options.path || options.host?.length !== 1) return null;
  const host = options.host[0];
  const port = options.port?.[0];
  return host === undefined || port === undefined ? null : { host, port };
}

/**
 * What a PostgreSQL backend reads of its socket at once (PQ_RECV_BUFFER_SIZE):
 * an exchange no larger is in the backend's hands before its statement runs.
 */
const BACKEND_READS_BYTES = 8192;

/** How long a session's answer to its marker may take once the read ended. */
const HAND_BACK_MS = 5_000;

/**
 * Whether a read leaves nothing on its session once rolled back, so that
 * `DISCARD ALL` need not follow it: one plain `SELECT` (no `LISTEN`,
 * `PREPARE`, `SET`, `DECLARE`, no `EXPLAIN` — nothing but SELECT statements
 * in the tree), whose functions the read allowlist admitted (pg_vet.ts: no
 * advisory lock, `setseed`, `dblink` or `set_config` is a read). A long text
 * is not parsed again for this: it keeps `DISCARD ALL`.
 */
export async function leavesNoState(text: string): Promise<boolean> {
  if (text.length > 4096) return false;
  const parsed = await parsePostgres(text);
  if (!parsed.ok || parsed.analysis === null) return false;
  const { analysis } = parsed;
  return analysis.tier === "read" && analysis.reach === null &&
    analysis.plansOnly !== true && analysis.kinds.length > 0 &&
    analysis.kinds.every((kind) => kind === "SelectStmt") &&
    // Session-scoped effects a ROLLBACK does not undo; never on the read
    // allowlist, refused here again should a vetting ever miss one.
    !analysis.functions.some((call) =>
      /advisory|^setseed$|^dblink|^set_config$/i.test(call.name)
    );
}

/** The read through postgres.js's own path, where the wire was not there. */
export type Fallback = (
  sql: Sql,
  text: string,
  options: QueryOptions,
  lost: () => void,
) => Promise<QueryResult>;

/** A session's backend, as its cancel request names it. */
export type Backend = { pid: number; secret: number };

/**
 * How long a cancel request's socket waits for the server to take it: a
 * hop that takes the request and never answers (a hung tunnel channel, a
 * middlebox) kept it open for ever (outsider stop 52). The server closes it
 * within milliseconds; `cancelUntilEnded` sends again meanwhile anyway.
 */
export const CANCEL_REQUEST_MS = 5_000;

/**
 * The protocol's cancel request for `backend`, on a new socket from `open`;
 * settles once the server closed it (it has signalled the backend by then):
 * true, or false when the socket failed instead or was given up after
 * {@linkcode CANCEL_REQUEST_MS}. The socket is in `held` while open, for
 * its pools' close to end it.
 */
export async function cancelRequest(
  open: () => Promise<Duplex> | Duplex,
  backend: Backend,
  held?: Set<Duplex>,
): Promise<boolean> {
  const bytes = new Uint8Array(16);
  const view = new DataView(bytes.buffer);
  view.setInt32(0, 16);
  view.setInt32(4, 80877102);
  view.setInt32(8, backend.pid);
  view.setInt32(12, backend.secret);
  const socket = await open();
  held?.add(socket);
  let timer: Alarm | undefined;
  const delivered = await new Promise<boolean>((resolve) => {
    // The server closes the socket once it has signalled the session: its
    // end of the stream says so (read: a paused stream never ends), whether
    // or not the socket then closes (an SSH channel closes only once this
    // side ends too). This side never ends first: a hop that saw it end
    // could close towards the client before the server read the request.
    socket.once("end", () => resolve(true));
    socket.once("close", (failed?: boolean) => resolve(failed !== true));
    socket.once("error", () => resolve(false));
    timer = alarm(CANCEL_REQUEST_MS, () => resolve(false));
    socket.resume();
    socket.write(bytes);
  });
  timer?.clear();
  held?.delete(socket);
  socket.destroy();
  return delivered;
}

const UNWIRED = new Error("the session's socket was not wired");

/** A read's clean-up (`after`, `recover`): read only, shared by every read. */
const CLEAN: readonly string[] = Object.freeze(["ROLLBACK"]);
const CLEAN_DISCARD: readonly string[] = Object.freeze([
  "ROLLBACK",
  "DISCARD ALL",
]);

/** Run a read on a wired session; see the module's comment. */
export async function wiredRead(
  sql: Sql,
  text: string,
  options: QueryOptions,
  lost: () => void,
  fallback: Fallback,
  cancel: (backend: Backend) => Promise<boolean>,
): Promise<QueryResult> {
  throwIfAborted(options.signal);
  // A NUL ends a protocol string: the statement would not be the text.
  // Bound values go by postgres.js's Parse/Bind (the wired exchange binds
  // none).
  if (text.includes("\0") || (options.params?.length ?? 0) > 0) {
    return fallback(sql, text, options, lost);
  }
  const discard = !(await leavesNoState(text));
  // A session the last read of this pool parked, else one from postgres.js.
  const kept = takeParked<Reserved>(sql);
  const reserved = kept?.reserved ??
    await reserveSession(
      sql,
      options.signal,
      options.timeoutMs,
      options.sessionWaitMs,
    );
  let marker: Promise<unknown> | null = kept?.marker ?? null;
  const read = readOnWire(sql, text, options, discard, () => {
    const backend = (marker as { state?: Backend } | null)?.state;
    return backend === undefined ? undefined : cancel(backend);
  });
  const wire = kept === null ? awaitWire(read) : null;
  let gone = false;
  let fellBack = false;
  try {
    return await stoppable(
      () => {
        if (kept !== null) {
          // Held idle since its last read: the read owns it now.
          kept.wire.lend(read);
          return read.done;
        }
        marker = sendMarker(reserved, wire!.marker, read);
        return read.done;
      },
      options,
      // The read's own cancel request, never postgres.js's: the read knows
      // when it was delivered and whether it stopped the clean-up instead.
      () => read.stop(),
    );
  } catch (error) {
    if (error === UNWIRED) {
      // Nothing ran but an empty query: the session is as it was lent.
      fellBack = true;
      reserved.release();
      return await fallback(sql, text, options, lost);
    }
    const stop = unansweredStop(error);
    if (stop !== null && read.started && read.cancelsTaken) {
      // Stopped, and still unanswered after the stop's grace though the
      // server took every cancel request: the server is up, this session
      // alone runs on. It is closed (handBack: never clean) and the pool
      // and the connection are kept — a lost session replaced both, and
      // showed the connection as failing, for one statement.
      throw notStopped(stop, options.timeoutMs);
    }
    gone = sessionGone(error);
    throw nothingRan(error, read) ? diedParked() : error;
  } finally {
    wire?.forget();
    if (kept !== null && !read.started) void kept.giveBack();
    else await handBack(sql, read, reserved, marker, gone, fellBack, lost);
  }
}

/**
 * The read of `text` on a wired session: its exchange (pg_read.ts), with
 * `ROLLBACK` (and `DISCARD ALL` when `discard`) as its clean-up, and `stop`
 * for the protocol's cancel request.
 */
function readOnWire(
  sql: Sql,
  text: string,
  options: QueryOptions,
  discard: boolean,
  stop: ReadAsk["stop"],
): PgRead {
  const parsers = sql.options.parsers as Record<
    number,
    { array?: boolean } | undefined
  >;
  const clean = discard ? CLEAN_DISCARD : CLEAN;
  // The session is reserved: postgres.js learnt the server's version.
  const lean = leanRead(sql, !discard, options);
  return new PgRead({
    // Signed as sent (signature.ts); `text` itself is what was checked.
    text: signed(text, options.sign),
    // A lean read sends the settings its session lacks instead (pg_lean.ts
    // planFor): its `begin` is never read, and not built.
    begin: lean !== null
      ? ""
      : `BEGIN READ ONLY; SET LOCAL statement_timeout = ${
        options.timeoutMs + 5_000
      }${setApplicationName(options.sign)}`,
    maxRows: options.maxRows,
    maxBytes: options.maxBytes,
    maxCellChars: options.maxCellChars,
    after: clean,
    recover: clean,
    isArray: (type) => parsers[type]?.array === true,
    lean,
    // The protocol's cancel request, on a socket of its own: it settles
    // once delivered, and the session is given back only after (one
    // delivered late would stop the session's next statement).
    stop,
  });
}

/**
 * Send the wire's marker through postgres.js on `reserved` (pg_wire.ts: the
 * session's socket is lent to `read` once it passes); an answer from the
 * server itself means the marker was sent, not caught: the read is unwired.
 */
function sendMarker(
  reserved: Reserved,
  marker: string,
  read: PgRead,
): Promise<unknown> {
  const sent = reserved.unsafe(marker).simple();
  sent.then(
    () => read.unwired(UNWIRED),
    (error: Error) => read.unwired(error),
  );
  return sent;
}

/**
 * Whether a read's failure, `error`, came before any of it ran, on a
 * session that had been ended: then it is asked again on a live session.
 *
 * A parked session the server ended while it was idle (an administrator,
 * idle_session_timeout) and whose close had not reached dbport yet: the
 * read's bytes met a closed socket (a reset), so nothing of it ran, and it
 * is asked again on a live session (an outsider ended sessions under
 * reads). A session ended while it ran the statement closes without a
 * reset: that read fails as lost.
 *
 * The same for a session postgres.js lent from its idle ones (outsider
 * stop48: reads failed "read ECONNRESET" with sessions ended only while
 * idle): its marker met the closed socket and the read was never written,
 * or the read's exchange met it — a reset, not the close a session ended
 * under its statement makes, as long as the server would have taken the
 * whole exchange in at once (its receive buffer, 8 KB): a backend ended
 * with our bytes unread resets too.
 */
function nothingRan(error: unknown, read: PgRead): boolean {
  return (!read.started && !(error instanceof DbError) &&
    sessionGone(error)) ||
    (resetUnread(error) && read.sent <= BACKEND_READS_BYTES);
}

/**
 * The end of a wired read's session: parked for the pool's next read, or
 * given back to postgres.js, when the read left it idle and clean (and its
 * cancel request, if any, was delivered); otherwise closed under
 * postgres.js, which opens another when it needs one. Only a session that
 * failed before the read began, or did not close, replaces the pool
 * (`lost`).
 */
async function handBack(
  sql: Sql,
  read: PgRead,
  reserved: { release(): void },
  marker: Promise<unknown> | null,
  gone: boolean,
  fellBack: boolean,
  lost: () => void,
): Promise<void> {
  if (fellBack) return;
  if (!read.started) {
    if (gone) lost();
    else reserved.release();
    return;
  }
  const wire = read.wire;
  if (read.finished && read.clean && !gone && wire !== null) {
    // No cancel request sent (one may yet land), the pool still serves,
    // and no caller waits for a session from postgres.js.
    if (
      parkingOn() && read.stopping === null && marker !== null &&
      !poolRetired(sql) &&
      !reserveWaiting(sql)
    ) {
      return parkSession(sql, wire, reserved, marker, lost);
    }
    // Clean means no cancel request of the read can land any more
    // (pg_read.ts `cancelsSpent`): nothing to wait for but the marker.
    wire.release();
    if (await settledWithin(marker ?? Promise.resolve(), HAND_BACK_MS)) {
      return reserved.release();
    }
  }
  // Closed under postgres.js, which reopens it for the first reserve()
  // waiting and forgets that one: every waiting read asks again once it
  // has closed (the pool's sockets say so: pg_pools.ts). A session the
  // server or the network closed replaces the pool: postgres.js waits
  // longer before each reconnection after such a close, up to 20 s, and
  // only a new pool starts afresh.
  const closed = await settledWithin(read.drop(), HAND_BACK_MS);
  if (!closed || gone) lost();
}

/**
 * Park a clean session for the pool's next read (pg_parked.ts). Given
 * back, it answers postgres.js's marker and is released once postgres.js
 * took the answer; a session that speaks or closes while parked replaces
 * its pool.
 */
function parkSession(
  sql: Sql,
  wire: Wire,
  reserved: { release(): void },
  marker: Promise<unknown>,
  lost: () => void,
): void {
  const parked: Parked = {
    wire,
    reserved,
    marker,
    giveBack: () => {
      wire.release();
      return settledWithin(marker, HAND_BACK_MS).then((answered) => {
        if (answered) return reserved.release();
        wire.destroy();
        lost();
      });
    },
  };
  wire.hold(() => {
    if (!unpark(sql, parked)) return;
    // The server spoke (dbport closes the session) or closed it: the pool
    // is replaced. postgres.js reopens a reserved session that closed for
    // the first reserve() waiting and forgets that one, and a reserve()
    // made a moment after the waiting ones were refused was left waiting
    // for ever (sessions ended by an administrator while parked).
    void settledWithin(wire.closed(), HAND_BACK_MS).then(() => lost());
  });
  park(sql, parked);
}

/**
 * A read stopped (`why`) whose statement the server did not end within the
 * stop's grace, though it took the cancel requests.
 */
function notStopped(
  why: "timeout" | "cancelled",
  timeoutMs: number,
): DbError {
  const stopped = why === "timeout"
    ? `the statement timeout of ${formatSeconds(timeoutMs)} ran out`
    : "the request was cancelled";
  return new DbError(
    why,
    `${stopped}: the database took the cancel request but the statement had not stopped ${
      formatSeconds(STOP_GRACE_MS)
    } later; its session was closed, and the statement may run on there until the server's statement timeout`,
  );
}

/** A reset or broken pipe: the peer had closed when the bytes arrived. */
function resetUnread(error: unknown): boolean {
  return /^E(CONNRESET|PIPE)$/.test(
    String((error as { code?: unknown } | null)?.code ?? ""),
  );
}
