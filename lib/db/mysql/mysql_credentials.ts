/**
 * MariaDB/MySQL credential catalogs (`mysql.user`, `mysql.global_priv`) are
 * never an AI read, whoever the login (docs/security.md "Credential
 * catalogs"): a statement that names one, in any quoting or case, or reads a
 * view whose stored definition does (views of views followed), is denied.
 * The lexer reads the statement and the server's own stored definitions.
 *
 * @module
 */

import { type Token, tokenize } from "../sql/lexer.ts";

/** The credential tables of the `mysql` schema, upper-cased. */
const CREDENTIAL_TABLES: ReadonlySet<string> = new Set(["USER", "GLOBAL_PRIV"]);

/** How deep views of views are followed. */
const MAX_DEPTH = 8;

/** Runs one catalog statement with parameters. */
export type ViewLookup = (
  names: string[],
) => Promise<{ schema: string; name: string; definition: string }[]>;

/** A word or a quoted name without its quotes, upper-cased; "" otherwise. */
function nameOf(token: Token | undefined): string {
  if (token === undefined) return "";
  if (token.kind === "word") return token.text;
  if (token.kind === "quoted") {
    const quote = token.text[0]!;
    return token.text.slice(1, -1).replaceAll(quote + quote, quote)
      .toUpperCase();
  }
  return "";
}

/** The credential table `text` names itself, or null. */
export function namedCredential(
  text: string,
  database: string | null,
): string | null {
  const tokens = tokenize(text, "mysql");
  const inMysql = database?.toLowerCase() === "mysql";
  for (let k = 0; k < tokens.length; k++) {
    const name = nameOf(tokens[k]);
    if (!CREDENTIAL_TABLES.has(name) || tokens[k + 1]?.text === "(") continue;
    const qualified = tokens[k - 1]?.text === ".";
    if (qualified ? nameOf(tokens[k - 2]) === "MYSQL" : inMysql) {
      return `mysql.${name.toLowerCase()}`;
    }
  }
  return null;
}

/**
 * Words reserved by both MySQL (5.7, 8.x) and MariaDB: unquoted and
 * unqualified, none can name a table or a view (`select 1 from select` is a
 * syntax error), so a statement made of these and literals (`SELECT 1`)
 * costs no catalog look-up. tests/db/mysql_credentials_test.ts checks each
 * on the server.
 */
export const RESERVED_WORDS: ReadonlySet<string> = new Set(
  `ALL AND AS ASC BETWEEN BINARY BY CASE COLLATE CONVERT CROSS CURRENT_DATE
  CURRENT_TIME CURRENT_TIMESTAMP CURRENT_USER DEFAULT DESC DISTINCT DIV ELSE
  EXISTS FALSE FOR FROM GROUP HAVING IN INNER INTERVAL INTO IS JOIN LEFT LIKE
  LIMIT LOCALTIME LOCALTIMESTAMP MOD NATURAL NOT NULL ON OR ORDER OUTER REGEXP
  RIGHT RLIKE SELECT STRAIGHT_JOIN THEN TRUE UNION USING UTC_DATE UTC_TIME
  UTC_TIMESTAMP WHEN WHERE WITH XOR`.split(/\s+/),
);

/** The names in `text` that could be views, `schema.name` lower-cased. */
function candidateNames(text: string, database: string | null): Set<string> {
  const tokens = tokenize(text, "mysql");
  const names = new Set<string>();
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k]!;
    if (
      token.kind === "word" && RESERVED_WORDS.has(token.text) &&
      tokens[k - 1]?.text !== "."
    ) continue; // a keyword; only `db.select` or `\`select\`` is a name
    const name = nameOf(token).toLowerCase();
    if (name === "" || tokens[k + 1]?.text === "(") continue;
    if (tokens[k + 1]?.text === ".") continue; // a qualifier, not a table
    const schema = tokens[k - 1]?.text === "."
      ? nameOf(tokens[k - 2]).toLowerCase()
      : database?.toLowerCase();
    if (schema) names.add(`${schema}.${name}`);
  }
  return names;
}

/**
 * Why `text` may not run (it reads a credential catalog, directly or through
 * views), or null. `read`, when given, receives the definition of every view
 * the statement reads (views of views too), so the caller can look into
 * them without asking the catalog again.
 */
export async function credentialUse(
  text: string,
  database: string | null,
  views: ViewLookup,
  read?: (definition: string) => void,
): Promise<string | null> {
  let pending = [text];
  const seen = new Set<string>();
  for (let depth = 0; pending.length > 0 && depth < MAX_DEPTH; depth++) {
    for (const sql of pending) {
      const table = namedCredential(sql, database);
      if (table !== null) {
        return `the statement reads ${table}${
          depth === 0 ? "" : " through a view"
        }, which holds every account's password hash: dbport never lets an AI client read a credential catalog`;
      }
    }
    const wanted = new Set(
      pending.flatMap((sql) => [...candidateNames(sql, database)]),
    );
    if (wanted.size === 0) return null;
    const found = await views(
      [...new Set([...wanted].map((key) => key.slice(key.indexOf(".") + 1)))]
        .slice(0, 500),
    );
    pending = [];
    for (const view of found) {
      const key = `${view.schema}.${view.name}`.toLowerCase();
      if (!wanted.has(key) || seen.has(key)) continue;
      seen.add(key);
      pending.push(view.definition);
      read?.(view.definition);
    }
  }
  return null;
}
