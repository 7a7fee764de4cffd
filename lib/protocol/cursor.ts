/**
 * Opaque pagination cursors (docs/wire.md "Pagination").
 *
 * A cursor names the last item key of the page it follows and the method that
 * issued it, sealed (`seal.ts`) under a key that lives only as long as the
 * process. A cursor given to another method, altered, or not ours at all is
 * refused; the caller answers `-32602`.
 *
 * @module
 */

import { Sealer } from "./seal.ts";

/** Items per page of every list method. */
export const PAGE_SIZE = 50;

/** Why a cursor was refused. */
export type CursorProblem = "malformed" | "forged" | "wrong_method";

/** The outcome of {@linkcode CursorCodec.open}. */
export type CursorResult = { ok: true; after: string } | {
  ok: false;
  problem: CursorProblem;
};

/** Seals and opens cursors with one per-process key. */
export class CursorCodec {
  #sealer: Sealer;

  constructor(secret?: Uint8Array<ArrayBuffer>) {
    this.#sealer = new Sealer(secret);
  }

  /** A cursor that continues `method` after the item whose key is `after`. */
  seal(method: string, after: string): Promise<string> {
    return this.#sealer.seal([method, after]);
  }

  /** Open a cursor presented to `method`. */
  async open(method: string, cursor: string): Promise<CursorResult> {
    const opened = await this.#sealer.open(cursor);
    if (!opened.ok) return opened;
    const parsed = opened.value;
    if (
      !Array.isArray(parsed) || parsed.length !== 2 ||
      typeof parsed[0] !== "string" || typeof parsed[1] !== "string"
    ) {
      return { ok: false, problem: "malformed" };
    }
    if (parsed[0] !== method) return { ok: false, problem: "wrong_method" };
    return { ok: true, after: parsed[1] };
  }
}

/** One page of items sorted by key, and the key to continue after (if more remain). */
export function pageAfter<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
  after: string | null,
  size = PAGE_SIZE,
): { page: T[]; lastKey: string | null } {
  let start = 0;
  if (after !== null) {
    // Items are sorted by key: the page starts at the first key past the cursor,
    // so an item added or removed meanwhile neither repeats nor skips the rest.
    let low = 0;
    let high = items.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (keyOf(items[mid]!) <= after) low = mid + 1;
      else high = mid;
    }
    start = low;
  }
  const page = items.slice(start, start + size);
  const more = start + size < items.length;
  return { page, lastKey: more ? keyOf(page[page.length - 1]!) : null };
}
