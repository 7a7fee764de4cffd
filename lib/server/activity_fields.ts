/**
 * The longest text the activity log keeps of a field the client chose: its
 * `_meta` clientInfo, the W3C trace headers, the method and target it
 * named. These are kept for every request, also one that failed to
 * authenticate, and a 1 MB client name sent ten times grew state.db by
 * 22 MB; cut, a field still says who called and how.
 *
 * @module
 */

import type { ActivityEntry } from "../app/activity_log.ts";

/** The most characters the log keeps of a client's field. */
export const MAX_LOGGED_CHARS = 256;

/** The fields of an entry whose text the client chose. */
const CLIENT_FIELDS = [
  "clientName",
  "clientVersion",
  "method",
  "target",
  "traceparent",
  "tracestate",
  "baggage",
] as const;

/**
 * `entry` with each client-chosen field cut to {@linkcode MAX_LOGGED_CHARS}:
 * `entry` itself when none is longer (no copy), a copy otherwise.
 */
export function capClientFields(entry: ActivityEntry): ActivityEntry {
  let capped: Record<string, unknown> | null = null;
  for (const field of CLIENT_FIELDS) {
    const value = entry[field];
    if (typeof value === "string" && value.length > MAX_LOGGED_CHARS) {
      capped ??= { ...entry };
      capped[field] = `${value.slice(0, MAX_LOGGED_CHARS - 1)}\u2026`;
    }
  }
  return capped === null ? entry : capped as unknown as ActivityEntry;
}
