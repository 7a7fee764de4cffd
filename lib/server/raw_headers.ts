/**
 * A request's headers read from node:http's `rawHeaders`, the way a web
 * `Headers` reads them: names case-insensitive, a repeated header joined
 * with ", " (node's own `headers` object keeps only the first of some, such
 * as Host and Authorization; the Hono app sees them joined, and so does the
 * fast path).
 *
 * A request has a dozen headers and the checks ask for about as many: each
 * is looked up along the list itself (issue 38: no Map, no lowercased copy
 * of a name that is lowercase already, as clients mostly send them).
 *
 * @module
 */

import type { HeaderSource } from "../protocol/headers.ts";

/** `name` lowercased; the same string when it has no uppercase letter. */
function lower(name: string): string {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if ((c >= 65 && c <= 90) || c > 127) return name.toLowerCase();
  }
  return name;
}

/** Request headers for the checks of `POST /mcp`. */
export class RawHeaders implements HeaderSource {
  /** Names (lowercased) and values, alternating, as node gives them. */
  readonly #raw: readonly string[];

  constructor(raw: readonly string[]) {
    let names: string[] | null = null;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i]!;
      const lowered = lower(name);
      if (lowered !== name && names === null) names = raw.slice();
      if (names !== null) names[i] = lowered;
    }
    this.#raw = names ?? raw;
  }

  /** The value of `name` (lowercase), or undefined. */
  value(name: string): string | undefined {
    const raw = this.#raw;
    let found: string | undefined;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      if (raw[i] === name) {
        found = found === undefined ? raw[i + 1]! : `${found}, ${raw[i + 1]}`;
      }
    }
    return found;
  }

  /** The header's value, or null (`Headers.get`). */
  get(name: string): string | null {
    return this.value(lower(name)) ?? null;
  }

  /** Whether a header's name starts with `prefix` (lowercase). */
  hasPrefix(prefix: string): boolean {
    const raw = this.#raw;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      if (raw[i]!.startsWith(prefix)) return true;
    }
    return false;
  }

  /** Each header, its name lowercased, in name order (as `Headers`). */
  forEach(callback: (value: string, name: string) => void): void {
    const raw = this.#raw;
    const names = new Set<string>();
    for (let i = 0; i + 1 < raw.length; i += 2) names.add(raw[i]!);
    for (const name of [...names].sort()) callback(this.value(name)!, name);
  }
}
