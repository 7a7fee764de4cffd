/**
 * The history resource within the answer budget: a kept statement may be
 * 100,000 characters, and 50 of them answered 5 MB. Each statement is cut
 * to an even share of the budget (with a `…[cut: N more characters]`
 * marker), and when even that does not fit, the oldest entries are left out;
 * the answer says how many of each (`cut_statements`, `entries_left_out`).
 *
 * @module
 */

import type { JsonObject } from "../../protocol/jsonrpc.ts";

/** What an entry keeps of its statement at least, however many there are. */
const MIN_SHARE = 200;
/** What the answer's fields beside the statements may take. */
const ENVELOPE_CHARS = 1_000;

/** One history entry as answered: its statement in `query`. */
export type HistoryEntry = JsonObject & { query: string };

/** Cut statements to a share of `budget`, then leave out the oldest past it. */
export function fitHistory(
  entries: readonly HistoryEntry[],
  budget: number,
): JsonObject {
  const room = Math.max(ENVELOPE_CHARS, budget - ENVELOPE_CHARS);
  const share = Math.max(
    MIN_SHARE,
    Math.floor(room / Math.max(1, entries.length)) - 300,
  );
  let cut = 0;
  const shown: HistoryEntry[] = [];
  let used = 2;
  for (const entry of entries) {
    const query = entry.query.length <= share
      ? entry.query
      : `${entry.query.slice(0, share)}…[cut: ${
        entry.query.length - share
      } more characters]`;
    const fitted = query === entry.query ? entry : { ...entry, query };
    used += JSON.stringify(fitted).length + 1;
    if (used > room) break;
    if (query !== entry.query) cut++;
    shown.push(fitted);
  }
  const leftOut = entries.length - shown.length;
  return {
    history: shown,
    ...(cut === 0 && leftOut === 0 ? {} : {
      cut_statements: cut,
      entries_left_out: leftOut,
      note:
        `to keep the answer within its budget of ${budget} characters, ${cut} statements were cut${
          leftOut > 0 ? ` and the ${leftOut} oldest entries left out` : ""
        }; ask for fewer entries (?limit=) to see more of each`,
    }),
  };
}
