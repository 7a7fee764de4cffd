/**
 * What a SQLite read handle refuses, inside the worker thread
 * (`sqlite_worker.ts`): the authorizer SQLite asks while it prepares a
 * statement (a PRAGMA that sets something, a private column, the planner's
 * sampled keys), a full-text table of a private column called as a
 * table-valued function, and any statement SQLite itself does not call
 * read-only. Worker side only: the authorizer is an FFI callback of the
 * thread that imports this module.
 *
 * @module
 */

import { tokenize } from "../sql/lexer.ts";
import {
  privateMatch,
  type PrivatePattern,
  privatePatterns,
} from "../private_columns.ts";
import {
  finalize,
  prepare,
  type Prepared,
  rowValues,
  sqlite3,
  SqliteError,
  step,
} from "./sqlite_ffi.ts";

/**
 * PRAGMAs that take an argument and only read (what the schema queries and
 * a careful reader use); any other PRAGMA with a value sets something on the
 * pooled handle (query_only, cache_size, ...) and is denied on a read handle.
 */
const READING_PRAGMAS = new Set([
  "table_info",
  "table_xinfo",
  "table_list",
  "index_list",
  "index_info",
  "index_xinfo",
  "foreign_key_list",
  "foreign_key_check",
  "integrity_check",
  "quick_check",
]);
const SQLITE_PRAGMA = 19;
const SQLITE_READ = 20;

/** The connection's private columns (init) and the full-text tables holding one. */
const guard: {
  secret: PrivatePattern[];
  /**
   * Virtual tables (full-text: FTS3/4/5) holding a private column,
   * lower-cased. Their hidden column named after the table (what `MATCH`,
   * `snippet()`, `highlight()`, `bm25()` read) and `rank` hand the indexed
   * text on without SQLite asking about the private column: those reads are
   * denied too.
   */
  indexed: Map<string, string>;
} = { secret: [], indexed: new Map() };

const VIRTUAL_COLUMNS = `SELECT m.name, p.name FROM sqlite_schema m
  JOIN pragma_table_xinfo(m.name) p
 WHERE m.type = 'table' AND m.sql LIKE 'create virtual table%'`;

const text = (pointer: Deno.PointerValue) =>
  pointer === null ? "" : Deno.UnsafePointerView.getCString(pointer);

/** Columns read handles may not read (db/private_columns.ts entries). */
export function denyColumns(columns: readonly string[] | undefined): void {
  guard.secret = privatePatterns(columns);
}

/** A read of `column` of `table` the read handles deny. */
function deniedRead(
  first: Deno.PointerValue,
  second: Deno.PointerValue,
  database: Deno.PointerValue,
): boolean {
  if (guard.secret.length === 0) return false;
  // A view's or a trigger's read of a column is asked about too, with
  // the column's own table: no view can pass a private column on.
  // sqlite_stat4 (and 3) hold sampled index keys, values included (the
  // planner's own reads of them bypass the authorizer); sqlite_dbpage,
  // where built in, is the file's raw pages.
  const table = text(first);
  const column = text(second).toLowerCase();
  const lower = table.toLowerCase();
  return /^sqlite_(stat[34]|dbpage)$/i.test(table) ||
    (guard.indexed.has(lower) && (column === lower || column === "rank")) ||
    privateMatch(
        guard.secret,
        text(database),
        table,
        text(second),
        "sqlite",
      ) !==
      null;
}

// Called by SQLite on this thread, inside sqlite3_prepare_v2 (a synchronous
// FFI call of this worker): no other thread, nothing awaited.
/** The read handles' authorizer (sqlite3_set_authorizer). */
export const authorizer = new Deno.UnsafeCallback(
  {
    parameters: ["pointer", "i32", "pointer", "pointer", "pointer", "pointer"],
    result: "i32",
  } as const,
  (_user, action, first, second, database) => {
    if (action === SQLITE_READ) {
      return deniedRead(first, second, database) ? 1 : 0;
    }
    if (action !== SQLITE_PRAGMA || second === null) return 0;
    const name = first === null
      ? ""
      : Deno.UnsafePointerView.getCString(first).toLowerCase();
    return READING_PRAGMAS.has(name) ? 0 : 1;
  },
);

/**
 * Read afresh, before each read, which full-text tables hold a private
 * column (nothing to read where no column is private).
 */
export function refreshIndexed(db: Deno.PointerValue): void {
  if (guard.secret.length > 0) guard.indexed = indexedPrivate(db);
}

/** The virtual tables holding a private column (to one of them). */
function indexedPrivate(db: Deno.PointerValue): Map<string, string> {
  const found = new Map<string, string>();
  const prepared = prepare(db, VIRTUAL_COLUMNS, []);
  try {
    while (step(db, prepared.handle)) {
      const [table, column] = rowValues(prepared.handle, 2).map(String);
      if (
        privateMatch(guard.secret, "main", table!, column!, "sqlite") !== null
      ) {
        found.set(table!.toLowerCase(), `${table}.${column}`);
      }
    }
  } finally {
    finalize(prepared.handle);
  }
  return found;
}

/**
 * A full-text table holding a private column, called as a table-valued
 * function (`notes('ada*')`): SQLite turns the argument into a MATCH on the
 * hidden column without asking the authorizer, so it is refused here, in
 * the authorizer's words (the read path names the column from them).
 */
export function refuseTableValued(sql: string): void {
  const indexed = guard.indexed;
  if (indexed.size === 0) return;
  const tokens = tokenize(sql, "sqlite");
  tokens.forEach((token, i) => {
    const name = token.kind === "word"
      ? token.text.toLowerCase()
      : token.kind === "quoted"
      ? token.text.slice(1, -1).toLowerCase()
      : null;
    if (
      name !== null && indexed.has(name) && tokens[i + 1]?.text === "("
    ) {
      throw new SqliteError(
        `access to ${indexed.get(name)} is prohibited`,
        "SQLITE_AUTH",
      );
    }
  });
}

/** A read handle refuses what SQLite itself calls a write (a PRAGMA that sets, a temp table). */
export function readOnly(prepared: Prepared): void {
  const lib = sqlite3();
  // EXPLAIN of a write plans it and runs nothing; SQLite calls it read-only
  // only when the statement explained is.
  if (
    lib.sqlite3_stmt_readonly(prepared.handle) === 0 &&
    lib.sqlite3_stmt_isexplain(prepared.handle) === 0
  ) {
    finalize(prepared.handle);
    throw new SqliteError(
      "attempt to write a readonly database (a read runs only statements SQLite calls read-only)",
      "SQLITE_READONLY",
    );
  }
}
