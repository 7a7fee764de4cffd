/**
 * Placeholder counting and `:name` compiling at their edges
 * (lib/db/sql/placeholders.ts): SQLite's numbering with `?NNN` and repeated
 * names, MariaDB's `?word`, PostgreSQL's `$n` after other params, casts and
 * `:a:b`, glued names, and the messages of each refusal.
 */

import { assertEquals, assertThrows } from "@std/assert";
import {
  compileNamed,
  placeholderCount,
  PlaceholderError,
} from "../../lib/db/sql/placeholders.ts";

Deno.test("placeholderCount: SQLite numbers ?, ?NNN and names as sqlite3_bind_parameter_count does", () => {
  // ?5 then ?: the ? takes 6.
  assertEquals(placeholderCount("select ?5, ?", "sqlite"), 6);
  // ? then ?1: still 1 (the ?1 is the same slot).
  assertEquals(placeholderCount("select ?, ?1", "sqlite"), 1);
  // A name used twice is one slot; @a and $a and :a are three names.
  assertEquals(placeholderCount("select :a, @a, $a, :a", "sqlite"), 3);
  assertEquals(placeholderCount("select ?2, :a", "sqlite"), 3);
  assertEquals(placeholderCount("select 1", "sqlite"), 0);
});

Deno.test("placeholderCount: MariaDB `?word` is one ? then a word; PostgreSQL counts only $n params", () => {
  assertEquals(placeholderCount("select ?a, ?", "mysql"), 2);
  assertEquals(placeholderCount("select @a, ?", "mysql"), 1);
  assertEquals(placeholderCount("select $2, :x", "postgres"), 2);
  assertEquals(placeholderCount("select $10, $9", "postgres"), 10);
  assertEquals(placeholderCount("select 1", "postgres"), 0);
});

Deno.test("compileNamed: a parameter cast with :: is one; :a:b and the second half of :: are not", () => {
  assertEquals(
    compileNamed("select :id::int", "postgres", ["id"]).sql,
    "select $1::int",
  );
  assertThrows(
    () => compileNamed("select :a:b", "postgres", ["a", "b"]),
    PlaceholderError,
  );
  assertEquals(
    compileNamed("select x::text, :n", "postgres", ["n"]).sql,
    "select x::text, $1",
  );
});

Deno.test("compileNamed: a :name glued to a word before it is refused, naming that character", () => {
  assertThrows(
    () => compileNamed("select a:n", "sqlite", ["n"]),
    PlaceholderError,
    ':n is glued to the "a" before it',
  );
  assertThrows(
    () => compileNamed("select 1:n", "sqlite", ["n"]),
    PlaceholderError,
    'glued to the "1"',
  );
  // An operator or a space before it is fine.
  assertEquals(compileNamed("select 1+:n", "sqlite", ["n"]).sql, "select 1+?1");
  assertEquals(compileNamed("select (:n)", "mysql", ["n"]), {
    sql: "select (?)",
    order: ["n"],
  });
});

Deno.test("compileNamed: declared order numbers the placeholders, whatever order they appear in", () => {
  assertEquals(compileNamed("select :b, :a", "postgres", ["a", "b"]), {
    sql: "select $2, $1",
    order: ["a", "b"],
  });
  assertEquals(compileNamed("select :b, :a", "mysql", ["a", "b"]), {
    sql: "select ?, ?",
    order: ["b", "a"],
  });
});

Deno.test("compileNamed: one or several unused parameters are named with singular or plural", () => {
  assertThrows(
    () => compileNamed("select :a", "postgres", ["a", "b"]),
    PlaceholderError,
    "the parameter :b never appears in the statement",
  );
  assertThrows(
    () => compileNamed("select :a", "postgres", ["a", "b", "c"]),
    PlaceholderError,
    "the parameters :b, :c never appear in the statement",
  );
  // SQLite: a non-`:` variable in the text is positional, refused.
  assertThrows(
    () => compileNamed("select @x, :n", "sqlite", ["n"]),
    PlaceholderError,
    "positional placeholders",
  );
  assertThrows(
    () => compileNamed("select ?, :n", "sqlite", ["n"]),
    PlaceholderError,
    "positional placeholders",
  );
});
