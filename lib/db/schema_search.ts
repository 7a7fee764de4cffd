/**
 * The ranking of `searchSchema`, the same SQL on every engine: each engine
 * gives the rows it can search (tables, views, columns, with comments) and
 * its function for where one text occurs in another; this ranks them in one
 * statement, so a catalog of thousands of tables is never read into memory.
 *
 * @module
 */

import { oneOf } from "../base/one_of.ts";
import type { SchemaMatch, SchemaSearch, SearchResult } from "./types.ts";

type Row = Record<string, unknown>;

/** Where `needle` (lower case) starts in `hay`, whatever its case; 0 when absent. */
export type Position = (hay: string, needle: string) => string;

/** The most words of a query that are searched. */
export const MAX_SEARCH_WORDS = 8;

/**
 * The words of a search: lower case, split at white space and commas, each
 * kept once, at most {@linkcode MAX_SEARCH_WORDS}.
 */
export function searchWords(query: string): string[] {
  const words = query.toLowerCase().split(/[\s,;]+/u).filter((word) =>
    word !== ""
  );
  return [...new Set(words)].slice(0, MAX_SEARCH_WORDS);
}

/**
 * The words as a one-column table `word`; `param` adds a parameter and
 * returns its placeholder (called in the order the text uses them).
 */
function wordsTable(words: readonly string[], param: Param): string {
  return words.map((word) => `select ${param(word)} as word`).join(
    " union all ",
  );
}

const KIND_NAMES: Readonly<Record<SchemaSearch["kinds"][number], string>> = {
  table: "'table'",
  view: "'view', 'materialized_view'",
  column: "'column'",
};

/**
 * The search statement. `items` must give `schema_name`, `table_name`,
 * `column_name` (null for a table or view), `kind`, `data_type` and
 * `comment`. Best first: more words matched (a column's table name counts),
 * then the name equal to a word, starting with one, containing one, only the
 * comment; tables and views before columns; then by name.
 */
function searchSql(
  words: string,
  items: string,
  search: SchemaSearch,
  position: Position,
): string {
  const kinds = search.kinds.map((kind) => KIND_NAMES[kind]).join(", ");
  const hit = (hay: string) => `${position(hay, "w.word")} > 0`;
  const comment = "coalesce(m.comment, '')";
  return `with w as (${words}),
    i as (${items})
    select m.schema_name, m.table_name, m.column_name, m.kind, m.data_type,
           m.comment, count(*) over () as total
      from (select i.*, coalesce(i.column_name, i.table_name) as name from i
             where i.kind in (${kinds})) m
     where exists (select 1 from w where ${hit("m.name")} or ${hit(comment)})
     order by (select count(*) from w where ${hit("m.name")} or ${
    hit(comment)
  } or (m.column_name is not null and ${hit("m.table_name")})) desc,
              case when exists (select 1 from w where lower(m.name) = w.word) then 0
                   when exists (select 1 from w where ${
    position("m.name", "w.word")
  } = 1) then 1
                   when exists (select 1 from w where ${hit("m.name")}) then 2
                   else 3 end,
              case when m.column_name is null then 0 else 1 end,
              m.schema_name, m.table_name, m.column_name
     limit ${Math.max(1, Math.floor(search.limit))}`;
}

const KINDS = ["table", "view", "materialized_view", "column"] as const;

/** Adds a parameter and returns its placeholder, in the order the text uses it. */
export type Param = (value: unknown) => string;

/**
 * Run a search: `items` builds the engine's searchable rows (adding its own
 * parameters through the two functions), `word` is a word's placeholder.
 */
export async function runSearch(
  exec: (text: string, params: unknown[]) => Promise<Row[]>,
  search: SchemaSearch,
  placeholders: {
    word: (index: number) => string;
    plain: (index: number) => string;
  },
  items: (param: Param) => string,
  position: Position,
): Promise<SearchResult> {
  const params: unknown[] = [];
  const add = (placeholder: (index: number) => string): Param => (value) => {
    params.push(value);
    return placeholder(params.length);
  };
  const words = wordsTable(search.words, add(placeholders.word));
  const rows = await exec(
    searchSql(words, items(add(placeholders.plain)), search, position),
    params,
  );
  return searchResult(rows);
}

/** The rows of {@linkcode searchSql}, read. */
function searchResult(rows: readonly Row[]): SearchResult {
  const matches = rows.map((row): SchemaMatch => ({
    schema: String(row.schema_name),
    table: String(row.table_name),
    column: row.column_name === null ? null : String(row.column_name),
    kind: oneOf(KINDS, row.kind, "table"),
    dataType: row.data_type === null ? null : String(row.data_type),
    comment: row.comment === null || row.comment === ""
      ? null
      : String(row.comment),
  }));
  return { matches, total: Number(rows[0]?.total ?? 0) };
}
