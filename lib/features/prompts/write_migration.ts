/**
 * `write_migration`: a schema change planned with its rollback and a
 * verification query.
 *
 * @module
 */

import type { PromptEntry } from "../catalog.ts";
import type { FeatureDeps } from "../deps.ts";
import { definePrompt } from "./define.ts";
import {
  blockquote,
  describeOrFail,
  promptOverview,
  relevantTables,
  SCHEMA,
  schemaSection,
  textArgument,
} from "./shared.ts";
import { details, structure } from "./structure.ts";

/** The `write_migration` prompt. */
export function writeMigrationPrompt(deps: FeatureDeps): PromptEntry {
  return definePrompt(deps, {
    name: "write_migration",
    title: "Write a migration",
    description:
      "Plan a schema change: the migration, its rollback and a verification query, from the live structure and the connection's Safe Mode.",
    arguments: [
      textArgument(
        "change",
        "Change",
        "The change you want, in words.",
        true,
      ),
      textArgument(
        "table",
        "Table",
        "The table the change is about, if one.",
        false,
      ),
      SCHEMA,
    ],
    async render({ args, resolved, ctx }) {
      const input = { args, resolved, ctx };
      const all = await promptOverview(deps, input, 150);
      // The named table and the tables its foreign keys reach come first,
      // then those whose names or columns the change mentions.
      const named = args.table === undefined
        ? null
        : await describeOrFail(deps, args.table, input);
      const namedAndNeighbours = named === null ? [] : [
        { schema: named.schema, name: named.name },
        ...named.foreignKeys.map((key) => ({
          schema: key.referencedSchema,
          name: key.referencedTable,
        })),
      ];
      const targets = await relevantTables(
        deps,
        input,
        args.change,
        6,
        "none",
        namedAndNeighbours,
      );
      const detailed = await details(deps, ctx, resolved, targets, 6);
      return [
        `Write a migration for the connection ${resolved.label}:`,
        "",
        blockquote(args.change),
        "",
        ...(await schemaSection(deps, { resolved, ctx }, all)),
        "",
        "## Full structure of the tables it touches",
        ...(detailed.length === 0
          ? ["(no existing table is named; it may create new ones)"]
          : detailed.map(structure)),
        "",
        "## What to write",
        "1. The forward migration: statements in this engine's dialect, in order, each safe to run on a live database (say which ones lock or rewrite a table, and how long that may take).",
        "2. The rollback that undoes it, and what data a rollback cannot bring back.",
        "3. A read-only verification query that proves the change landed.",
        "Do not run anything: the user approves each write (Safe Mode above), and drops need confirm_destructive_operation.",
      ].join("\n");
    },
  });
}
