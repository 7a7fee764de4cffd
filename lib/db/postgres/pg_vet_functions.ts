/**
 * One function's refusal by what the catalog says of it (pg_vet.ts): a
 * built-in on neither allowlist, a user's LANGUAGE internal alias of one,
 * a C symbol of a refused function, SECURITY DEFINER, a language whose body
 * dbport cannot read, a body that writes.
 *
 * @module
 */

import {
  PG_DENIED_RELATIONS,
  reachesOutside,
} from "../sql/classifier_words.ts";
import type { PgAnalysis } from "./pg_parse.ts";
import { allowlisted, writeAllowlisted } from "./allowlist.ts";

/** A row of the vetting query (vet_sql.ts). */
type Row = Record<string, unknown>;

/** A name's own reach, by the deny lists; null when it has none. */
export function deniedFunction(name: string): string | null {
  if (reachesOutside(name.toUpperCase(), true)) {
    return `${name.toLowerCase()}() reaches files, code, other hosts or SQL text`;
  }
  return null;
}

/** The reach of what a parsed statement names by itself (no catalog needed). */
export function namedReach(analysis: PgAnalysis): string | null {
  if (analysis.reach !== null) return analysis.reach;
  for (const fn of analysis.functions) {
    if (fn.optional) continue;
    const reach = deniedFunction(fn.name);
    if (reach !== null) return reach;
  }
  for (const relation of analysis.relations) {
    if (PG_DENIED_RELATIONS.has(relation.name.toUpperCase())) {
      return `${relation.name} shows the server's files or configuration`;
    }
  }
  return null;
}

/**
 * Why a built-in on neither allowlist is refused to every token: the read
 * list (only computes a result) and the write list (changes only the
 * connection's own database, or its own session and transaction) leave out
 * what reaches past the database - other sessions (pg_terminate_backend),
 * the server's configuration (pg_reload_conf), replication, WAL, backups,
 * the cluster's statistics (outsider stop 56: a write token ended another
 * session).
 */
export function pastDatabase(name: string): string {
  return `${name.toLowerCase()}() is on neither of dbport's allowlists of built-in functions (those that only compute a result, and those that change only the connection's own database or its own session): it reaches past the database (other sessions, the server's configuration, replication, WAL, backups or the cluster's statistics), which is the server administrator's`;
}

/**
 * Why a user's LANGUAGE internal function is refused, or null: it runs the
 * C code of the built-ins of the same symbol (`symbol_of`), so it is
 * allowed only if one of them is on the read or the write list. A C
 * function's symbol is an extension library's, judged by refusedSymbol.
 */
export function internalCode(row: Row): string | null {
  if (row.language !== "internal" || row.builtin === true) return null;
  const builtins = Array.isArray(row.symbol_of) ? row.symbol_of : [];
  if (
    builtins.some((oid) =>
      allowlisted(Number(oid)) || writeAllowlisted(Number(oid))
    )
  ) return null;
  return `runs ${
    String(row.symbol)
  }, the code of a built-in function on neither of dbport's allowlists: it may reach past the connection's own database (other sessions, the server's configuration)`;
}

/**
 * Why a LANGUAGE internal or C function reaches files, code, other hosts or
 * SQL text by its symbol (`prosrc`: `pg_read_file_off_len`,
 * `be_lo_export`, `dblink_record`), whatever it is called now and in
 * whatever schema it is; null when it does not.
 */
export function refusedSymbol(symbol: unknown): string | null {
  if (typeof symbol !== "string") return null;
  const upper = symbol.toUpperCase();
  if (
    reachesOutside(upper, true) || REFUSED_SYMBOLS.has(upper) ||
    upper.startsWith("BE_LO")
  ) {
    return `runs ${symbol}, the code of a function that reaches files, code, other hosts or SQL text`;
  }
  return null;
}

/**
 * The C symbols of refused PostgreSQL built-ins whose symbol is not itself
 * a refused name (pg_proc.prosrc on PostgreSQL 15: `pg_stat_file(text)` is
 * `pg_stat_file_1arg`, `lo_export` is `be_lo_export`, `ts_stat` is
 * `ts_stat1`). The `be_lo_` prefix covers every large-object function.
 */
const REFUSED_SYMBOLS: ReadonlySet<string> = new Set([
  "PG_STAT_FILE_1ARG",
  "TSQUERY_REWRITE",
  "TSQUERY_REWRITE_QUERY",
  "TS_STAT1",
  "TS_STAT2",
]);

/** Why a user function is not acceptable, or null. */
export function functionRefusal(row: Row, name: string): string | null {
  if (row.definer === true) {
    return `${name} is SECURITY DEFINER: it runs as its owner`;
  }
  if (row.language !== "sql") {
    return `${name} is written in ${
      String(row.language)
    }: dbport reads only SQL function bodies`;
  }
  if (row.body_writes === true) {
    return `${name} changes data (its body is not only SELECTs)`;
  }
  return null;
}
