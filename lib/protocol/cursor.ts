/**
 * Opaque pagination cursors (contract: "Pagination").
 *
 * A cursor names the last item key of the page it follows and the method that
 * issued it, sealed with HMAC-SHA-256 under a key that lives only as long as the
 * process. A cursor given to another method, altered, or not ours at all is
 * refused; the caller answers `-32602`.
 *
 * @module
 */

import { fromBase64Url, toBase64Url } from "./base64.ts";

/** Items per page of every list method. */
export const PAGE_SIZE = 50;

/** Why a cursor was refused. */
export type CursorProblem = "malformed" | "forged" | "wrong_method";

/** The outcome of {@linkcode CursorCodec.open}. */
export type CursorResult = { ok: true; after: string } | {
  ok: false;
  problem: CursorProblem;
};

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Seals and opens cursors with one per-process key. */
export class CursorCodec {
  #key: Promise<CryptoKey>;

  constructor(secret?: Uint8Array<ArrayBuffer>) {
    const raw = secret ?? crypto.getRandomValues(new Uint8Array(32));
    this.#key = crypto.subtle.importKey(
      "raw",
      raw,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"],
    );
  }

  /** A cursor that continues `method` after the item whose key is `after`. */
  async seal(method: string, after: string): Promise<string> {
    const body = encoder.encode(JSON.stringify([method, after]));
    const mac = await crypto.subtle.sign("HMAC", await this.#key, body);
    return `${toBase64Url(body)}.${toBase64Url(new Uint8Array(mac))}`;
  }

  /** Open a cursor presented to `method`. */
  async open(method: string, cursor: string): Promise<CursorResult> {
    const dot = cursor.indexOf(".");
    if (dot <= 0 || dot !== cursor.lastIndexOf(".")) {
      return { ok: false, problem: "malformed" };
    }
    const body = fromBase64Url(cursor.slice(0, dot));
    const mac = fromBase64Url(cursor.slice(dot + 1));
    // Only the exact text we issued is accepted: base64url's spare bits would
    // otherwise let several strings stand for one cursor.
    if (
      body === null || mac === null ||
      `${toBase64Url(body)}.${toBase64Url(mac)}` !== cursor
    ) {
      return { ok: false, problem: "malformed" };
    }
    const genuine = await crypto.subtle.verify(
      "HMAC",
      await this.#key,
      mac,
      body,
    );
    if (!genuine) return { ok: false, problem: "forged" };
    let parsed: unknown;
    try {
      parsed = JSON.parse(decoder.decode(body));
    } catch {
      return { ok: false, problem: "malformed" };
    }
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
