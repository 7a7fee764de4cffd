/**
 * A tracked write on SQLite or MariaDB (QueryOptions.track; docs/security.md
 * "What the hold compares"): the statement made to return a few of its
 * changed rows and, for an UPDATE or DELETE of a table with a primary key,
 * every changed row's key (up to KEY_LIMIT), whose sorted digest binds the
 * approval to those rows. What each engine counts per table is its own
 * (`counted`); PostgreSQL's is in pg_changes.ts.
 *
 * @module
 */

import { createHash } from "node:crypto";
import type { DmlShape } from "./sql/dml_shape.ts";
import {
  type Changes,
  KEY_LIMIT,
  type QueryResult,
  type TableChange,
} from "./types.ts";

/** What the engine gives a tracked write. */
export interface TrackEngine {
  shape: DmlShape;
  /** The keywords that take RETURNING (and answer their changed rows). */
  returns: readonly string[];
  /** The UPDATE/DELETE keywords whose RETURNING can bind keys. */
  keyed: readonly string[];
  /** Why keys are not bound for a statement of this keyword (INSERT: none). */
  unkeyed(keyword: string, upsert: boolean): string | null;
  /** The target's primary key columns, in key order (none: no key). */
  keyColumns(
    target: { schema: string | null; name: string },
  ): Promise<string[]>;
  /** A value naming the key columns' values as one text (JSON_ARRAY). */
  keyValue(columns: string[]): string;
  /** Run `text`, keeping up to `maxRows` rows and `maxBytes` of them. */
  run(text: string, maxRows: number, maxBytes: number): Promise<QueryResult>;
  /** The tables the statement changed, once it ran. */
  counted(result: QueryResult): Promise<TableChange[]>;
}

/** The bytes a key-reading run may keep (10,001 keys and a few rows). */
const KEY_BYTES = 32 * 1024 * 1024;

/** The table's name as the approval says it. */
export function tableName(
  target: { schema: string | null; name: string } | null,
): string {
  if (target === null) return "its table";
  return target.schema === null
    ? target.name
    : `${target.schema}.${target.name}`;
}

/** Run the statement tracked: its changed rows, keys and per-table counts. */
export async function trackedWrite(
  text: string,
  track: { sampleRows: number },
  fallbackRows: number,
  engine: TrackEngine,
): Promise<QueryResult> {
  const { shape } = engine;
  const keyword = shape.keyword ?? "";
  const returns = !shape.returning && !shape.upsert &&
    engine.returns.includes(keyword);
  const keyColumns = returns && engine.keyed.includes(keyword) &&
      shape.target !== null
    ? await engine.keyColumns(shape.target)
    : [];
  const sample = returns && track.sampleRows > 0;
  const parts = [
    ...(sample ? ["*"] : []),
    ...(keyColumns.length > 0
      ? [`${engine.keyValue(keyColumns)} AS dbport_key`]
      : []),
  ];
  let result: QueryResult | null = null;
  if (parts.length > 0) {
    const keys = keyColumns.length > 0;
    try {
      result = await engine.run(
        // On its own line: a trailing line comment cannot swallow it.
        `${text}\nRETURNING ${parts.join(", ")}`,
        keys ? KEY_LIMIT + 1 : track.sampleRows,
        keys ? KEY_BYTES : 64 * 1024,
      );
    } catch {
      // Some forms take no RETURNING (SQLite's UPDATE … LIMIT, MySQL): the
      // statement as written, counted alone. A failed statement changed
      // nothing; the one as written fails the same way if it must.
      result = null;
    }
  }
  const returned = result !== null;
  result ??= await engine.run(text, fallbackRows, 64 * 1024);
  const tables = await engine.counted(result);
  const changes: Changes = {
    tables,
    keys: null,
    unbound: null,
    choice: shape.choice,
  };
  if (!returned && keyColumns.length > 0) {
    changes.unbound =
      "the statement returns no keys here, so only its counts are bound";
  } else if (
    !engine.keyed.includes(keyword) || shape.returning || shape.upsert
  ) {
    changes.unbound = shape.returning
      ? OWN_RETURNING
      : engine.unkeyed(keyword, shape.upsert);
  } else if (
    keyColumns.some((key) =>
      shape.varyingSet.some((set) => set.toLowerCase() === key.toLowerCase())
    )
  ) {
    changes.unbound = VARYING_KEY;
  } else if (keyColumns.length === 0) {
    changes.unbound =
      "the table has no primary key, so only its counts are bound";
  } else if (result.truncated || result.rows.length > KEY_LIMIT) {
    changes.unbound = `past ${
      KEY_LIMIT.toLocaleString("en-US")
    } rows only the counts are bound`;
  } else {
    changes.keys = digest(result.rows.map((row) => String(row.at(-1))));
  }
  if (!returned) return { ...result, changes };
  const cut = keyColumns.length > 0 ? -1 : undefined;
  return {
    ...result,
    columns: sample ? result.columns.slice(0, cut) : [],
    rows: sample
      ? result.rows.slice(0, track.sampleRows).map((row) => row.slice(0, cut))
      : [],
    truncated: false,
    truncation: { rows: false, bytes: false, cells: 0 },
    changes,
  };
}

/** The digest of a set of keys, whatever order they came in. */
function digest(keys: string[]): string {
  return createHash("sha256").update(keys.sort().join("\n")).digest("hex");
}

/**
 * Why an upsert's or REPLACE's rows are not bound. A plain INSERT's are new
 * rows, whose keys come from defaults and sequences that differ each run:
 * its counts bind it, and nothing needs saying.
 */
export const UPSERT_UNKEYED =
  "the existing rows an upsert or REPLACE changes are bound by their count only";

/** Why a statement that returns rows of its own is bound by counts only. */
export const OWN_RETURNING =
  "a statement with its own RETURNING is bound by its counts only";

/** Why an UPDATE that sets its key from chance or the clock binds no keys. */
export const VARYING_KEY =
  "it sets its primary key to a value that differs from run to run, so only its counts are bound";
