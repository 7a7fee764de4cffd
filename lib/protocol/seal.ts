/**
 * Sealed text: a JSON value and its HMAC-SHA-256 under a key that lives only
 * as long as the process, as `base64url(json).base64url(mac)`. Cursors
 * (docs/wire.md "Pagination") and approval states (docs/wire.md "Authentication"
 * 10) are both sealed: the client holds them, so they are attacker-controlled
 * and must be refused when altered or not ours.
 *
 * @module
 */

import { fromBase64Url, toBase64Url } from "./base64.ts";

/** Why sealed text was refused. */
export type SealProblem = "malformed" | "forged";

/** The outcome of {@linkcode Sealer.open}. */
export type Opened = { ok: true; value: unknown } | {
  ok: false;
  problem: SealProblem;
};

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Seals and opens JSON values with one per-process key. */
export class Sealer {
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

  /** Seal a JSON value. */
  async seal(value: unknown): Promise<string> {
    const body = encoder.encode(JSON.stringify(value));
    const mac = await crypto.subtle.sign("HMAC", await this.#key, body);
    return `${toBase64Url(body)}.${toBase64Url(new Uint8Array(mac))}`;
  }

  /** Open text sealed by {@linkcode Sealer.seal} with this key. */
  async open(text: string): Promise<Opened> {
    const dot = text.indexOf(".");
    if (dot <= 0 || dot !== text.lastIndexOf(".")) {
      return { ok: false, problem: "malformed" };
    }
    const body = fromBase64Url(text.slice(0, dot));
    const mac = fromBase64Url(text.slice(dot + 1));
    // Only the exact text we issued is accepted: base64url's spare bits would
    // otherwise let several strings stand for one sealed value.
    if (
      body === null || mac === null ||
      `${toBase64Url(body)}.${toBase64Url(mac)}` !== text
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
    try {
      return { ok: true, value: JSON.parse(decoder.decode(body)) };
    } catch {
      return { ok: false, problem: "malformed" };
    }
  }
}
