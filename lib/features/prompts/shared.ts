/**
 * What several prompts share: their common arguments and the reads that
 * pick the tables a prompt shows.
 *
 * @module
 */

import { ENGINES, schemaWords } from "../../db/engines.ts";
import { noSuchTable } from "../../db/errors.ts";
import { MAX_SEARCH_WORDS } from "../../db/schema_search.ts";
import type {
  SchemaOverview,
  TableColumns,
  TableDetail,
  TableKey,
  TableSummary,
} from "../../db/types.ts";
import { readOverview } from "../resources/schema_payload.ts";
import { scopeOf } from "../tools/discovery.ts";
import { catalogCall, type FeatureDeps } from "../deps.ts";
import { rethrow, ToolFailure } from "../tools/failure.ts";
import type { PromptArgument, RenderInput } from "./define.ts";
import { header, inventory, quoted } from "./structure.ts";

/** `schema`: only this schema (database, attached database). */
export const SCHEMA = {
  name: "schema",
  title: "Schema",
  description: `Only this ${schemaWords()}.`,
  required: false,
} as const satisfies PromptArgument;

/** `audience`: who an explanation is for. */
export const AUDIENCE = {
  name: "audience",
  title: "Audience",
  description: "Who the explanation is for.",
  required: false,
  choices: ["newcomer", "analyst", "engineer"],
} as const satisfies PromptArgument;

/** How each audience is described to the model. */
export const AUDIENCES: {
  readonly [A in typeof AUDIENCE.choices[number]]: string;
} = {
  newcomer:
    "someone new to this database: plain words, what each part is for, no jargon",
  analyst:
    "an analyst: which tables hold which facts, how they join, what to count and filter by",
  engineer:
    "an engineer: keys, constraints, indexes, naming, and structural risks",
};

/** A free-text argument. */
export function textArgument<const N extends string, const R extends boolean>(
  name: N,
  title: string,
  description: string,
  required: R,
): { name: N; title: string; description: string; required: R } {
  return { name, title, description, required };
}

/** `table`: a table or view, required. */
export const TABLE = textArgument(
  "table",
  "Table",
  "The table or view name, as stored.",
  true,
);

/** Query text echoed into a prompt, at most. */
export const QUERY_ECHO_LIMIT = 8_000;

/** The user's words as a markdown quote, cut at {@linkcode QUERY_ECHO_LIMIT}. */
export function blockquote(text: string): string {
  return `> ${quoted(text, QUERY_ECHO_LIMIT).replace(/\n/g, "\n> ")}`;
}

/** The header, then the inventory of every table: what each prompt starts from. */
export async function schemaSection(
  deps: FeatureDeps,
  { resolved, ctx }: Pick<RenderInput, "resolved" | "ctx">,
  all: { tables: readonly TableColumns[]; totalTables: number },
): Promise<string[]> {
  return [
    await header(deps, ctx, resolved),
    "",
    `## Tables (${all.totalTables})`,
    inventory(all.tables, all.totalTables),
  ];
}

/** The most tables a prompt looks through by name or size. */
const TABLES_LOOKED_AT = 10_000;

/** Tables of the named schema, or of every schema, by name (no columns). */
export async function tableNames(
  deps: FeatureDeps,
  { args, resolved, ctx }: RenderInput<{ readonly schema?: string }>,
  rowCounts = false,
): Promise<TableSummary[]> {
  const page = await resolved.driver.listTables({
    ...catalogCall(deps, ctx),
    rowCounts,
    limit: TABLES_LOOKED_AT,
    ...(args.schema === undefined ? {} : { schema: args.schema }),
  }).catch((error) => rethrow(error, resolved.label));
  return page.tables;
}

/** Tables ordered by engine row statistics, largest first. */
export async function tablesBySize(
  deps: FeatureDeps,
  input: RenderInput<{ readonly schema?: string }>,
): Promise<TableSummary[]> {
  // Without statistics, counting every table could take long.
  const tables = await tableNames(
    deps,
    input,
    ENGINES[input.resolved.driver.engine].rowCountsAreEstimates,
  );
  return tables.filter((table) => table.type !== "view").sort((a, b) =>
    (b.rowCount ?? 0) - (a.rowCount ?? 0)
  );
}

/**
 * The overview a prompt starts from: the named schema's tables, or the
 * default schema's (as list_tables and the schema resource).
 */
export async function promptOverview(
  deps: FeatureDeps,
  { args, resolved, ctx }: RenderInput<{ readonly schema?: string }>,
  maxTables: number,
): Promise<SchemaOverview> {
  const scope = await scopeOf(deps, ctx, resolved, args.schema);
  return await readOverview(deps, ctx, resolved, maxTables, scope.schema);
}

// Words of a question that name nothing: never searched.
const STOP_WORDS = new Set(
  ("the and for with how many much what which who whom whose are was were " +
    "per each from that this these those have has had did does show list " +
    "give find top all any last first into over under than then there " +
    "their them they when where why will would should could can may might " +
    "not but get got make made let use used using about between during " +
    "most more less least only also just out our your you its it's")
    .split(" "),
);

/**
 * The words of a question worth searching the catalog for: at least three
 * letters, not a stop word, and a plural's singular as well ("customers"
 * finds a table named customer).
 */
export function questionWords(text: string): string[] {
  const words = new Set<string>();
  for (const word of text.toLowerCase().split(/[^\p{L}\p{N}_$]+/u)) {
    if (word.length < 3 || STOP_WORDS.has(word)) continue;
    words.add(word);
    if (word.length > 4 && word.endsWith("ies")) {
      words.add(`${word.slice(0, -3)}y`);
    } else if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) {
      words.add(word.slice(0, -1));
    }
  }
  return [...words].slice(0, MAX_SEARCH_WORDS);
}

/**
 * The tables a text is about: `first` (each once), then those whose names or
 * columns match its words (search_schema's ranking, in every schema unless
 * one is named), then, to make up `max` when `fill` says so, the largest.
 */
export async function relevantTables(
  deps: FeatureDeps,
  input: RenderInput<{ readonly schema?: string }>,
  text: string,
  max: number,
  fill: "largest" | "none",
  first: readonly TableKey[] = [],
): Promise<TableKey[]> {
  const { args, resolved, ctx } = input;
  const found: TableKey[] = [];
  const seen = new Set<string>();
  const add = (table: TableKey) => {
    const key = JSON.stringify([table.schema, table.name]);
    if (seen.has(key) || found.length >= max) return;
    seen.add(key);
    found.push(table);
  };
  for (const table of first) add(table);
  const words = questionWords(text);
  if (words.length > 0 && found.length < max) {
    const result = await resolved.driver.searchSchema({
      ...catalogCall(deps, ctx),
      words,
      kinds: ["table", "view", "column"],
      limit: 200,
      ...(args.schema === undefined ? {} : { schema: args.schema }),
    }).catch((error) => rethrow(error, resolved.label));
    for (const match of result.matches) {
      add({ schema: match.schema, name: match.table });
    }
  }
  if (fill === "largest" && found.length < max) {
    for (const table of await tablesBySize(deps, input)) add(table);
  }
  return found;
}

/** Describe `table`, or fail with `not_found` naming it. */
export async function describeOrFail(
  deps: FeatureDeps,
  table: string,
  { args, resolved, ctx }: RenderInput<{ readonly schema?: string }>,
): Promise<TableDetail> {
  const detail = await resolved.driver.describeTable(table, {
    ...catalogCall(deps, ctx),
    ...(args.schema === undefined ? {} : { schema: args.schema }),
  }).catch((error) => rethrow(error, resolved.label));
  if (detail === null) {
    throw new ToolFailure(
      "not_found",
      noSuchTable(table, args.schema, resolved.label),
    );
  }
  return detail;
}
