/**
 * Placeholders as each engine's lexer reads them: counted outside strings,
 * quoted names and comments; a saved query's `:name` compiled to the
 * engine's own placeholders, never inside a string or a `::` cast.
 */

import { assertEquals, assertThrows } from "@std/assert";
import {
  compileNamed,
  placeholderCount,
  PlaceholderError,
} from "../../lib/db/sql/placeholders.ts";

Deno.test("placeholderCount: PostgreSQL $n, by the highest number", () => {
  assertEquals(placeholderCount("select $1, $2, $1", "postgres"), 2);
  assertEquals(placeholderCount("select $3", "postgres"), 3);
  assertEquals(placeholderCount("select '$1', \"$2\" -- $3", "postgres"), 0);
  assertEquals(
    placeholderCount("select $$ $1 $$, $tag$ $2 $tag$", "postgres"),
    0,
  );
  assertEquals(placeholderCount("select upper($1)", "postgres"), 1);
  // ? is a jsonb operator on PostgreSQL, never a placeholder.
  assertEquals(placeholderCount("select '{}'::jsonb ? 'a'", "postgres"), 0);
});

Deno.test("placeholderCount: MariaDB ?, one value per use", () => {
  assertEquals(placeholderCount("select ?, ?", "mysql"), 2);
  assertEquals(placeholderCount("select '?', \"?\", `?` # ?", "mysql"), 0);
  assertEquals(placeholderCount("select 'it\\'s ?', ?", "mysql"), 1);
  assertEquals(placeholderCount("select ? /* ? */ -- ?\n", "mysql"), 1);
});

Deno.test("placeholderCount: SQLite ?, ?NNN and named variables", () => {
  assertEquals(placeholderCount("select ?, ?", "sqlite"), 2);
  assertEquals(placeholderCount("select ?3", "sqlite"), 3);
  assertEquals(placeholderCount("select :a, :b, :a", "sqlite"), 2);
  assertEquals(placeholderCount("select '?', [?], \"?\"", "sqlite"), 0);
});

Deno.test("compileNamed: the engine's placeholders, never in strings or casts", () => {
  const sql =
    "select ':region', x::text from t where region = :region -- :n\n limit :n";
  assertEquals(compileNamed(sql, "postgres", ["region", "n"]), {
    sql: "select ':region', x::text from t where region = $1 -- :n\n limit $2",
    order: ["region", "n"],
  });
  assertEquals(
    compileNamed("select * from t where a = :a or b = :a limit :n", "mysql", [
      "a",
      "n",
    ]),
    {
      sql: "select * from t where a = ? or b = ? limit ?",
      order: ["a", "a", "n"],
    },
  );
  assertEquals(
    compileNamed("select * from t where a = :a or b = :a limit :n", "sqlite", [
      "a",
      "n",
    ]),
    {
      sql: "select * from t where a = ?1 or b = ?1 limit ?2",
      order: ["a", "n"],
    },
  );
});

Deno.test("compileNamed: undeclared, unused and positional placeholders are refused", () => {
  assertThrows(
    () => compileNamed("select :x", "postgres", []),
    PlaceholderError,
    ":x, which is not a declared parameter",
  );
  assertThrows(
    () => compileNamed("select 1", "mysql", ["n"]),
    PlaceholderError,
    ":n never appears",
  );
  assertThrows(
    () => compileNamed("select ? , :n", "mysql", ["n"]),
    PlaceholderError,
    "positional placeholders",
  );
  assertThrows(
    () => compileNamed("select $1, :n", "postgres", ["n"]),
    PlaceholderError,
    "positional placeholders",
  );
  assertThrows(
    () => compileNamed("select 'open", "sqlite", []),
    PlaceholderError,
    "cannot be read with certainty",
  );
});
