/**
 * A PostgreSQL `DataRow` too large to be held whole, read as it streams
 * (pg_read.ts hands it the row's bytes as they arrive): a long text or bytea
 * keeps only the head its cell shows, each value is cut to the cell cap as
 * soon as it ends, a row the answer has no room for keeps nothing more than
 * whether each later value was cut (its bytes counted and skipped), the
 * first row too large for the answer has each cell cut to its share as it
 * ends, a value of a row the answer does not want is skipped, and a value
 * larger than what is left of the answer is never read to its end — the read
 * is abandoned with what it has (docs/performance.md "Huge values"). So a
 * row holds about what the answer can show of it, plus the one value being
 * read (a value other than a text or a bytea is held whole while it streams,
 * up to 8 MiB, and converted once it ends): the cells are exactly those of
 * the row read whole and cut by `Budget.add`
 * (tests/db/pg_read_differential_test.ts).
 *
 * @module
 */

import { Buffer } from "node:buffer";
import {
  capCell,
  cellSize,
  CutCell,
  cutText,
  decodeHead,
  type RowState,
  shrinkCell,
} from "../budget.ts";
import type { Cell } from "../types.ts";
import { binaryCell } from "../values.ts";
import { hexBytes } from "./pg_values.ts";

/** A column of a read's answer, as its RowDescription named it. */
export type RowColumn = {
  name: string;
  type: number;
  array: boolean;
  /** A text whose bytes are its characters (pg_values.ts `isVerbatimText`). */
  verbatim: boolean;
};

/**
 * A value up to this size is always read to its end, whatever the budget
 * left (held whole while it streams unless it is a text or a bytea).
 */
const KEEP_VALUE_BYTES = 8 * 1024 * 1024;

/** An empty value's bytes. */
const EMPTY = Buffer.alloc(0);

/**
 * A value being read as it streams: held whole (`keep`), a text's head held
 * and its characters counted (`cut`), a text's characters counted only
 * (`count`), a bytea's hex head held (`hex`: its base64 cell's head, its
 * length known from the value's), skipped, or its head read and the row
 * abandoned (`stop`).
 */
type Streaming = {
  length: number;
  have: number;
  mode: "keep" | "cut" | "count" | "hex" | "skip" | "stop";
  bytes: Buffer | null;
  units: number;
};

/** bytea's type, whose hex text (`\x0a0b…`) is cut as its base64 cell. */
const BYTEA = 17;

/** The length of the base64 cell of a bytea whose hex text has `length` bytes. */
function base64Length(length: number): number {
  return 4 * Math.ceil(Math.trunc((length - 2) / 2) / 3);
}

/** What a big row needs of its read. */
export interface BigRowOptions {
  /** Whether the row goes into the answer (false: read past and counted). */
  keep: boolean;
  columns: readonly RowColumn[];
  maxCellChars: number;
  /** The answer's budget (budget.ts `Budget`), as it is before this row. */
  budget: RowBudget;
  /** A whole value as its cell (a long text cut before it is decoded). */
  cellAt(
    bytes: Buffer,
    start: number,
    end: number,
    column: RowColumn,
  ): Cell | CutCell;
}

/** What a big row asks of its answer's budget (budget.ts `Budget`). */
export interface RowBudget {
  /** What is left of the answer's byte budget now. */
  readonly left: number;
  /** Whether a row of at least `size` is refused whatever else it holds. */
  refuses(size: number): boolean;
  /** Whether the first row, at least `size`, is cut to fit (`share`). */
  shrinks(size: number): boolean;
  /** Each cell's share of the answer then. */
  share(cells: number): number;
}

/** One DataRow read as it streams. */
export class BigRow {
  /** The row's cells so far. */
  readonly cells: (Cell | CutCell)[] = [];
  /** Its values' bytes so far (what the answer's byte count sees). */
  size = 0;
  readonly keep: boolean;
  /**
   * The answer refuses the row (`Budget.refuses`): its cells from then on
   * only tell whether each was cut (a `CutCell`) or not (null), and nothing
   * more of it is held (`Budget.add`'s `refused`).
   */
  refused = false;
  /** The row's size as the answer counts it, its cells so far. */
  #rowSize = 3;
  /**
   * The first row is too large for the answer: its cells are cut to their
   * share as they end (`Budget.share`), this many of them counted as cut
   * (null before).
   */
  #shrunk: number | null = null;
  #share = 0;
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
    this.refused = this.keep && options.budget.refuses(this.#rowSize);
  }

  /** What the answer is to make of the row's cells (`Budget.add`). */
  get state(): RowState | undefined {
    if (this.refused) return { refused: true };
    return this.#shrunk === null ? undefined : { shrunk: this.#shrunk };
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
        let n = Math.min(value.length - value.have, to - at);
        // A bytea's first two bytes tell its format: hex (`\x`), or the
        // escape format of old settings, held whole as before.
        if (value.mode === "hex" && value.have < 2) {
          n = Math.min(n, 2 - value.have);
        }
        valueBytes(value, bytes, at, at + n);
        value.have += n;
        at += n;
        if (
          value.mode === "hex" && value.have === 2 &&
          (value.bytes![0] !== 0x5c || value.bytes![1] !== 0x78)
        ) {
          const whole = Buffer.allocUnsafe(value.length);
          value.bytes!.copy(whole, 0, 0, 2);
          value.bytes = whole;
          value.mode = "keep";
        }
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
    let held = length;
    if (!this.keep || column === undefined) mode = "skip";
    // A refused row's text needs only its characters counted.
    else if (column.verbatim && this.refused) mode = "count";
    // A character takes at most three bytes per UTF-16 code unit: longer
    // than this, the text is cut for certain, and only its head is kept.
    else if (column.verbatim && length > 3 * max + 3) mode = "cut";
    else if (column.type === BYTEA && !column.array && length >= 2) {
      // Its cell is the base64 of `(length - 2) / 2` bytes: past the cap,
      // the hex of the bytes the cell shows is all that is held (a refused
      // row's: its format only).
      if (this.refused || base64Length(length) > max) {
        mode = "hex";
        held = this.refused ? 2 : Math.min(length, 2 + 6 * Math.ceil(max / 4));
      }
    }
    if (
      mode !== "skip" && length > KEEP_VALUE_BYTES &&
      length > this.#options.budget.left
    ) {
      // Larger than the answer can hold: its head is all that is read.
      mode = "stop";
    }
    if (mode === "skip" || mode === "count") held = 0;
    else if (mode === "cut") held = 3 * max + 3;
    else if (mode === "stop") held = column!.verbatim ? 3 * max + 3 : 0;
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
    const head = value.bytes === null ? "" : decodeHead(value.bytes, max);
    this.cells.push(this.#final(
      new CutCell(
        `${
          head.slice(0, max)
        }…[cut: a value of ${size}, larger than what was left of the answer; the statement was stopped]`,
      ),
    ));
    for (let i = this.cells.length; i < Math.max(this.#columns, 0); i++) {
      this.cells.push(
        this.#final(new CutCell("…[not read: the statement was stopped]")),
      );
    }
  }

  /**
   * A value read to its end: its cell, cut to the cap at once (what the
   * answer would cut it to: `Budget.cut`), so that a row holds no more than
   * its cells show; once the answer refuses the row, only whether it was cut.
   */
  #valueDone(value: Streaming): void {
    if (!this.keep) return;
    const column = this.#options.columns[this.cells.length]!;
    const max = this.#options.maxCellChars;
    let cell: Cell | CutCell;
    if (value.mode === "keep") {
      // An empty value holds no buffer: `''` in a row of a long text
      // (`select repeat('x', 300000), ''`) threw in the socket's data
      // handler and ended the process (stop 49).
      const bytes = value.bytes ?? EMPTY;
      cell = capCell(
        this.#options.cellAt(bytes, 0, bytes.length, column),
        max,
      );
    } else if (value.mode === "count") {
      cell = value.units > max ? CUT : null;
    } else if (value.mode === "hex") {
      const length = base64Length(value.length);
      cell = this.refused ? (length > max ? CUT : null) : new CutCell(
        cutText(
          binaryCell(hexBytes(value.bytes!.toString("latin1"))),
          max,
          length,
        ),
      );
    } else {
      cell = new CutCell(
        cutText(decodeHead(value.bytes!, max), max, value.units),
      );
    }
    if (this.refused) {
      this.cells.push(cell instanceof CutCell ? CUT : null);
      return;
    }
    if (this.#shrunk !== null) {
      this.cells.push(this.#final(cell));
      return;
    }
    this.cells.push(cell);
    this.#rowSize += cellSize(cell);
    const budget = this.#options.budget;
    if (budget.refuses(this.#rowSize)) this.refused = true;
    else if (budget.shrinks(this.#rowSize)) {
      // The first row, too large: each cell is cut to its share now, as
      // the answer would cut it, so that the row holds no more than that.
      this.#shrunk = 0;
      this.#share = budget.share(Math.max(this.#columns, 0));
      for (let i = 0; i < this.cells.length; i++) {
        this.cells[i] = this.#final(this.cells[i]!);
      }
    }
  }

  /**
   * A cell as the answer keeps it: of the first row too large for the
   * answer, cut to its share and counted (`Budget.add`, `#shrink`).
   */
  #final(cell: Cell | CutCell): Cell | CutCell {
    if (this.#shrunk === null) return cell;
    let whole: Cell;
    if (cell instanceof CutCell) {
      this.#shrunk++;
      whole = cell.text;
    } else whole = cell;
    const shrunk = shrinkCell(whole, this.#share);
    if (shrunk.cut) this.#shrunk++;
    return shrunk.cell;
  }
}

/** A cut cell of a refused row: counted, never shown. */
const CUT = new CutCell("");

/** Bytes `from` to `to` of a streaming value: held, or only counted. */
function valueBytes(value: Streaming, bytes: Buffer, from: number, to: number) {
  if (value.mode === "skip") return;
  if (value.mode === "stop" || value.mode === "hex") {
    const room = value.bytes!.length - value.have;
    if (room > 0) {
      bytes.copy(
        value.bytes!,
        value.have,
        from,
        from + Math.min(room, to - from),
      );
    }
    return;
  }
  if (value.mode === "keep") {
    bytes.copy(value.bytes!, value.have, from, to);
    return;
  }
  const room = value.mode === "cut" ? value.bytes!.length - value.have : 0;
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
