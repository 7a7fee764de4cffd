/**
 * The prompts: database work rendered server-side from the live schema into
 * one user message (issue 7). Each takes a `connection` (name or id) and has
 * its own file, as each tool has.
 *
 * @module
 */

import type { PromptEntry } from "../catalog.ts";
import type { FeatureDeps } from "../deps.ts";
import { explainSchemaPrompt } from "./explain_schema.ts";
import { explainTablePrompt } from "./explain_table.ts";
import { questionToSqlPrompt } from "./question_to_sql.ts";
import { reviewQueryPrompt } from "./review_query.ts";
import { writeMigrationPrompt } from "./write_migration.ts";

/** Every prompt over the server's connections, in the order they are listed. */
export function databasePrompts(deps: FeatureDeps): PromptEntry[] {
  return [
    explainSchemaPrompt(deps),
    explainTablePrompt(deps),
    questionToSqlPrompt(deps),
    reviewQueryPrompt(deps),
    writeMigrationPrompt(deps),
  ];
}
