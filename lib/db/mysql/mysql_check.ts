/**
 * What MySQL/MariaDB itself says about a statement before it runs
 * (`Driver.check`): the credential catalogs it reads, the stored functions
 * it calls (itself or through the views it reads), and for a statement that
 * is not a read, the server's own parser (PREPARE without running it).
 *
 * @module
 */

import mysql from "mysql2";
import { thrown } from "../../base/thrown.ts";
import { tokenize } from "../sql/lexer.ts";
import { credentialUse } from "./mysql_credentials.ts";
import { toDbError } from "./mysql_errors.ts";
import {
  exec,
  type MysqlState,
  QUOTING_RULES,
  simple,
} from "./mysql_session.ts";
import { throwIfAborted } from "../stoppable.ts";
import { type EngineCheck, NO_OPINION } from "../types.ts";

/** An engine check with nothing of its own to say (a verdict is added). */
const NO_VERDICT = NO_OPINION as Extract<EngineCheck, { ok: true }>;

/** The limits of dbport's own statements. */
type Limits = { signal: AbortSignal; timeoutMs: number };

/**
 * The server's own parser on a statement that is not a read, without
 * running it: PREPARE (COM_STMT_PREPARE) finds syntax errors and missing
 * tables before anyone is asked to approve the statement.
 */
export async function checkMysql(
  state: MysqlState,
  text: string,
  tier: string,
  options: Limits,
): Promise<EngineCheck> {
  // The views it reads: a stored function they call runs as much as one
  // the statement names (storedFunctions below).
  const viewed: string[] = [];
  const denied = await credentialUse(text, state.database, (names) =>
    exec(
      state,
      `select table_schema as s, table_name as n, view_definition as d
           from information_schema.views where table_name in (?)`,
      [names],
      options,
    ).then((rows) =>
      rows.map((row) => ({
        schema: String(row.s),
        name: String(row.n),
        definition: String(row.d ?? ""),
      }))
    ), (definition) => viewed.push(definition));
  if (denied !== null) return { ...NO_VERDICT, denied };
  if (tier === "read") {
    return await storedFunctions(state, [text, ...viewed], options);
  }
  throwIfAborted(options.signal);
  // A session of its own, not read-only: on a read-only one MariaDB
  // answers the PREPARE of any write with 1792 and checks nothing else.
  // It prepares only, never executes, and is closed at once.
  const connection = mysql.createConnection(state.base);
  try {
    await simple(connection, `SET ${QUOTING_RULES}`);
    await new Promise<void>((resolve, reject) =>
      connection.prepare(text, (error, statement) => {
        if (error) return reject(error);
        statement.close();
        resolve();
      })
    );
    return NO_OPINION;
  } catch (error) {
    const errno = thrown(error).errno ?? 0;
    // Syntax, unknown table, column or database: the run would fail too.
    if ([1064, 1146, 1054, 1049].includes(errno)) {
      return { ok: false, message: toDbError(error, state.secrets).message };
    }
    return NO_OPINION; // 1295: a statement PREPARE cannot take.
  } finally {
    connection.destroy();
  }
}

/**
 * A read that calls a stored function, itself or inside a view it reads
 * (views of views too), is a write: the read-only transaction stops its
 * writes, but not a `LOAD_FILE` or a `SLEEP` inside it, and a `SQL SECURITY DEFINER` one runs with its definer's privileges,
 * past any AI login. Built-in names cannot be stored functions when called
 * unqualified (MySQL resolves them to the built-in), so only other names
 * cost a look-up.
 */
async function storedFunctions(
  state: MysqlState,
  texts: readonly string[],
  options: Limits,
): Promise<EngineCheck> {
  // The statement and the definitions of the views it reads.
  const called = [...new Set(texts.flatMap(calledNames))].filter((name) =>
    name.includes(".") || !MYSQL_BUILTINS.has(name)
  );
  if (called.length === 0) return NO_OPINION;
  const names = called.map((name) => name.split(".").at(-1)!);
  const rows = await exec(
    state,
    `select routine_schema as s, routine_name as n, security_type as t
         from information_schema.routines
        where routine_type = 'FUNCTION' and routine_name in (${
      names.map(() => "?").join(", ")
    })`,
    names,
    options,
  );
  if (rows.length === 0) return NO_OPINION;
  const first = rows[0]!;
  return {
    ok: true,
    parsedTier: null,
    dangerous: false,
    reach: null,
    tier: "write",
    why: `${String(first.s)}.${
      String(first.n)
    }() is a stored function (SQL SECURITY ${String(first.t)})`,
  };
}

/**
 * A function `text` calls that is not built in (a stored function may
 * write rows its statement's count does not name), or null.
 */
export function storedCall(text: string): string | null {
  const tables = tableNames(text);
  return calledNames(text).find((name) =>
    !tables.has(name) && !WRITE_WORDS.has(name) &&
    (name.includes(".") || !MYSQL_BUILTINS.has(name))
  ) ?? null;
}

/** Words a write follows with "(" that call nothing. */
const WRITE_WORDS = new Set(["VALUES", "VALUE", "INTO", "SET"]);

/** Names in a table's place (`INSERT INTO t (a)`), upper-cased. */
function tableNames(text: string): Set<string> {
  const tokens = tokenize(text, "mysql");
  const names = new Set<string>();
  for (let k = 1; k < tokens.length; k++) {
    if (!TABLE_BEFORE.has(tokens[k - 1]!.text)) continue;
    // `schema.table` counts as the name after its dot, as calledNames reads it.
    let at = k;
    if (tokens[at + 1]?.text === ".") at += 2;
    const token = tokens[at];
    if (token?.kind === "word") names.add(token.text);
    if (token?.kind === "quoted") {
      names.add(token.text.slice(1, -1).toUpperCase());
    }
    if (at !== k) {
      const schema = tokens[k]!.text.replace(/`/g, "").toUpperCase();
      names.add(`${schema}.${[...names].at(-1)}`);
    }
  }
  return names;
}

/** Words after which a name is a table's. */
const TABLE_BEFORE = new Set([
  "INTO",
  "TABLE",
  "UPDATE",
  "FROM",
  "JOIN",
  "REPLACE",
  "INSERT",
]);

/** Names called as functions in a MySQL statement, upper-cased (`db.f` kept). */
function calledNames(text: string): string[] {
  const tokens = tokenize(text, "mysql");
  const names = new Set<string>();
  for (let k = 0; k < tokens.length; k++) {
    if (tokens[k + 1]?.text !== "(") continue;
    const token = tokens[k]!;
    const bare = token.kind === "word"
      ? token.text
      : token.kind === "quoted"
      ? token.text.slice(1, -1).toUpperCase()
      : null;
    if (bare === null) continue;
    const qualifier = tokens[k - 1]?.text === "." ? tokens[k - 2] : undefined;
    names.add(
      qualifier === undefined
        ? bare
        : `${qualifier.text.replace(/`/g, "").toUpperCase()}.${bare}`,
    );
  }
  return [...names];
}

/** Built-in MySQL/MariaDB functions and keywords followed by "(" in reads. */
const MYSQL_BUILTINS: ReadonlySet<string> = new Set(
  `ABS ACOS ADDDATE ADDTIME AES_DECRYPT AES_ENCRYPT ANY_VALUE ASCII ASIN ATAN ATAN2 AVG BIN BIT_AND
  BIT_COUNT BIT_LENGTH BIT_OR BIT_XOR CAST CEIL CEILING CHAR CHAR_LENGTH CHARACTER_LENGTH CHARSET
  COALESCE COLLATION COMPRESS CONCAT CONCAT_WS CONNECTION_ID CONV CONVERT CONVERT_TZ COS COT COUNT
  CRC32 CURDATE CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP CURRENT_USER CURTIME DATABASE DATE
  DATE_ADD DATE_FORMAT DATE_SUB DATEDIFF DAY DAYNAME DAYOFMONTH DAYOFWEEK DAYOFYEAR DEGREES DIV
  ELT EXISTS EXP EXPORT_SET EXTRACT FIELD FIND_IN_SET FLOOR FORMAT FOUND_ROWS FROM_BASE64
  FROM_DAYS FROM_UNIXTIME GREATEST GROUP_CONCAT HEX HOUR IF IFNULL IN INET_ATON INET_NTOA INSERT
  INSTR INTERVAL ISNULL JSON_ARRAY JSON_ARRAYAGG JSON_CONTAINS JSON_CONTAINS_PATH JSON_DEPTH
  JSON_EXTRACT JSON_KEYS JSON_LENGTH JSON_OBJECT JSON_OBJECTAGG JSON_QUOTE JSON_SEARCH JSON_TYPE
  JSON_UNQUOTE JSON_VALID JSON_VALUE JSON_TABLE LAG LAST_DAY LAST_INSERT_ID LCASE LEAD LEAST LEFT
  LENGTH LN LOCALTIME LOCALTIMESTAMP LOCATE LOG LOG10 LOG2 LOWER LPAD LTRIM MAKEDATE MAKETIME MAX
  MD5 MICROSECOND MID MIN MINUTE MOD MONTH MONTHNAME NOW NULLIF OCT OCTET_LENGTH ORD OVER PERIOD_ADD
  PERIOD_DIFF PI POSITION POW POWER QUARTER QUOTE RADIANS RAND RANK DENSE_RANK ROW_NUMBER NTILE
  FIRST_VALUE LAST_VALUE NTH_VALUE CUME_DIST PERCENT_RANK REGEXP_INSTR REGEXP_LIKE REGEXP_REPLACE
  REGEXP_SUBSTR REPEAT REPLACE REVERSE RIGHT ROUND ROW RPAD RTRIM SCHEMA SEC_TO_TIME SECOND SHA SHA1
  SHA2 SIGN SIN SLEEP SOUNDEX SPACE SQRT STD STDDEV STDDEV_POP STDDEV_SAMP STR_TO_DATE STRCMP
  SUBDATE SUBSTR SUBSTRING SUBSTRING_INDEX SUBTIME SUM SYSDATE TAN TIME TIME_FORMAT TIME_TO_SEC
  TIMEDIFF TIMESTAMP TIMESTAMPADD TIMESTAMPDIFF TO_BASE64 TO_DAYS TO_SECONDS TRIM TRUNCATE UCASE
  UNCOMPRESS UNHEX UNIX_TIMESTAMP UPPER USER UTC_DATE UTC_TIME UTC_TIMESTAMP UUID UUID_SHORT VALUES
  VAR_POP VAR_SAMP VARIANCE VERSION WEEK WEEKDAY WEEKOFYEAR YEAR YEARWEEK AND OR NOT ON USING
  MATCH AGAINST ANY ALL SOME DECIMAL SIGNED UNSIGNED BINARY WITH AS FROM WHERE SELECT`
    .split(/\s+/).filter((name) => name !== ""),
);
