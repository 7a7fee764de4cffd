/**
 * Joins that compare a column no privilege check sees: `JOIN … USING (c)`
 * and `NATURAL JOIN` (docs/security.md "Private columns"). MariaDB checks
 * no column privilege on the columns a `USING`/`NATURAL` join compares, and
 * SQLite builds their comparison without asking the authorizer, so a read
 * of a private column through one goes unrefused:
 * `… customers c JOIN (SELECT '0042' AS ssn_last4) x USING (ssn_last4)`
 * tells whether a value is there, and joined to every candidate (a
 * recursive CTE of 0000–9999) returns each row's value as `x.ssn_last4`.
 * PostgreSQL checks them (it marks the columns read), so only MySQL,
 * MariaDB and SQLite connections with private columns refuse the two words.
 *
 * @module
 */

import { tokenize } from "./sql/lexer.ts";
import type { Engine } from "./engines.ts";

/** Engines whose column check misses the columns of a `USING`/`NATURAL` join. */
const BLIND: ReadonlySet<Engine> = new Set(["mysql", "sqlite"]);

/**
 * The refusal for `sql` on a connection of `engine` with `privateColumns`,
 * or null when it holds no `USING` or `NATURAL` word (strings, comments and
 * quoted names aside) or has no private columns.
 */
export function privateJoinRefusal(
  sql: string,
  engine: Engine,
  privateColumns: readonly string[] | undefined,
): string | null {
  if (!BLIND.has(engine) || (privateColumns?.length ?? 0) === 0) return null;
  const word = tokenize(sql, engine).find((t) =>
    t.kind === "word" && (t.text === "USING" || t.text === "NATURAL")
  );
  if (word === undefined) return null;
  return `this connection has private columns, and the database does not check the columns a ${
    word.text === "NATURAL" ? "NATURAL JOIN" : "JOIN … USING (…)"
  } compares, so "${word.text}" is refused on it: write the join with ON (a.col = b.col) instead`;
}
