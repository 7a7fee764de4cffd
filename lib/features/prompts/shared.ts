/**
 * What several prompts share: their common arguments and the reads that
 * pick the tables a prompt shows.
 *
 * @module
 */

import { ENGINES, schemaWords } from "../../db/engines.ts";
import { noSuchTable } from "../../db/errors.ts";
import type {
  TableColumns,
  TableDetail,
  TableSummary,
} from "../../db/types.ts";
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

/** Tables ordered by engine row statistics, largest first. */
export async function tablesBySize(
  deps: FeatureDeps,
  { args, resolved, ctx }: RenderInput<{ readonly schema?: string }>,
): Promise<TableSummary[]> {
  const tables = await resolved.driver.listTables({
    ...catalogCall(deps, ctx),
    // Without statistics, counting every table could take long.
    rowCounts: ENGINES[resolved.driver.engine].rowCountsAreEstimates,
    ...(args.schema === undefined ? {} : { schema: args.schema }),
  }).catch((error) => rethrow(error, resolved.label));
  return tables.filter((table) => table.type !== "view").sort((a, b) =>
    (b.rowCount ?? 0) - (a.rowCount ?? 0)
  );
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
