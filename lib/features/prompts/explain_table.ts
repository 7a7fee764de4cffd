/**
 * `explain_table`: one table explained from its live structure, with three
 * worthwhile queries.
 *
 * @module
 */

import type { PromptEntry } from "../catalog.ts";
import type { FeatureDeps } from "../deps.ts";
import { definePrompt } from "./define.ts";
import {
  AUDIENCE,
  AUDIENCES,
  describeOrFail,
  SCHEMA,
  TABLE,
} from "./shared.ts";
import { details, header, structure } from "./structure.ts";

/** The `explain_table` prompt. */
export function explainTablePrompt(deps: FeatureDeps): PromptEntry {
  return definePrompt(deps, {
    name: "explain_table",
    title: "Explain a table",
    description:
      "One table explained from its live structure (columns, keys, indexes, DDL), with three worthwhile queries.",
    arguments: [TABLE, SCHEMA, AUDIENCE],
    async render({ args, resolved, ctx }) {
      const found = await describeOrFail(deps, args.table, {
        args,
        resolved,
        ctx,
      });
      const neighbours = found.foreignKeys.map((key) => ({
        schema: key.referencedSchema,
        name: key.referencedTable,
      })).filter((t) => t.name !== found.name);
      const related = await details(deps, ctx, resolved, neighbours, 4);
      return [
        `Explain the table ${found.schema}.${found.name} of the connection ${resolved.label} to ${
          AUDIENCES[args.audience]
        }.`,
        "",
        await header(deps, ctx, resolved),
        "",
        "## The table",
        structure(found),
        ...(related.length === 0
          ? []
          : ["", "## Tables it references", ...related.map(structure)]),
        "",
        "## What to write",
        "Explain what one row means, what each column holds (and what its type and constraints imply), how the table relates to others, and what its indexes make fast. End with three worthwhile read-only queries against it, each with a sentence on what it answers, using only the columns above and a LIMIT.",
      ].join("\n");
    },
  });
}
