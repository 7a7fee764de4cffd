/**
 * Placeholders read by each engine's lexer (lexer.ts), never by a pattern:
 * a `?` or `$1` inside a string, a quoted name or a comment is text, and
 * PostgreSQL's `::` cast is never a `:name`.
 *
 * - {@linkcode placeholderCount}: how many values a statement's positional
 *   placeholders take (`$n` on PostgreSQL, `?` on MariaDB, `?`/`?NNN` and
 *   named variables on SQLite), so a count mismatch is refused before the
 *   engine sees it.
 * - {@linkcode compileNamed}: a saved query's `:name` parameters turned
 *   into the engine's own placeholders, with the order values bind in.
 *
 * @module
 */

import type { Engine } from "../engines.ts";
import { lex, type Token } from "./lexer.ts";

/** The number of values the statement's placeholders take. */
export function placeholderCount(sql: string, engine: Engine): number {
  const tokens = lex(sql, engine).tokens;
  switch (engine) {
    case "postgres": {
      // $n may repeat and come in any order: the statement takes max(n).
      let max = 0;
      for (const token of tokens) {
        if (token.kind === "param" && /^\$[0-9]+$/.test(token.text)) {
          max = Math.max(max, Number(token.text.slice(1)));
        }
      }
      return max;
    }
    case "mysql":
      // Every `?` outside strings, names and comments is one value. The
      // lexer reads `?word` as a named parameter; MariaDB reads it as `?`
      // followed by the word.
      return tokens.filter((token) =>
        token.text === "?" ||
        (token.kind === "param" && token.text.startsWith("?"))
      ).length;
    case "sqlite":
      return sqliteCount(tokens);
  }
}

/**
 * SQLite's numbering (`sqlite3_bind_parameter_count`): `?` takes the next
 * number, `?NNN` its own, a named variable the next one at its first use.
 */
function sqliteCount(tokens: readonly Token[]): number {
  let max = 0;
  const named = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== "param") continue;
    if (token.text === "?") max++;
    else if (/^\?[0-9]+$/.test(token.text)) {
      max = Math.max(max, Number(token.text.slice(1)));
    } else if (!named.has(token.text)) {
      named.add(token.text);
      max++;
    }
  }
  return max;
}

/** A saved query compiled for its engine. */
export interface Compiled {
  /** The statement with the engine's placeholders in place of `:name`. */
  sql: string;
  /** The parameter each positional value comes from, in bind order. */
  order: string[];
}

/** A `:name` the statement uses that is not declared, or the reverse. */
export class PlaceholderError extends Error {}

/**
 * Replace each `:name` (a declared parameter) by the engine's placeholder:
 * `$k` on PostgreSQL and `?k` on SQLite (k: the parameter's number, reused
 * where it repeats), `?` on MariaDB (one value per use). A `:name` that is
 * not declared, a declared one never used, or a positional placeholder in
 * the text is a {@linkcode PlaceholderError}: the statement's values come
 * only from its declared parameters.
 */
export function compileNamed(
  sql: string,
  engine: Engine,
  declared: readonly string[],
): Compiled {
  const { tokens, uncertain } = lex(sql, engine);
  if (uncertain.length > 0) {
    throw new PlaceholderError(
      `the statement cannot be read with certainty: ${uncertain.join("; ")}`,
    );
  }
  if (placeholderCount(sql, engine) > 0 && !hasOnlyNamed(tokens, sql)) {
    throw new PlaceholderError(
      "the statement has positional placeholders ($1, ?); a saved query names its parameters (:name)",
    );
  }
  const numbers = new Map(declared.map((name, i) => [name, i + 1]));
  const used = new Set<string>();
  const order: string[] = [];
  let out = "";
  let at = 0;
  for (const token of tokens) {
    const name = namedParameter(token, sql);
    if (name === null) continue;
    const number = numbers.get(name);
    if (number === undefined) {
      throw new PlaceholderError(
        `the statement uses :${name}, which is not a declared parameter (declare it with --param ${name}:TYPE)`,
      );
    }
    if (GLUED.test(sql[token.start - 1] ?? "")) {
      // `a:n` would become `a$1`, one PostgreSQL identifier (`1:n`, `$:n`
      // and `@:n` other tokens again): the placeholder must stand alone.
      throw new PlaceholderError(
        `:${name} is glued to the "${
          sql[token.start - 1]
        }" before it, where its placeholder would join that word; put a space or an operator before :${name}`,
      );
    }
    used.add(name);
    out += sql.slice(at, token.start);
    if (engine === "mysql") {
      out += "?";
      order.push(name);
    } else {
      out += engine === "postgres" ? `$${number}` : `?${number}`;
    }
    at = token.end;
  }
  out += sql.slice(at);
  const unused = declared.filter((name) => !used.has(name));
  if (unused.length > 0) {
    throw new PlaceholderError(
      `the parameter${unused.length === 1 ? "" : "s"} ${
        unused.map((name) => `:${name}`).join(", ")
      } never appear${unused.length === 1 ? "s" : ""} in the statement`,
    );
  }
  // The compiled text must read as the statement did, with exactly the
  // placeholders put in: nothing merged into a word, a quote or a comment.
  const wanted = engine === "mysql" ? order.length : declared.length;
  const relexed = lex(out, engine);
  if (
    relexed.uncertain.length > 0 ||
    relexed.tokens.length !== tokens.length ||
    placeholderCount(out, engine) !== wanted
  ) {
    throw new PlaceholderError(
      "the statement does not read the same once its :name parameters become placeholders; put spaces around them",
    );
  }
  return { sql: out, order: engine === "mysql" ? order : [...declared] };
}

/** A character a placeholder glued after it would join (a word, a number, a sigil). */
const GLUED = /[A-Za-z0-9_$@#?\u0080-\uffff]/;

/** SQLite reads `:name` as a variable too: those are ours, nothing else. */
function hasOnlyNamed(tokens: readonly Token[], sql: string): boolean {
  return tokens.every((token) =>
    token.kind !== "param" || namedParameter(token, sql) !== null
  ) && !tokens.some((token) => token.text === "?");
}

/**
 * The name of a `:name` token, or null: never the second half of a `::`
 * cast (`x::text`), never a name glued to a following single `:` (`:a:b`);
 * a parameter cast with `::` (`:id::int`) is one.
 */
function namedParameter(token: Token, sql: string): string | null {
  if (token.kind !== "param" || !token.text.startsWith(":")) return null;
  if (sql[token.start - 1] === ":") return null;
  if (sql[token.end] === ":" && sql[token.end + 1] !== ":") return null;
  const name = token.text.slice(1);
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : null;
}
