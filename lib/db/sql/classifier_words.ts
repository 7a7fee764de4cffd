/**
 * The word lists behind the statement classifier (`classifier.ts`). Words are
 * upper-cased, as the lexer gives them.
 *
 * @module
 */

/** Leading keywords whose statement only reads (SELECT-like ones are scanned further). */
export const READ_LEADS: ReadonlySet<string> = new Set([
  "SELECT",
  "WITH",
  "VALUES",
  "TABLE",
  "SHOW",
  "HELP",
]);

/** Leading keywords that destroy data or the server's state. */
export const DESTRUCTIVE_LEADS: ReadonlySet<string> = new Set([
  "DROP",
  "TRUNCATE",
  "SHUTDOWN",
  "PURGE",
]);

/** Keywords that start a statement an EXPLAIN or ANALYZE may wrap. */
export const STATEMENT_STARTS: ReadonlySet<string> = new Set([
  "SELECT",
  "WITH",
  "VALUES",
  "TABLE",
  "INSERT",
  "UPDATE",
  "DELETE",
  "MERGE",
  "REPLACE",
  "CREATE",
  "DECLARE",
  "EXECUTE",
  "EXPLAIN",
]);

/** EXPLAIN's own option words (PostgreSQL, MySQL/MariaDB, SQLite). */
export const EXPLAIN_OPTIONS: ReadonlySet<string> = new Set([
  "ANALYZE",
  "ANALYSE",
  "VERBOSE",
  "EXTENDED",
  "PARTITIONS",
  "FORMAT",
  "JSON",
  "TRADITIONAL",
  "TREE",
  "TEXT",
  "XML",
  "YAML",
  "QUERY",
  "PLAN",
]);

/** Statements that change data when they appear inside another (a CTE). */
export const DML_WORDS: ReadonlySet<string> = new Set([
  "INSERT",
  "UPDATE",
  "DELETE",
  "MERGE",
]);

/**
 * Words that, before a DML word, make it part of a clause rather than a
 * statement: `FOR UPDATE`, `FOR NO KEY UPDATE`, `ON DUPLICATE KEY UPDATE`,
 * `ON CONFLICT DO UPDATE`, MERGE's `THEN UPDATE`, and `t.update` (a column).
 */
export const NOT_A_STATEMENT_BEFORE: ReadonlySet<string> = new Set([
  "FOR",
  "NO",
  "KEY",
  ".",
]);

/**
 * Words before a DML word that make it a clause's action only when the
 * words after say so ({@linkcode isEvent}'s sibling in classifier.ts):
 * MERGE's `THEN UPDATE SET`, `THEN DELETE` (then WHEN or the end), `THEN
 * INSERT (…)|VALUES`, `ON CONFLICT DO UPDATE SET`. A MariaDB trigger's `IF
 * … THEN DELETE FROM b` and an event's `DO DELETE FROM b` are statements
 * (outsider stop 58).
 */
export const CLAUSE_BEFORE: ReadonlySet<string> = new Set(["THEN", "DO"]);

/**
 * Words before DELETE or UPDATE naming an event or an action rather than a
 * statement - a foreign key's `ON DELETE CASCADE`, a rule's `ON DELETE TO`,
 * MySQL's `ON UPDATE CURRENT_TIMESTAMP`, a trigger's `AFTER|BEFORE [INSERT
 * OR] DELETE ON`, `INSTEAD OF UPDATE` (outsider stop 57: each asked for
 * approval as a DELETE without WHERE) - when the word after it says so too
 * ({@linkcode EVENT_AFTER}): MariaDB's `… PRECEDES after DELETE FROM b`
 * names a trigger `after` and deletes (outsider stop 58).
 */
export const EVENT_BEFORE: ReadonlySet<string> = new Set([
  "ON",
  "AFTER",
  "BEFORE",
  "OF",
  "OR",
]);

/**
 * Words after an event's DELETE or UPDATE: `ON t`, `OR INSERT`, `OF col`,
 * `TO t`, `CASCADE`, `RESTRICT`, `SET NULL|DEFAULT`, `NO ACTION`, MySQL's
 * `CURRENT_TIMESTAMP|NOW()|LOCALTIMESTAMP|LOCALTIME` - never the table or
 * modifier a statement's DELETE or UPDATE is followed by.
 */
export const EVENT_AFTER: ReadonlySet<string> = new Set([
  "ON",
  "OR",
  "OF",
  "TO",
  "CASCADE",
  "RESTRICT",
  "CURRENT_TIMESTAMP",
  "NOW",
  "LOCALTIMESTAMP",
  "LOCALTIME",
]);

/**
 * Functions with side effects that a read-only transaction does not stop
 * (or that leave state on a pooled session): a SELECT calling one is a write.
 */
export const SIDE_EFFECT_FUNCTIONS: ReadonlySet<string> = new Set([
  // PostgreSQL
  "NEXTVAL",
  "SETVAL",
  "SET_CONFIG",
  "PG_TERMINATE_BACKEND",
  "PG_CANCEL_BACKEND",
  "PG_RELOAD_CONF",
  "PG_ROTATE_LOGFILE",
  "PG_ADVISORY_LOCK",
  "PG_ADVISORY_LOCK_SHARED",
  "PG_ADVISORY_XACT_LOCK",
  "PG_ADVISORY_XACT_LOCK_SHARED",
  "PG_TRY_ADVISORY_LOCK",
  "PG_TRY_ADVISORY_LOCK_SHARED",
  "PG_TRY_ADVISORY_XACT_LOCK",
  "PG_TRY_ADVISORY_XACT_LOCK_SHARED",
  "PG_ADVISORY_UNLOCK",
  "PG_ADVISORY_UNLOCK_SHARED",
  "PG_ADVISORY_UNLOCK_ALL",
  "LO_CREAT",
  "LO_CREATE",
  "LO_UNLINK",
  "LO_PUT",
  "LO_FROM_BYTEA",
  "LO_TRUNCATE",
  "LOWRITE",
  "PG_NOTIFY",
  "TXID_CURRENT",
  "PG_CURRENT_XACT_ID",
  "PG_SWITCH_WAL",
  "PG_CREATE_RESTORE_POINT",
  "PG_LOGICAL_EMIT_MESSAGE",
  "PG_CREATE_LOGICAL_REPLICATION_SLOT",
  "PG_CREATE_PHYSICAL_REPLICATION_SLOT",
  "PG_DROP_REPLICATION_SLOT",
  "PG_REPLICATION_ORIGIN_CREATE",
  "PG_REPLICATION_ORIGIN_DROP",
  "PG_PROMOTE",
  "PG_BACKUP_START",
  "PG_BACKUP_STOP",
  "PG_START_BACKUP",
  "PG_STOP_BACKUP",
  "PG_WAL_REPLAY_PAUSE",
  "PG_WAL_REPLAY_RESUME",
  "PG_STAT_RESET",
  "PG_STAT_RESET_SHARED",
  "PG_STAT_RESET_SINGLE_TABLE_COUNTERS",
  "PG_STAT_RESET_SINGLE_FUNCTION_COUNTERS",
  "PG_STAT_STATEMENTS_RESET",
  "PG_IMPORT_SYSTEM_COLLATIONS",
  // MySQL / MariaDB
  "MASTER_POS_WAIT",
  "SOURCE_POS_WAIT",
]);

/**
 * Functions refused outright whatever the token, with why: locks that outlive
 * a request and CPU burners a statement timeout does not stop cleanly
 * (MariaDB answers a killed BENCHMARK() with 0, as if it had finished).
 */
export const DENIED_FUNCTIONS: Readonly<Record<string, string>> = {
  GET_LOCK: "get_lock() takes a lock that outlives the request",
  RELEASE_LOCK: "release_lock() releases another session's lock",
  RELEASE_ALL_LOCKS: "release_all_locks() releases locks",
  BENCHMARK: "benchmark() burns CPU on the database server",
};

/** Functions that reach the file system, run code, or run SQL given as text. */
export const FILE_OR_CODE_FUNCTIONS: ReadonlySet<string> = new Set([
  // PostgreSQL
  "PG_READ_FILE",
  "PG_READ_BINARY_FILE",
  "PG_LS_DIR",
  "PG_STAT_FILE",
  "PG_LS_LOGDIR",
  "PG_LS_WALDIR",
  "PG_LS_TMPDIR",
  "PG_LS_ARCHIVE_STATUSDIR",
  "PG_FILE_WRITE",
  "PG_FILE_RENAME",
  "PG_FILE_UNLINK",
  "PG_LOGDIR_LS",
  "LO_IMPORT",
  "LO_EXPORT",
  "DBLINK",
  "DBLINK_EXEC",
  "DBLINK_CONNECT",
  "DBLINK_CONNECT_U",
  "DBLINK_SEND_QUERY",
  "DBLINK_OPEN",
  "QUERY_TO_XML",
  "QUERY_TO_XMLSCHEMA",
  "QUERY_TO_XML_AND_XMLSCHEMA",
  "CURSOR_TO_XML",
  "CURSOR_TO_XMLSCHEMA",
  // Each reads tables a string names at run time: no parse tree shows which
  // (table_to_xml('pg_authid', …) read the password verifiers for a write
  // token on a login that may read them).
  "TABLE_TO_XML",
  "TABLE_TO_XMLSCHEMA",
  "TABLE_TO_XML_AND_XMLSCHEMA",
  "SCHEMA_TO_XML",
  "SCHEMA_TO_XMLSCHEMA",
  "SCHEMA_TO_XML_AND_XMLSCHEMA",
  "DATABASE_TO_XML",
  "DATABASE_TO_XMLSCHEMA",
  "DATABASE_TO_XML_AND_XMLSCHEMA",
  "TS_STAT",
  "TS_REWRITE",
  "LOREAD",
  "LOWRITE",
  "PG_LOGDIR_LS",
  "PG_STAT_FILE",
  // MySQL / MariaDB
  "LOAD_FILE",
  "SYS_EXEC",
  "SYS_EVAL",
  // SQLite (and its shell's extensions)
  "LOAD_EXTENSION",
  "READFILE",
  "WRITEFILE",
  "EDIT",
  "FTS3_TOKENIZER",
  "ZIPFILE",
]);

/** Leading keywords that reach the file system or run code. */
export const FILE_OR_CODE_LEADS: Readonly<Record<string, string>> = {
  COPY: "COPY reads or writes files, programs or the client's stream",
  LOAD: "LOAD reads a file or a library",
  ATTACH: "ATTACH opens another database file",
  INSTALL: "INSTALL loads a plugin",
  SOURCE: "SOURCE runs a script file",
  IMPORT: "IMPORT reads foreign data or files",
};

/** Configuration that names libraries to load (code). */
export const LIBRARY_SETTINGS: ReadonlySet<string> = new Set([
  "SESSION_PRELOAD_LIBRARIES",
  "LOCAL_PRELOAD_LIBRARIES",
  "SHARED_PRELOAD_LIBRARIES",
  "DYNAMIC_LIBRARY_PATH",
  "PLUGIN_DIR",
]);

/** Procedural languages that run outside the database's sandbox. */
export const UNTRUSTED_LANGUAGES: ReadonlySet<string> = new Set([
  "C",
  "INTERNAL",
  "PLPYTHONU",
  "PLPYTHON2U",
  "PLPYTHON3U",
  "PLPERLU",
  "PLTCLU",
  "PLSH",
  "PLV8",
  "PLJAVAU",
  "PLRUBYU",
]);

/** SQLite pragmas that only read; the ones taking a table name may have one. */
export const READ_PRAGMAS_WITH_ARGUMENT: ReadonlySet<string> = new Set([
  "TABLE_INFO",
  "TABLE_XINFO",
  "TABLE_LIST",
  "INDEX_LIST",
  "INDEX_INFO",
  "INDEX_XINFO",
  "FOREIGN_KEY_LIST",
  "FOREIGN_KEY_CHECK",
  "INTEGRITY_CHECK",
  "QUICK_CHECK",
]);

/** SQLite pragmas that only read when given no value. */
export const READ_PRAGMAS: ReadonlySet<string> = new Set([
  ...READ_PRAGMAS_WITH_ARGUMENT,
  "DATABASE_LIST",
  "COLLATION_LIST",
  "COMPILE_OPTIONS",
  "FUNCTION_LIST",
  "MODULE_LIST",
  "PRAGMA_LIST",
  "ENCODING",
  "PAGE_COUNT",
  "PAGE_SIZE",
  "FREELIST_COUNT",
  "SCHEMA_VERSION",
  "USER_VERSION",
  "APPLICATION_ID",
  "JOURNAL_MODE",
  "FOREIGN_KEYS",
  "AUTO_VACUUM",
]);

/** Name prefixes of PostgreSQL functions that reach files, code or hosts. */
export const FILE_OR_CODE_PREFIXES: readonly string[] = [
  "PG_READ_",
  "PG_LS_",
  "PG_FILE_",
  "DBLINK",
  "LO_",
];

/**
 * Whether an upper-cased function name reaches files, code or SQL text: by
 * name on every engine, by prefix on PostgreSQL (the lexer's and the
 * catalog check's one rule).
 */
export function reachesOutside(
  name: string,
  byPrefix: boolean,
): boolean {
  return FILE_OR_CODE_FUNCTIONS.has(name) ||
    (byPrefix &&
      FILE_OR_CODE_PREFIXES.some((prefix) => name.startsWith(prefix)));
}

/** Views that show the server's files and configuration. */
export const PG_DENIED_RELATIONS: ReadonlySet<string> = new Set([
  "PG_HBA_FILE_RULES",
  "PG_FILE_SETTINGS",
  "PG_IDENT_FILE_MAPPINGS",
  "PG_CONFIG",
]);
