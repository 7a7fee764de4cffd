/**
 * `explain_schema`: a guided tour of a connection's schema from the live
 * catalog, for a chosen audience.
 *
 * @module
 */

import type { PromptEntry } from "../catalog.ts";
import type { FeatureDeps } from "../deps.ts";
import { definePrompt } from "./define.ts";
import {
  AUDIENCE,
  AUDIENCES,
  promptOverview,
  SCHEMA,
  schemaSection,
  tablesBySize,
} from "./shared.ts";
import { details, structure } from "./structure.ts";

/** The `explain_schema` prompt. */
export function explainSchemaPrompt(deps: FeatureDeps): PromptEntry {
  return definePrompt(deps, {
    name: "explain_schema",
    title: "Explain the schema",
    description:
      "A guided tour of a connection's schema: what the tables hold and how they relate, from the live catalog.",
    arguments: [SCHEMA, AUDIENCE],
    async render({ args, resolved, ctx }) {
      const all = await promptOverview(deps, { args, resolved, ctx }, 200);
      const sized = await tablesBySize(deps, { args, resolved, ctx });
      const detailed = await details(deps, ctx, resolved, sized, 8);
      return [
        `Explain the schema of the database connection ${resolved.label} to ${
          AUDIENCES[args.audience]
        }.`,
        "",
        ...(await schemaSection(deps, { resolved, ctx }, all)),
        "",
        `## Full structure of the ${detailed.length} largest tables`,
        ...detailed.map(structure),
        "",
        "## What to write",
        "Give a guided tour: group the tables by what they are about, say what one row of each main table means, explain how they join (foreign keys, and naming where keys are missing), and point out anything surprising. Use only the tables and columns above; if something cannot be told from the structure, say so instead of guessing.",
      ].join("\n");
    },
  });
}
