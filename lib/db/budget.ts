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

/**
 * What a streamed row's reader already did to its cells (pg_big_row.ts):
 * `refused`, the answer refuses the row ({@linkcode Budget.refuses}) and
 * each cell only tells whether it was cut (a {@linkcode CutCell}) or not;
 * `shrunk`, the first row too large for the answer, its cells already cut
 * to the cap and to their share ({@linkcode shrinkCell}), with how many of
 * them were cut.
 */
export type RowState = { refused: true } | { shrunk: number };

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
   * Whether the first row, at least `size` bytes, is cut to fit
   * ({@linkcode Budget.share}) whatever its other cells.
   */
  shrinks(size: number): boolean {
    return this.rows.length === 0 && this.#bytes + size > this.limits.maxBytes;
  }

  /** Each cell's share of the answer when the first row does not fit. */
  share(cells: number): number {
    return Math.max(
      100,
      Math.floor((this.limits.maxBytes - this.#bytes) / cells) - 48,
    );
  }

  /**
   * Whether a row of at least `size` bytes (3 + each cell's {@linkcode
   * cellSize}) is refused whatever its other cells: past the row cap, or
   * not the first row and larger than what is left.
   */
  refuses(size: number): boolean {
    return this.rows.length >= this.limits.maxRows ||
      (this.rows.length > 0 && this.#bytes + size > this.limits.maxBytes);
  }

  /**
   * Keep one row of mapped cells if it fits; returns whether more rows are
   * wanted. The row past the cap is what tells that the result was cut.
   * `state`: what a streamed row's reader did to it ({@linkcode RowState}).
   */
  add(row: (Cell | CutCell)[], state?: RowState): boolean {
    if (!this.open) return false;
    if (this.rows.length >= this.limits.maxRows) {
      this.truncation.rows = true;
      return false;
    }
    let size = 3;
    if (state !== undefined && "shrunk" in state) {
      // The first row, already cut as `#shrink` would cut it.
      this.truncation.cells += state.shrunk;
      for (const cell of row) size += jsonSize(cell as Cell) + 1;
      this.#bytes += size;
      this.rows.push(row as Cell[]);
      return true;
    }
    const refused = state !== undefined;
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
    if (
      refused ||
      (this.rows.length > 0 && this.#bytes + size > this.limits.maxBytes)
    ) {
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
    const share = this.share(row.length);
    let size = 3;
    for (let i = 0; i < row.length; i++) {
      const shrunk = shrinkCell(row[i]!, share);
      if (shrunk.cut) this.truncation.cells++;
      row[i] = shrunk.cell;
      size += jsonSize(shrunk.cell) + 1;
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
    const capped = capCell(cell, this.limits.maxCellChars);
    if (!(capped instanceof CutCell)) return capped;
    this.truncation.cells++;
    return capped.text;
  }
}

/**
 * A cell within `max` characters: as it is, or cut with a visible marker
 * (a {@linkcode CutCell}) — what {@linkcode Budget.cut} keeps of it, and
 * counts once when the row is added.
 */
export function capCell(cell: Cell | CutCell, max: number): Cell | CutCell {
  if (typeof cell === "string") {
    return cell.length <= max ? cell : new CutCell(cutText(cell, max));
  }
  if (cell !== null && typeof cell === "object" && !(cell instanceof CutCell)) {
    const text = JSON.stringify(cell);
    return text.length <= max ? cell : new CutCell(cutText(text, max));
  }
  return cell;
}

/**
 * A cell (cut to the cap already) of a first row too large for the answer,
 * cut to its `share` ({@linkcode Budget.share}); `cut` when this cut is one
 * to count (a cell cut to the cap already is counted once).
 */
export function shrinkCell(
  cell: Cell,
  share: number,
): { cell: Cell; cut: boolean } {
  if (jsonSize(cell) <= share) return { cell, cut: false };
  const text = typeof cell === "string" ? cell : JSON.stringify(cell);
  // Already cut: what it left out is counted once.
  const cut = !text.includes("…[cut: ");
  // The share is of JSON text: escapes make a cut text longer.
  let keep = share;
  let out = cutText(text, keep);
  while (jsonSize(out) > share + 48 && keep > 1) {
    keep = Math.max(1, Math.floor(keep * share / jsonSize(out)) - 1);
    out = cutText(text, keep);
  }
  return { cell: out, cut };
}

/** What a capped cell ({@linkcode capCell}) adds to its row's size. */
export function cellSize(cell: Cell | CutCell): number {
  return jsonSize(cell instanceof CutCell ? cell.text : cell) + 1;
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
  // And, in the same pass, where the first character past `max` begins:
  // only the head before it is decoded (decodeHead's bound).
  let units = 0;
  let end = bytes.length;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if ((byte & 0xc0) === 0x80) continue;
    if (units >= max && end === bytes.length) end = i;
    units += byte >= 0xf0 ? 2 : 1;
  }
  if (units <= max) return null;
  return new CutCell(
    cutText(DECODER.decode(bytes.subarray(0, end)), max, units),
  );
}

/**
 * The start of UTF-8 `bytes` decoded up to the first character that begins
 * after `max` UTF-16 code units (all of it when it holds fewer): what
 * {@linkcode cutText} keeps of a text cut at `max`, without decoding a
 * longer head (a 20,000-character cell of ASCII decoded 60 KB).
 */
export function decodeHead(bytes: Uint8Array, max: number): string {
  let units = 0;
  let end = bytes.length;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if ((byte & 0xc0) === 0x80) continue;
    if (units >= max) {
      end = i;
      break;
    }
    units += byte >= 0xf0 ? 2 : 1;
  }
  return DECODER.decode(bytes.subarray(0, end));
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
