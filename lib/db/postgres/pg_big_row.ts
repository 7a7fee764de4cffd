/**
 * A PostgreSQL `DataRow` too large to be held whole, read as it streams
 * (pg_read.ts hands it the row's bytes as they arrive): a long text keeps
 * only the head its cell shows, a value of a row the answer has no room for
 * is skipped, and a value larger than what is left of the answer is never
 * read to its end — the read is abandoned with what it has (docs/performance.md
 * "Huge values").
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { CutCell, cutText } from "../budget.ts";
import type { Cell } from "../types.ts";

/** A column of a read's answer, as its RowDescription named it. */
export type RowColumn = {
  name: string;
  type: number;
  array: boolean;
  /** A text whose bytes are its characters (pg_values.ts `isVerbatimText`). */
  verbatim: boolean;
};

/** A value up to this size is always held whole, whatever the budget left. */
const KEEP_VALUE_BYTES = 8 * 1024 * 1024;

const DECODER = new TextDecoder();

/** An empty value's bytes. */
const EMPTY = Buffer.alloc(0);

/** A value being read as it streams. */
type Streaming = {
  length: number;
  have: number;
  mode: "keep" | "cut" | "skip" | "stop";
  bytes: Buffer | null;
  units: number;
};

/** What a big row needs of its read. */
export interface BigRowOptions {
  /** Whether the row goes into the answer (false: read past and counted). */
  keep: boolean;
  columns: readonly RowColumn[];
  maxCellChars: number;
  /** What is left of the answer's byte budget now. */
  left(): number;
  /** A whole value as its cell (a long text cut before it is decoded). */
  cellAt(
    bytes: Buffer,
    start: number,
    end: number,
    column: RowColumn,
  ): Cell | CutCell;
}

/** One DataRow read as it streams. */
export class BigRow {
  /** The row's cells so far. */
  readonly cells: (Cell | CutCell)[] = [];
  /** Its values' bytes so far (what the answer's byte count sees). */
  size = 0;
  readonly keep: boolean;
  readonly #options: BigRowOptions;
  /** The column count, once read (-1 before). */
  #columns = -1;
  /** Header bytes (the column count, a value's length) not complete yet. */
  readonly #head = Buffer.alloc(4);
  #headHave = 0;
  #value: Streaming | null = null;

  constructor(options: BigRowOptions) {
    this.#options = options;
    this.keep = options.keep;
  }

  /**
   * The row's bytes `from` to `to` of `bytes`. True when the row is
   * abandoned: a value larger than the answer can hold, whose head is now
   * its cell ({@linkcode BigRow.cells} complete, with every value after it
   * marked not read); nothing more of the row may be read.
   */
  bytes(bytes: Buffer, from: number, to: number): boolean {
    let at = from;
    while (at < to) {
      const value = this.#value;
      if (value !== null) {
        const n = Math.min(value.length - value.have, to - at);
        valueBytes(value, bytes, at, at + n);
        value.have += n;
        at += n;
        if (value.mode === "stop" && value.have >= (value.bytes?.length ?? 0)) {
          this.#abandon(value);
          return true;
        }
        if (value.have === value.length) {
          this.#value = null;
          this.#valueDone(value);
        }
        continue;
      }
      // The column count (2 bytes), then each value's length (4).
      const want = this.#columns < 0 ? 2 : 4;
      const n = Math.min(want - this.#headHave, to - at);
      bytes.copy(this.#head, this.#headHave, at, at + n);
      this.#headHave += n;
      at += n;
      if (this.#headHave < want) continue;
      this.#headHave = 0;
      if (this.#columns < 0) {
        this.#columns = this.#head.readInt16BE(0);
        continue;
      }
      const length = this.#head.readInt32BE(0);
      if (length < 0) {
        if (this.keep) this.cells.push(null);
        continue;
      }
      this.size += length;
      const next = this.#streaming(
        length,
        this.#options.columns[this.cells.length],
      );
      this.#value = next;
      if (next.mode === "stop" && next.bytes === null) {
        this.#abandon(next);
        return true;
      }
      if (length === 0) {
        this.#value = null;
        this.#valueDone(next);
      }
    }
    return false;
  }

  /** How a value of `length` bytes is read: held, cut or skipped. */
  #streaming(length: number, column?: RowColumn): Streaming {
    const max = this.#options.maxCellChars;
    let mode: Streaming["mode"] = "keep";
    if (!this.keep || column === undefined) mode = "skip";
    // A character takes at most three bytes per UTF-16 code unit: longer
    // than this, the text is cut for certain, and only its head is kept.
    else if (column.verbatim && length > 3 * max + 3) mode = "cut";
    if (
      mode !== "skip" && length > KEEP_VALUE_BYTES &&
      length > this.#options.left()
    ) {
      // Larger than the answer can hold: its head is all that is read.
      mode = "stop";
    }
    const held = mode === "keep"
      ? length
      : mode === "skip"
      ? 0
      : mode === "stop" && !column!.verbatim
      ? 0
      : 3 * max + 3;
    return {
      length,
      have: 0,
      mode,
      bytes: held === 0 ? null : Buffer.allocUnsafe(held),
      units: 0,
    };
  }

  /**
   * A value larger than the answer can hold: it is never read to its end.
   * A PostgreSQL server sends a row whole once it started it (a cancel
   * request waits for the row's last byte), so the read closes the session
   * under it — reading 400 MB to throw it away would churn as much memory
   * through the process — and answers with what it has: the rows before,
   * this row's values before it, its head (a text's) and what was left out.
   */
  #abandon(value: Streaming): void {
    const max = this.#options.maxCellChars;
    const size = `${value.length.toLocaleString("en-US")} bytes`;
    const head = value.bytes === null ? "" : DECODER.decode(value.bytes);
    this.cells.push(
      new CutCell(
        `${
          head.slice(0, max)
        }…[cut: a value of ${size}, larger than what was left of the answer; the statement was stopped]`,
      ),
    );
    for (let i = this.cells.length; i < Math.max(this.#columns, 0); i++) {
      this.cells.push(new CutCell("…[not read: the statement was stopped]"));
    }
  }

  #valueDone(value: Streaming): void {
    if (!this.keep) return;
    const column = this.#options.columns[this.cells.length]!;
    if (value.mode === "keep") {
      // An empty value holds no buffer: `''` in a row of a long text
      // (`select repeat('x', 300000), ''`) threw in the socket's data
      // handler and ended the process (stop 49).
      const bytes = value.bytes ?? EMPTY;
      this.cells.push(this.#options.cellAt(bytes, 0, bytes.length, column));
    } else {
      const head = DECODER.decode(value.bytes!);
      const max = this.#options.maxCellChars;
      this.cells.push(new CutCell(cutText(head, max, value.units)));
    }
  }
}

/** Bytes `from` to `to` of a streaming value: held, or only counted. */
function valueBytes(value: Streaming, bytes: Buffer, from: number, to: number) {
  if (value.mode === "skip") return;
  if (value.mode === "stop") {
    const room = value.bytes!.length - value.have;
    bytes.copy(
      value.bytes!,
      value.have,
      from,
      from + Math.min(room, to - from),
    );
    return;
  }
  if (value.mode === "keep") {
    bytes.copy(value.bytes!, value.have, from, to);
    return;
  }
  const room = value.bytes!.length - value.have;
  if (room > 0) {
    bytes.copy(
      value.bytes!,
      value.have,
      from,
      from + Math.min(room, to - from),
    );
  }
  // UTF-16 code units, as cutUtf8 counts them.
  let units = 0;
  for (let i = from; i < to; i++) {
    const byte = bytes[i]!;
    if ((byte & 0xc0) !== 0x80) units += byte >= 0xf0 ? 2 : 1;
  }
  value.units += units;
}
