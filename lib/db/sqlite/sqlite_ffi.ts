/**
 * The C API of SQLite through Deno's FFI, as much of it as the SQLite worker
 * (`sqlite_worker.ts`) uses. Neither libSQL's binding nor `node:sqlite`
 * exposes all of what keeps a statement off the event loop and bounded:
 * `node:sqlite` has `limits` but no interrupt or progress handler (a worker
 * terminated mid-statement keeps its thread stepping to the end); libSQL has
 * an interrupt that waits on the statement's own mutex and no limits. Here a
 * progress handler stops a statement the moment its flag is set,
 * `sqlite3_limit` caps a value's length, and the busy timeout is set per
 * statement. Loaded only inside the worker: every call here blocks its thread.
 *
 * @module
 */

const SYMBOLS = {
  sqlite3_open_v2: {
    parameters: ["buffer", "buffer", "i32", "pointer"],
    result: "i32",
  },
  sqlite3_close_v2: { parameters: ["pointer"], result: "i32" },
  sqlite3_extended_errcode: { parameters: ["pointer"], result: "i32" },
  sqlite3_errmsg: { parameters: ["pointer"], result: "pointer" },
  sqlite3_errstr: { parameters: ["i32"], result: "pointer" },
  sqlite3_busy_timeout: { parameters: ["pointer", "i32"], result: "i32" },
  sqlite3_limit: { parameters: ["pointer", "i32", "i32"], result: "i32" },
  sqlite3_progress_handler: {
    parameters: ["pointer", "i32", "function", "pointer"],
    result: "void",
  },
  sqlite3_interrupt: { parameters: ["pointer"], result: "void" },
  sqlite3_total_changes: { parameters: ["pointer"], result: "i32" },
  sqlite3_changes: { parameters: ["pointer"], result: "i32" },
  sqlite3_get_autocommit: { parameters: ["pointer"], result: "i32" },
  sqlite3_prepare_v2: {
    parameters: ["pointer", "buffer", "i32", "buffer", "pointer"],
    result: "i32",
  },
  sqlite3_finalize: { parameters: ["pointer"], result: "i32" },
  sqlite3_step: { parameters: ["pointer"], result: "i32" },
  sqlite3_column_count: { parameters: ["pointer"], result: "i32" },
  sqlite3_column_name: { parameters: ["pointer", "i32"], result: "pointer" },
  sqlite3_column_decltype: {
    parameters: ["pointer", "i32"],
    result: "pointer",
  },
  sqlite3_column_type: { parameters: ["pointer", "i32"], result: "i32" },
  sqlite3_column_int64: { parameters: ["pointer", "i32"], result: "i64" },
  sqlite3_column_double: { parameters: ["pointer", "i32"], result: "f64" },
  sqlite3_column_text: { parameters: ["pointer", "i32"], result: "pointer" },
  sqlite3_column_blob: { parameters: ["pointer", "i32"], result: "pointer" },
  sqlite3_column_bytes: { parameters: ["pointer", "i32"], result: "i32" },
  sqlite3_bind_text: {
    parameters: ["pointer", "i32", "buffer", "i32", "pointer"],
    result: "i32",
  },
  sqlite3_bind_int64: {
    parameters: ["pointer", "i32", "i64"],
    result: "i32",
  },
  sqlite3_bind_double: {
    parameters: ["pointer", "i32", "f64"],
    result: "i32",
  },
  sqlite3_bind_null: { parameters: ["pointer", "i32"], result: "i32" },
  sqlite3_next_stmt: { parameters: ["pointer", "pointer"], result: "pointer" },
  sqlite3_stmt_isexplain: { parameters: ["pointer"], result: "i32" },
  sqlite3_stmt_readonly: { parameters: ["pointer"], result: "i32" },
  sqlite3_set_authorizer: {
    parameters: ["pointer", "function", "pointer"],
    result: "i32",
  },
  sqlite3_db_config: {
    parameters: ["pointer", "i32", "i32", "pointer"],
    result: "i32",
  },
} as const;

type Lib = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

/** Where the system's SQLite library is looked for, per platform. */
function candidates(): string[] {
  const own = Deno.env.get("DBPORT_SQLITE_LIBRARY");
  const list = own ? [own] : [];
  if (Deno.build.os === "darwin") {
    list.push("/usr/lib/libsqlite3.dylib", "libsqlite3.dylib");
  } else if (Deno.build.os === "windows") {
    list.push("winsqlite3.dll", "sqlite3.dll");
  } else {
    list.push("libsqlite3.so.0", "libsqlite3.so");
  }
  return list;
}

let loaded: Lib | null = null;

/** The SQLite library, opened once per thread. */
export function sqlite3(): Lib {
  if (loaded !== null) return loaded;
  const failures: string[] = [];
  for (const name of candidates()) {
    try {
      loaded = Deno.dlopen(name, SYMBOLS).symbols;
      return loaded;
    } catch (error) {
      failures.push(`${name}: ${(error as Error).message}`);
    }
  }
  throw new Error(
    `cannot load the SQLite library (set DBPORT_SQLITE_LIBRARY to its path): ${
      failures.join("; ")
    }`,
  );
}

export const SQLITE_OK = 0;
export const SQLITE_ROW = 100;
export const SQLITE_DONE = 101;
export const OPEN_READONLY = 0x1;
export const OPEN_READWRITE = 0x2;
/** Each connection has its own mutex; none is shared with another thread. */
export const OPEN_NOMUTEX = 0x8000;
export const OPEN_EXRESCODE = 0x02000000;
export const LIMIT_LENGTH = 0;
export const LIMIT_ATTACHED = 7;
export const DBCONFIG_ENABLE_LOAD_EXTENSION = 1005;
export const DBCONFIG_DEFENSIVE = 1010;
export const DBCONFIG_TRUSTED_SCHEMA = 1017;

/** SQLite's primary result codes by number, for the `[SQLITE_…]` suffix. */
const CODE_NAMES: Record<number, string> = {
  1: "SQLITE_ERROR",
  2: "SQLITE_INTERNAL",
  3: "SQLITE_PERM",
  4: "SQLITE_ABORT",
  5: "SQLITE_BUSY",
  6: "SQLITE_LOCKED",
  7: "SQLITE_NOMEM",
  8: "SQLITE_READONLY",
  9: "SQLITE_INTERRUPT",
  10: "SQLITE_IOERR",
  11: "SQLITE_CORRUPT",
  12: "SQLITE_NOTFOUND",
  13: "SQLITE_FULL",
  14: "SQLITE_CANTOPEN",
  15: "SQLITE_PROTOCOL",
  17: "SQLITE_SCHEMA",
  18: "SQLITE_TOOBIG",
  19: "SQLITE_CONSTRAINT",
  20: "SQLITE_MISMATCH",
  21: "SQLITE_MISUSE",
  23: "SQLITE_AUTH",
  25: "SQLITE_RANGE",
  26: "SQLITE_NOTADB",
};

/** A SQLite failure: its message and code name (`SQLITE_BUSY`, ...). */
export class SqliteError extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
  }
}

function cString(pointer: Deno.PointerValue): string {
  return pointer === null ? "" : Deno.UnsafePointerView.getCString(pointer);
}

/** The connection's last error as a SqliteError. */
export function lastError(db: Deno.PointerValue, rc: number): SqliteError {
  const lib = sqlite3();
  const extended = db === null ? rc : lib.sqlite3_extended_errcode(db);
  const message = db === null
    ? cString(lib.sqlite3_errstr(rc))
    : cString(lib.sqlite3_errmsg(db));
  return new SqliteError(
    message,
    CODE_NAMES[extended & 0xff] ?? "SQLITE_ERROR",
  );
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** `text` as a NUL-terminated UTF-8 buffer. */
export function cText(text: string): Uint8Array<ArrayBuffer> {
  const bytes = encoder.encode(text);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  return out;
}

/** Open a connection; throws on failure (the handle is closed then). */
export function openConnection(path: string, flags: number): Deno.PointerValue {
  const lib = sqlite3();
  const out = new BigUint64Array(1);
  const rc = lib.sqlite3_open_v2(
    cText(path),
    new Uint8Array(out.buffer),
    flags | OPEN_NOMUTEX | OPEN_EXRESCODE,
    null,
  );
  const db = Deno.UnsafePointer.create(out[0]!);
  if (rc !== SQLITE_OK) {
    const error = lastError(db, rc);
    if (db !== null) lib.sqlite3_close_v2(db);
    throw error;
  }
  return db;
}

/** A prepared statement: its handle and what it tells of its columns. */
export interface Prepared {
  handle: Deno.PointerValue;
  columns: { name: string; type: string | null }[];
}

/**
 * Prepare the first statement of `text` (an empty one gives a null handle).
 * Parameters are bound in order: strings, numbers, bigints, booleans, null.
 */
export function prepare(
  db: Deno.PointerValue,
  text: string,
  params: readonly unknown[] = [],
): Prepared {
  const lib = sqlite3();
  const sql = cText(text);
  const out = new BigUint64Array(2);
  const rc = lib.sqlite3_prepare_v2(
    db,
    sql,
    sql.length,
    new Uint8Array(out.buffer, 0, 8),
    Deno.UnsafePointer.of(new Uint8Array(out.buffer, 8, 8)),
  );
  if (rc !== SQLITE_OK) throw lastError(db, rc);
  const handle = Deno.UnsafePointer.create(out[0]!);
  try {
    // What follows the first statement may be only blanks and comments.
    const start = Deno.UnsafePointer.value(Deno.UnsafePointer.of(sql));
    const rest = Number(BigInt(out[1]!) - BigInt(start));
    if (rest >= 0 && rest < sql.length - 1 && text.includes(";")) {
      const tail = prepare(db, decoder.decode(sql.subarray(rest, -1)));
      if (tail.handle !== null) {
        finalize(tail.handle);
        throw new SqliteError(
          "only one statement can run at a time",
          "SQLITE_ERROR",
        );
      }
    }
    params.forEach((value, i) => bind(db, handle, i + 1, value));
  } catch (error) {
    lib.sqlite3_finalize(handle);
    throw error;
  }
  const count = handle === null ? 0 : lib.sqlite3_column_count(handle);
  const columns = [];
  for (let i = 0; i < count; i++) {
    const type = lib.sqlite3_column_decltype(handle, i);
    columns.push({
      name: cString(lib.sqlite3_column_name(handle, i)),
      type: type === null ? null : cString(type),
    });
  }
  return { handle, columns };
}

/** SQLITE_TRANSIENT: SQLite copies the bound bytes. */
const TRANSIENT = Deno.UnsafePointer.create(0xffffffffffffffffn);

function bind(
  db: Deno.PointerValue,
  handle: Deno.PointerValue,
  index: number,
  value: unknown,
): void {
  const lib = sqlite3();
  let rc: number;
  if (value === null || value === undefined) {
    rc = lib.sqlite3_bind_null(handle, index);
  } else if (typeof value === "bigint") {
    rc = lib.sqlite3_bind_int64(handle, index, value);
  } else if (typeof value === "number") {
    rc = Number.isSafeInteger(value)
      ? lib.sqlite3_bind_int64(handle, index, BigInt(value))
      : lib.sqlite3_bind_double(handle, index, value);
  } else if (typeof value === "boolean") {
    rc = lib.sqlite3_bind_int64(handle, index, value ? 1n : 0n);
  } else {
    const bytes = encoder.encode(String(value));
    rc = lib.sqlite3_bind_text(handle, index, bytes, bytes.length, TRANSIENT);
  }
  if (rc !== SQLITE_OK) throw lastError(db, rc);
}

/**
 * Step once: true for a row, false when done. Integers come as bigint,
 * reals as number, text as string, blobs as a copied Uint8Array.
 */
export function step(
  db: Deno.PointerValue,
  handle: Deno.PointerValue,
): boolean {
  const rc = sqlite3().sqlite3_step(handle);
  if (rc === SQLITE_ROW) return true;
  if (rc === SQLITE_DONE) return false;
  throw lastError(db, rc);
}

/** The current row's values. */
export function rowValues(handle: Deno.PointerValue, count: number): unknown[] {
  const lib = sqlite3();
  const row = new Array<unknown>(count);
  for (let i = 0; i < count; i++) {
    switch (lib.sqlite3_column_type(handle, i)) {
      case 1:
        row[i] = BigInt(lib.sqlite3_column_int64(handle, i));
        break;
      case 2:
        row[i] = lib.sqlite3_column_double(handle, i);
        break;
      case 3: {
        const pointer = lib.sqlite3_column_text(handle, i);
        const length = lib.sqlite3_column_bytes(handle, i);
        row[i] = pointer === null || length === 0 ? "" : decoder.decode(
          new Uint8Array(
            Deno.UnsafePointerView.getArrayBuffer(pointer, length),
          ),
        );
        break;
      }
      case 4: {
        const pointer = lib.sqlite3_column_blob(handle, i);
        const length = lib.sqlite3_column_bytes(handle, i);
        const bytes = new Uint8Array(length);
        if (pointer !== null && length > 0) {
          Deno.UnsafePointerView.copyInto(pointer, bytes);
        }
        row[i] = bytes;
        break;
      }
      default:
        row[i] = null;
    }
  }
  return row;
}

/** Finalize a statement (a null handle is fine). */
export function finalize(handle: Deno.PointerValue): void {
  if (handle !== null) sqlite3().sqlite3_finalize(handle);
}

/** Run statements that return no rows, one after another. */
export function execAll(db: Deno.PointerValue, text: string): void {
  const prepared = prepare(db, text);
  try {
    while (step(db, prepared.handle)) { /* no rows wanted */ }
  } finally {
    finalize(prepared.handle);
  }
}
