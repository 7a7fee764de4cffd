/**
 * The result set `execute_query`, `confirm_destructive_operation` and the
 * saved queries answer: its schema (published in full by
 * `dbport://docs/results`) and its prose, from which its type is read.
 *
 * @module
 */

import * as s from "../../base/schema.ts";

/** How a cell is encoded, the same on every engine (lib/db/values.ts). */
export const CELL_ENCODING =
  "One array per row, one cell per column. SQL NULL is null. Integers that fit a double exactly are numbers; 64-bit integers past that and decimals/numerics are strings, exactly as stored. Floats are numbers; NaN, Infinity, -Infinity and -0 are strings. Booleans are true/false. Binary (bytea, blob, varbinary) is base64. Dates are YYYY-MM-DD; timestamps are ISO 8601 (with a zone: Z or an offset) at the engine's full precision; infinity and BC dates as the engine writes them. JSON objects and arrays are JSON; a JSON scalar document (null, a string, a number, true/false) is its JSON text, so a JSON null is \"null\" and never null. PostgreSQL arrays are JSON arrays (NULL elements null; an array with explicit bounds as its text). Everything else (intervals, ranges, enums, money, uuid, network addresses, bit strings, geometric types) is the engine's own text. Text longer than the cell cap ends with …[cut: N more characters].";

/** What `truncation` says (the `dbport://docs/results` resource). */
export const TRUNCATION_REASONS =
  "Present when anything was left out; is_truncated is then true. reasons: max_rows (more rows than asked for), bytes (rows past the answer budget, maxAnswerChars: 40,000 characters of the result's text by default, ≈ 10k tokens), cells (long values cut at the cell cap, each ending with …[cut: N more characters]; cut_cells counts them). rows_returned is the rows in the answer; total_rows the whole result's count when the engine counted it within 2 s, else has_more says whether rows remain. message says how to get the rest: a narrower query (WHERE, fewer columns, LIMIT … OFFSET), a larger max_rows (still within the answer budget), export_query (every row to a file), or substr() for long values.";

/** What `truncation` holds (its reasons, counts and the way to the rest). */
export const TRUNCATION_SCHEMA = s.object(
  {
    reasons: s.array(s.choice(["max_rows", "bytes", "cells"])),
    cut_cells: s.integer({ minimum: 0 }),
    rows_returned: s.integer({ minimum: 0 }),
    total_rows: s.integer({ minimum: 0 }),
    has_more: s.boolean(),
    message: s.string(),
  },
  ["reasons", "cut_cells", "rows_returned", "has_more", "message"],
  {
    description: TRUNCATION_REASONS,
  },
);

/** The result set both tools answer with. */
export const RESULT_SET_SCHEMA = s.object({
  columns: s.array(s.string()),
  rows: s.array({ type: "array" }, { description: CELL_ENCODING }),
  row_count: s.integer({ minimum: 0 }),
  rows_affected: s.integer({ minimum: 0 }),
  execution_time_ms: s.number({ minimum: 0 }),
  is_truncated: s.boolean(),
  truncation: TRUNCATION_SCHEMA,
}, [
  "columns",
  "rows",
  "row_count",
  "rows_affected",
  "execution_time_ms",
  "is_truncated",
]);

/** A result set as the tools answer it. */
export type ResultSet = s.Infer<typeof RESULT_SET_SCHEMA>;
