/**
 * `question_to_sql`: a question turned into one SQL statement, grounded in
 * the tables it mentions.
 *
 * @module
 */

import type { PromptEntry } from "../catalog.ts";
import type { FeatureDeps } from "../deps.ts";
import { definePrompt } from "./define.ts";
import {
  blockquote,
  promptOverview,
  relevantTables,
  SCHEMA,
  schemaSection,
  textArgument,
} from "./shared.ts";
import { details, structure } from "./structure.ts";

/** The `question_to_sql` prompt. */
export function questionToSqlPrompt(deps: FeatureDeps): PromptEntry {
  return definePrompt(deps, {
    name: "question_to_sql",
    title: "Question to SQL",
    description:
      "Turn a question into one SQL statement for this connection, grounded in the live schema.",
    arguments: [
      textArgument(
        "question",
        "Question",
        "What you want to know, in words.",
        true,
      ),
      SCHEMA,
    ],
    async render({ args, resolved, ctx }) {
      const input = { args, resolved, ctx };
      const all = await promptOverview(deps, input, 150);
      const relevant = await relevantTables(
        deps,
        input,
        args.question,
        6,
        "largest",
      );
      const detailed = await details(deps, ctx, resolved, relevant, 6);
      return [
        `Write one SQL statement that answers this question on the connection ${resolved.label}:`,
        "",
        blockquote(args.question),
        "",
        ...(await schemaSection(deps, { resolved, ctx }, all)),
        "",
        "## Full structure of the tables that look relevant",
        ...detailed.map(structure),
        "",
        "## Rules",
        "- Use only tables and columns listed above; never invent one. If the schema cannot answer the question, say which data is missing.",
        "- One read-only statement (SELECT / WITH … SELECT), in this engine's dialect, with a LIMIT (100 unless the question needs fewer).",
        "- Qualify columns when joining; join on the foreign keys shown.",
        "- Explain in two sentences how the query answers the question, then run it with execute_query.",
      ].join("\n");
    },
  });
}
