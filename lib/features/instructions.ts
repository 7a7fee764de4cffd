/**
 * The `instructions` text for the model (docs/wire.md "What the service does"),
 * the same in `server/discover` and legacy `initialize`.
 *
 * @module
 */

import { engineLabels } from "../db/engines.ts";
import { SERVICE_NAME } from "../base/identity.ts";

/** Guidance for the model on how to use this server well. */
export const INSTRUCTIONS = [
  `${SERVICE_NAME} gives you the database connections the user saved in their database client:`,
  `${engineLabels()}. You never see or need a password; you name a connection`,
  "by its id and the app opens it for you.",
  "",
  "- Start with `list_connections` to learn which connections you may use and their ids.",
  "- Find your way in small steps: `search_schema` finds tables and columns by a word of their",
  "  name or comment in one call, whatever the database's size; `list_schemas` and `list_tables`",
  "  (a page at a time, with a pattern) show what exists. Every answer is bounded and says what it",
  "  left out (`is_truncated`, `next_cursor`).",
  "- Call `describe_table` before you write any SQL against a table: it gives the real columns,",
  "  types, comments, keys and indexes, so your query is right the first time.",
  "- Run SQL with `execute_query`, one statement at a time, and ask only for the rows you need",
  "  (long values are cut, and rows past the answer budget left out: `truncation` says how to get",
  "  the rest). On a large table, `explain_query` shows the plan first.",
  "  Writes run in a transaction; DROP, TRUNCATE and ALTER ... DROP go through",
  "  `confirm_destructive_operation`, which the user must approve.",
  "- Every connection carries the user's policy: some are read-only for you, some need the user's",
  "  approval, destructive statements always do. A refusal is that policy speaking, not a transient",
  "  error: do not retry it or look for a way around it; tell the user what was refused and why.",
].join("\n");
