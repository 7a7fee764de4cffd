/**
 * One PostgreSQL read spoken by dbport itself on a session postgres.js lent
 * it (pg_wire.ts): the whole exchange in one write — `BEGIN READ ONLY` and
 * the statement timeout as a simple query, the statement's
 * Parse/Bind/Describe/Execute with the row cap as the Execute's limit and a
 * Sync, then `ROLLBACK` (and `DISCARD ALL` when the statement could have left
 * something on the session) — and one round trip for the answer.
 *
 * Rows are decoded from `DataRow` bytes with the same value encodings as
 * every other read (pg_values.ts). A row too large to be held whole is read
 * as it streams: a long text keeps only the head its cell shows, a value
 * larger than the answer can hold is skipped, counted and never
 * concatenated, and the statement is stopped (docs/performance.md "Huge
 * values").
 *
 * @module
 */

import { pgTypeName } from "./pg_type_names.ts";
import { Buffer } from "node:buffer";
import { Budget, type CutCell, cutUtf8 } from "../budget.ts";
import { BigRow, type RowColumn } from "./pg_big_row.ts";
import { cellAt, isVerbatimText } from "./pg_values.ts";
import {
  exchange,
  type ExchangeAsk,
  pgError,
  simpleQueries,
} from "./pg_messages.ts";
import type { Wire, WireUser } from "./pg_wire.ts";
import { type LeanAsk, type Plan, planFor } from "./pg_lean.ts";
import {
  type Cancelling,
  cancelUntilEnded,
  reusableAfterStop,
} from "./pg_cancel.ts";
import type { Cell, QueryResult } from "../types.ts";

/** What one read asks. */
export interface ReadAsk extends ExchangeAsk {
  maxBytes: number;
  maxCellChars: number;
  /**
   * What is sent again, once the read's own cancel request was delivered,
   * when that request reached the server after the statement ended and
   * stopped the clean-up (`after`) instead: `ROLLBACK`, `DISCARD ALL`.
   */
  recover: readonly string[];
  /** Whether a type (by OID) is an array type, as postgres.js learnt. */
  isArray: (type: number) => boolean;
  /**
   * Stop the statement on the server (the protocol's cancel request); settles
   * once the request was delivered (true) or failed to be (false).
   */
  stop: () => Promise<boolean> | undefined;
  /**
   * Set when the statement may run alone, in its own implicit transaction,
   * on a session read-only by default (pg_wired.ts `leanRead`): what the
   * session-level settings must be. `begin`, `after` and `recover` are then
   * used only should the session not allow it.
   */
  lean?: LeanAsk | null;
}

/** A row larger than this is read as it streams rather than held whole. */
const STREAM_ROW_BYTES = 256 * 1024;
/** After the answer is full, this much more data stops the statement. */
const DRAIN_BYTES = 1024 * 1024;

/** The outcome of a read: its result or error, and the session's state. */
export class PgRead implements WireUser {
  readonly done: Promise<QueryResult>;
  /** Whether the wire was given to this read. */
  started = false;
  /** The bytes of the exchange written, once started. */
  sent = 0;
  /** The socket lent to this read, once started. */
  get wire(): Wire | null {
    return this.#lent;
  }
  /** Whether the exchange ran to its last answer. */
  finished = false;
  /** Whether the session ended idle and without error in the clean-up. */
  clean = false;
  /**
   * The cancel requests this read sent (its answer spent, or stopped), once
   * all delivered and none will follow: the session serves nothing else
   * before.
   */
  stopping: Promise<unknown> | null = null;
  /** How many cancel requests the read sent (pg_cancel.ts: sent again). */
  get cancels(): number {
    return this.#cancelling?.sent ?? 0;
  }
  /**
   * Whether the server took the last cancel request sent (it closed the
   * request's socket, having signalled the session): it is up and
   * reachable, whatever the session's statement does.
   */
  get cancelsTaken(): boolean {
    return this.#cancelling?.taken ?? false;
  }
  /**
   * Whether the session may serve another statement as far as the read's
   * cancel requests go (pg_cancel.ts `reusableAfterStop`): none was sent.
   * Known once the read's statement ended.
   */
  get cancelsSpent(): boolean {
    return reusableAfterStop(this.#cancelling);
  }
  /** The read closed its session (a value too large to read out). */
  abandoned = false;
  /** Socket writes of this read (one). */
  writes = 0;
  /**
   * Whether the read ran lean: BEGIN READ ONLY, its statement and ROLLBACK
   * in one batch, under session-level settings (pg_lean.ts).
   */
  lean = false;
  /**
   * A ParameterStatus the read did not cause: the session changed under it
   * (a statement set a reported setting), so it is never reused.
   */
  changed: string | null = null;

  #ask: ReadAsk;
  #resolve!: (result: QueryResult) => void;
  #reject!: (error: Error) => void;
  #wire: Wire | null = null;
  /** The socket lent to the read, even once given back (`drop`). */
  #lent: Wire | null = null;
  /** ReadyForQuery messages so far, and the statement's own (its Sync's). */
  #phase = 0;
  #phases = 0;
  #statementPhase = 0;
  #plan: Plan | null = null;
  #recovering = false;
  #budget: Budget;
  #columns: RowColumn[] = [];
  #beginError: Error | null = null;
  #statementError: Error | null = null;
  #cleanError: Error | null = null;
  #command = "";
  #count: number | null = null;
  #drained = 0;
  /** The read stopped its statement itself: its answer was full. */
  #stoppedByUs = false;
  /** A cancel request was sent for this read (by it, or for its caller). */
  #cancelled = false;
  /** Its cancel requests, sent again while the statement runs on. */
  #cancelling: Cancelling | null = null;
  #over = false;
  // The incoming message being read.
  /** A header split between chunks; most reads never need one (lazy). */
  #head: Buffer | null = null;
  #headHave = 0;
  #type = 0;
  #left = 0;
  #body: Buffer | null = null;
  #bodyHave = 0;
  #row: BigRow | null = null;

  constructor(ask: ReadAsk) {
    this.#ask = ask;
    this.#budget = new Budget({
      maxRows: ask.maxRows,
      maxBytes: ask.maxBytes,
      maxCellChars: ask.maxCellChars,
    });
    this.done = new Promise<QueryResult>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.done.catch(() => {});
  }

  /** The socket is ours: send the whole exchange in one write. */
  start(wire: Wire): void {
    this.started = true;
    this.#wire = wire;
    this.#lent = wire;
    const plan = planFor(this.#ask, wire.session);
    this.#plan = plan;
    this.lean = plan.lean !== null;
    this.#statementPhase = plan.begin === "" ? 0 : 1;
    this.#phases = this.#statementPhase + 1 + plan.after.length;
    this.writes++;
    const bytes = exchange({
      ...this.#ask,
      begin: plan.begin,
      wrap: plan.wrap,
      after: plan.after,
    });
    this.sent = bytes.length;
    wire.write(bytes);
  }

  /** The read never got its socket (the marker reached the server). */
  unwired(error: Error): void {
    if (!this.started) this.#settle(error);
  }

  closed(error: Error): void {
    if (this.finished || this.#over) return;
    this.#wire = null;
    this.#settle(error);
  }

  data(chunk: Uint8Array): void {
    const bytes = chunk instanceof Buffer
      ? chunk
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    let at = 0;
    const end = bytes.length;
    while (at < end && !this.#over) {
      if (this.#left > 0) {
        const n = Math.min(this.#left, end - at);
        if (this.#row !== null) {
          if (this.#row.bytes(bytes, at, at + n)) this.#abandon(this.#row);
        } else {
          bytes.copy(this.#body!, this.#bodyHave, at, at + n);
          this.#bodyHave += n;
        }
        at += n;
        this.#left -= n;
        if (this.#left === 0) this.#bodyDone();
        continue;
      }
      // A whole message in this chunk: read in place.
      if (this.#headHave === 0 && end - at >= 5) {
        const length = bytes.readUInt32BE(at + 1);
        if (end - at >= length + 1) {
          this.#message(bytes[at]!, bytes, at + 5, at + 1 + length);
          at += length + 1;
          continue;
        }
      }
      const n = Math.min(5 - this.#headHave, end - at);
      const head = this.#head ??= Buffer.alloc(5);
      bytes.copy(head, this.#headHave, at, at + n);
      this.#headHave += n;
      at += n;
      if (this.#headHave === 5) {
        this.#headHave = 0;
        this.#type = head[0]!;
        this.#left = head.readUInt32BE(1) - 4;
        this.#startBody();
      }
    }
  }

  #startBody(): void {
    if (this.#type === 0x44 && this.#left > STREAM_ROW_BYTES) {
      this.#row = new BigRow({
        keep: this.#budget.open && this.#phase === this.#statementPhase,
        columns: this.#columns,
        maxCellChars: this.#ask.maxCellChars,
        budget: this.#budget,
        cellAt: (bytes, start, end, column) =>
          this.#cellAt(bytes, start, end, column),
      });
    } else {
      this.#body = Buffer.allocUnsafe(this.#left);
      this.#bodyHave = 0;
    }
    if (this.#left === 0) this.#bodyDone();
  }

  #bodyDone(): void {
    if (this.#row !== null) {
      const row = this.#row;
      this.#row = null;
      this.#rowDone(row);
      return;
    }
    const body = this.#body!;
    this.#body = null;
    this.#message(this.#type, body, 0, body.length);
  }

  /**
   * One message, its body `start` to `end` of `bytes`: read in place, no
   * view made of a message that needs none (issue 38: a read gets six to
   * eight; a Buffer view each was a visible share of its allocations).
   */
  #message(type: number, bytes: Buffer, start: number, end: number): void {
    switch (type) {
      case 0x44: // D: DataRow
        if (this.#phase === this.#statementPhase) {
          this.#dataRow(bytes, start, end);
        }
        return;
      case 0x54: // T: RowDescription
        if (this.#phase === this.#statementPhase) this.#describe(bytes, start);
        return;
      case 0x43: // C: CommandComplete
        if (this.#phase === this.#statementPhase) {
          this.#complete(bytes, start, end);
        }
        return;
      case 0x45: // E: ErrorResponse
        this.#error(pgError(bytes.subarray(start, end)));
        return;
      case 0x5a: // Z: ReadyForQuery
        this.#ready(bytes[start]!);
        return;
      case 0x53: // S: ParameterStatus
        this.#parameter(bytes.subarray(start, end));
        return;
    }
    // ParseComplete, BindComplete, NoData, PortalSuspended (the row cap was
    // reached: the answer says so itself), EmptyQueryResponse, notices and
    // parameter reports carry nothing this read needs.
  }

  /**
   * A reported setting changed. During a lean read only the settings it set
   * itself, before its statement, may be reported (PostgreSQL 14 and later
   * report `default_transaction_read_only`): any other report means the
   * session is no longer as the read knew it, and it is closed.
   */
  #parameter(body: Buffer): void {
    const plan = this.#plan;
    if (plan === null || plan.lean === null) return;
    const nul = body.indexOf(0);
    const name = body.toString("utf8", 0, nul);
    const value = body.toString("utf8", nul + 1, body.indexOf(0, nul + 1));
    const expected = plan.reports.get(name);
    const ours = this.#phase < this.#statementPhase && expected !== undefined &&
      (expected === null || expected === value);
    if (!ours) this.changed ??= `${name} = ${value}`;
  }

  #describe(body: Buffer, start: number): void {
    const count = body.readInt16BE(start);
    let at = start + 2;
    const columns: RowColumn[] = [];
    for (let i = 0; i < count; i++) {
      const nul = body.indexOf(0, at);
      const name = body.toString("utf8", at, nul);
      at = nul + 1;
      const type = body.readUInt32BE(at + 6);
      at += 18;
      const array = this.#ask.isArray(type);
      columns.push({
        name,
        type,
        array,
        verbatim: isVerbatimText(type, array),
      });
    }
    this.#columns = columns;
  }

  #dataRow(body: Buffer, start: number, end: number): void {
    if (!this.#budget.open) return this.#drain(end - start);
    const count = body.readInt16BE(start);
    let at = start + 2;
    const cells: (Cell | CutCell)[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const length = body.readInt32BE(at);
      at += 4;
      if (length < 0) {
        cells[i] = null;
        continue;
      }
      cells[i] = this.#cellAt(body, at, at + length, this.#columns[i]!);
      at += length;
    }
    this.#budget.sawRaw(end - start);
    this.#budget.add(cells);
  }

  /**
   * The value `start` to `end` of `bytes` as its cell (no view made of it);
   * a long text is cut before it is decoded.
   */
  #cellAt(
    bytes: Buffer,
    start: number,
    end: number,
    column: RowColumn,
  ): Cell | CutCell {
    // A character takes at least one byte: a short value is never cut.
    if (column.verbatim && end - start > this.#ask.maxCellChars) {
      const cut = cutUtf8(bytes.subarray(start, end), this.#ask.maxCellChars);
      if (cut !== null) return cut;
    }
    return cellAt(bytes, start, end, column.type, column.array);
  }

  /**
   * A row with a value larger than the answer can hold (pg_big_row.ts): the
   * session is closed under it, and the read answers with what it has.
   */
  #abandon(row: BigRow): void {
    this.#row = null;
    this.#left = 0;
    this.#budget.sawRaw(row.size);
    this.#budget.add(row.cells, row.state);
    this.#budget.truncation.bytes = true;
    this.finished = true;
    this.clean = false;
    this.abandoned = true;
    const wire = this.#wire;
    this.#wire = null;
    this.#over = true;
    wire?.destroy();
    this.#settle(this.#result());
  }

  #rowDone(row: BigRow): void {
    if (!row.keep) return this.#drain(row.size);
    this.#budget.sawRaw(row.size);
    this.#budget.add(row.cells, row.state);
  }

  /**
   * A row that came after the answer was full (the Execute's limit is one
   * past the row cap, so only a byte budget spent early leaves many): past
   * a megabyte of them the statement is stopped rather than read out.
   */
  #drain(bytes: number): void {
    this.#drained += bytes;
    if (this.#drained > DRAIN_BYTES) this.#stop();
  }

  #stop(): void {
    if (this.#stoppedByUs || this.#phase !== this.#statementPhase) return;
    this.#stoppedByUs = true;
    this.stop();
  }

  /**
   * Stop the statement on the server (a timeout, a cancelled request): a
   * cancel request, sent again while the statement has not ended (a
   * backend drops one that finds it reading a command: pg_cancel.ts), none
   * once its answer came. Whatever the requests stop — the statement, or
   * the clean-up after it should one arrive late — the read finds out and
   * repairs, once every request was delivered, before it gives the
   * session back (`#ready`).
   */
  stop(): void {
    if (!this.started || this.finished || this.#over || this.#cancelled) {
      return;
    }
    this.#cancelled = true;
    const cancelling = cancelUntilEnded(() => this.#ask.stop());
    this.#cancelling = cancelling;
    this.stopping = cancelling.delivered;
    if (this.#phase > this.#statementPhase) cancelling.end();
  }

  /** The statement ended, or the read is over: no more cancel requests. */
  #ended(): void {
    this.#cancelling?.end();
  }

  #complete(body: Buffer, start: number, end: number): void {
    const tag = body.toString("utf8", start, end - 1);
    // A lean read's own BEGIN and ROLLBACK answer in the statement's phase
    // (the statement itself, a vetted read, is neither).
    if (this.#plan?.wrap === true && (tag === "BEGIN" || tag === "ROLLBACK")) {
      return;
    }
    const space = tag.lastIndexOf(" ");
    const last = space < 0 ? "" : tag.slice(space + 1);
    this.#command = /^\d+$/.test(last) ? tag.slice(0, tag.indexOf(" ")) : tag;
    this.#count = /^\d+$/.test(last) ? Number(last) : null;
  }

  #error(error: Error): void {
    if (this.#phase < this.#statementPhase) this.#beginError ??= error;
    else if (this.#phase === this.#statementPhase) {
      this.#statementError ??= error;
    } else this.#cleanError ??= error;
  }

  #ready(status: number): void {
    this.#phase++;
    // The statement's Sync answered: it has ended.
    if (this.#phase > this.#statementPhase) this.#ended();
    if (this.#phase < this.#phases) return;
    // The read's cancel requests ended with the statement (`#ended`): the
    // session is reused only if none was sent (pg_cancel.ts
    // `reusableAfterStop`). Otherwise one may land at any later time, on
    // whatever the session runs then: it is closed, however its clean-up
    // went.
    const spent = this.cancelsSpent;
    // 'I': idle, outside any transaction, as the session was lent.
    const clean = this.#cleanError === null && status === 0x49 &&
      this.changed === null && spent;
    // Left in a failed transaction — a lean read's statement failed and its
    // ROLLBACK before the Sync was skipped — or the cancel request landed on
    // the clean-up after the statement had ended: the clean-up again.
    if (
      !clean && this.changed === null && spent &&
      (this.#cancelled || status === 0x45) &&
      !this.#recovering && this.#plan!.recover.length > 0
    ) return this.#recover();
    this.finished = true;
    this.clean = clean;
    const wire = this.#wire;
    if (clean && wire !== null) this.#settled(wire);
    this.#wire = null;
    this.#over = true;
    // A session left in an unknown state is closed under postgres.js, which
    // opens a new one when it needs it; a clean one is held idle, for the
    // next read or for postgres.js (pg_wired.ts `handBack`).
    if (clean) wire?.hold();
    else wire?.destroy();
    const cancelled = this.#stoppedByUs &&
      (this.#statementError as { code?: string } | null)?.code === "57014";
    const error = this.#beginError ??
      (cancelled ? null : this.#statementError);
    this.#settle(error ?? this.#result());
  }

  /** What the session's settings are now, after a clean read. */
  #settled(wire: Wire): void {
    const plan = this.#plan!;
    if (plan.lean !== null) {
      // Set in one simple query: all of them, or none when it failed.
      if (this.#beginError !== null) return;
      wire.session.readOnly = true;
      wire.session.timeout = plan.lean.timeout;
      wire.session.app = plan.lean.app;
    } else if (plan.after.includes("DISCARD ALL")) {
      // Back to what the session started with: its name known, the rest
      // set again by the next lean read.
      wire.session.readOnly = false;
      wire.session.timeout = null;
      wire.session.app = "";
    }
  }

  /**
   * A lean read's statement failed inside its batch (its ROLLBACK skipped,
   * the transaction left aborted): the clean-up is sent again on the same
   * socket. Never after a cancel request was sent (`cancelsSpent`): that
   * session is closed.
   */
  #recover(): void {
    this.#recovering = true;
    this.#cleanError = null;
    const recover = this.#plan!.recover;
    this.#phases += recover.length;
    const wire = this.#wire;
    // Not from inside the socket's data event.
    queueMicrotask(() => {
      if (this.#over || this.#wire !== wire || wire === null) return;
      this.writes++;
      wire.write(simpleQueries(recover));
    });
  }

  /**
   * Close the session under postgres.js when the read still holds it (its
   * answer never came): nothing more is sent on it, and postgres.js opens
   * another when it needs one.
   */
  drop(): Promise<void> {
    this.#wire = null;
    this.#over = true;
    this.#ended();
    const lent = this.#lent;
    if (lent === null) return Promise.resolve();
    lent.destroy();
    return lent.closed();
  }

  #result(): QueryResult {
    const budget = this.#budget;
    return {
      columns: this.#columns.map((column) => column.name),
      // What postgres.js's path names too (the console's grid shows them).
      columnTypes: this.#columns.map((column) => pgTypeName(column.type)),
      rows: budget.rows,
      rowsAffected: this.#command !== "SELECT" && this.#count !== null
        ? this.#count
        : 0,
      truncated: budget.truncation.rows || budget.truncation.bytes,
      truncation: budget.truncation,
    };
  }

  #settle(outcome: Error | QueryResult): void {
    this.#over = true;
    // Closed, abandoned, never wired, or answered: nothing more to stop.
    this.#ended();
    if (outcome instanceof Error) this.#reject(outcome);
    else this.#resolve(outcome);
  }
}
