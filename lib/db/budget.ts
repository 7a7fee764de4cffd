/**
 * The size of an answer, counted while its rows are read: a row cap, a byte
 * budget for the rows' JSON text and a cap on each cell, so that no result
 * can grow past what the process (and a model's context) can hold. Drivers
 * stop fetching as soon as the budget says so; nothing is read whole and
 * trimmed afterwards (docs/security.md "Bounded answers").
 *
 * @module
 */

import type { Cell, Truncation } from "./types.ts";

/** The limits of one answer. */
export interface Limits {
  /** Rows to keep. */
  maxRows: number;
  /** The rows' JSON text, in bytes (approximately: UTF-16 code units). */
  maxBytes: number;
  /** The longest text cell kept whole, in characters. */
  maxCellChars: number;
}

export type { Truncation };

/**
 * A text cell cut while it was decoded ({@linkcode cutUtf8}): counted as a
 * cut cell and kept as it is.
 */
export class CutCell {
  constructor(readonly text: string) {}
}

/** Where a raw result's batches are sized: about this many bytes at a time. */
const BATCH_BYTES = 8 * 1024 * 1024;

/** Counts rows and bytes as they are kept; cuts long cells. */
export class Budget {
  readonly rows: Cell[][] = [];
  readonly truncation: Truncation = { rows: false, bytes: false, cells: 0 };
  #bytes = 2;
  #rawBytes = 0;
  #rawRows = 0;

  constructor(readonly limits: Limits) {}

  /** Bytes of JSON text the answer can still take. */
  get left(): number {
    return this.limits.maxBytes - this.#bytes;
  }

  /** Whether a further row could still be kept. */
  get open(): boolean {
    return !this.truncation.rows && !this.truncation.bytes;
  }

  /**
   * Keep one row of mapped cells if it fits; returns whether more rows are
   * wanted. The row past the cap is what tells that the result was cut.
   */
  add(row: (Cell | CutCell)[]): boolean {
    if (!this.open) return false;
    if (this.rows.length >= this.limits.maxRows) {
      this.truncation.rows = true;
      return false;
    }
    let size = 3;
    for (let i = 0; i < row.length; i++) {
      const value = row[i]!;
      let cell: Cell;
      if (value instanceof CutCell) {
        this.truncation.cells++;
        cell = value.text;
      } else cell = this.cut(value);
      row[i] = cell;
      size += jsonSize(cell) + 1;
    }
    // The first row is always kept: an answer with no row at all tells the
    // model nothing about why. Its cells are cut to share the budget.
    if (this.rows.length === 0 && this.#bytes + size > this.limits.maxBytes) {
      size = this.#shrink(row as Cell[]);
    }
    if (this.rows.length > 0 && this.#bytes + size > this.limits.maxBytes) {
      this.truncation.bytes = true;
      return false;
    }
    this.#bytes += size;
    this.rows.push(row as Cell[]);
    return true;
  }

  /**
   * Cut the cells of a row too big for the whole budget to an even share of
   * it; returns the row's size then.
   */
  #shrink(row: Cell[]): number {
    const share = Math.max(
      100,
      Math.floor((this.limits.maxBytes - this.#bytes) / row.length) - 48,
    );
    let size = 3;
    for (let i = 0; i < row.length; i++) {
      let cell = row[i]!;
      if (jsonSize(cell) > share) {
        const text = typeof cell === "string" ? cell : JSON.stringify(cell);
        // Already cut: what it left out is counted once.
        if (!text.includes("…[cut: ")) this.truncation.cells++;
        // The share is of JSON text: escapes make a cut text longer.
        let keep = share;
        cell = cutText(text, keep);
        while (jsonSize(cell) > share + 48 && keep > 1) {
          keep = Math.max(1, Math.floor(keep * share / jsonSize(cell)) - 1);
          cell = cutText(text, keep);
        }
        row[i] = cell;
      }
      size += jsonSize(cell) + 1;
    }
    return size;
  }

  /** Note a raw row's size on the wire, for sizing the next batch. */
  sawRaw(bytes: number): void {
    this.#rawBytes += bytes;
    this.#rawRows++;
  }

  /**
   * How many rows to fetch next: what is still wanted, and no more than
   * about 8 MiB of rows of the size seen so far.
   */
  nextBatch(most: number): number {
    const wanted = this.limits.maxRows + 1 - this.rows.length;
    const average = this.#rawRows === 0 ? 1 : this.#rawBytes / this.#rawRows;
    const bySize = Math.max(1, Math.floor(BATCH_BYTES / Math.max(1, average)));
    return Math.max(1, Math.min(most, wanted, bySize));
  }

  /** A cell within `maxCellChars`, with a visible marker where it was cut. */
  cut(cell: Cell): Cell {
    const max = this.limits.maxCellChars;
    if (typeof cell === "string") {
      if (cell.length <= max) return cell;
      this.truncation.cells++;
      return cutText(cell, max);
    }
    if (cell !== null && typeof cell === "object") {
      const text = JSON.stringify(cell);
      if (text.length <= max) return cell;
      this.truncation.cells++;
      return cutText(text, max);
    }
    return cell;
  }
}

/**
 * `text` cut to `max` characters, ending with what was left out; `length`
 * is the whole text's when `text` is only its beginning.
 */
export function cutText(
  text: string,
  max: number,
  length = text.length,
): string {
  let end = max;
  // Never split a surrogate pair.
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  const rest = length - end;
  return `${text.slice(0, end)}…[cut: ${
    rest.toLocaleString("en-US")
  } more characters]`;
}

/**
 * UTF-8 text past `max` characters, cut as {@linkcode cutText} cuts it but
 * decoding only the bytes it keeps: a 3 MB value is never a 3 MB string
 * (bench W5). `null` when the text fits and should be decoded as usual.
 */
export function cutUtf8(bytes: Uint8Array, max: number): CutCell | null {
  // A character takes at least one byte: short values need no count.
  if (bytes.length <= max) return null;
  // UTF-16 code units, as String.length counts them: one per lead byte, two
  // for a four-byte sequence (a surrogate pair).
  let units = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if ((byte & 0xc0) !== 0x80) units += byte >= 0xf0 ? 2 : 1;
  }
  if (units <= max) return null;
  // A code unit takes at most three bytes, so these hold `max` whole ones.
  const head = DECODER.decode(bytes.subarray(0, 3 * max + 3));
  return new CutCell(cutText(head, max, units));
}

const DECODER = new TextDecoder();

// deno-lint-ignore no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

/** The length of a cell's JSON text, estimated without building it. */
function jsonSize(cell: Cell): number {
  if (cell === null) return 4;
  switch (typeof cell) {
    case "string":
      // Quotes, backslashes and control characters take more than one.
      return NEEDS_ESCAPE.test(cell)
        ? JSON.stringify(cell).length
        : cell.length + 2;
    case "number":
      return 12;
    case "boolean":
      return 5;
  }
  return JSON.stringify(cell).length;
}
