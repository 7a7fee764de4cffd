/**
 * A request's headers read from node:http's `rawHeaders`, the way a web
 * `Headers` reads them: names case-insensitive, a repeated header joined
 * with ", " (node's own `headers` object keeps only the first of some, such
 * as Host and Authorization; the Hono app sees them joined, and so does the
 * fast path).
 *
 * @module
 */

import type { HeaderSource } from "../protocol/headers.ts";

/** Request headers for the checks of `POST /mcp`. */
export class RawHeaders implements HeaderSource {
  readonly #values = new Map<string, string>();

  constructor(raw: readonly string[]) {
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i]!.toLowerCase();
      const value = raw[i + 1]!;
      const before = this.#values.get(name);
      this.#values.set(
        name,
        before === undefined ? value : `${before}, ${value}`,
      );
    }
  }

  /** The header's value, or undefined. */
  value(name: string): string | undefined {
    return this.#values.get(name);
  }

  /** The header's value, or null (`Headers.get`). */
  get(name: string): string | null {
    return this.#values.get(name.toLowerCase()) ?? null;
  }

  /** Each header, its name lowercased, in name order (as `Headers`). */
  forEach(callback: (value: string, name: string) => void): void {
    for (const name of [...this.#values.keys()].sort()) {
      callback(this.#values.get(name)!, name);
    }
  }
}
