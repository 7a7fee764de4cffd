/**
 * The prompts: database work rendered server-side from the live schema into
 * one user message (issue 7). Each takes a `connection` (name or id).
 *
 * @module
 */

import { noSuchTable } from "../../db/errors.ts";
import { classify } from "../../db/classifier.ts";
import type { TableSummary } from "../../db/types.ts";
import type { PromptEntry } from "../catalog.ts";
import type { FeatureDeps } from "../deps.ts";
import { readOverview } from "../resources/schema_payload.ts";
import { rethrow, ToolFailure } from "../tools/failure.ts";
import {
  definePrompt,
  type PromptArgument,
  type RenderInput,
} from "./define.ts";
import {
  details,
  header,
  inventory,
  mentioned,
  quoted,
  structure,
} from "./structure.ts";

const SCHEMA: PromptArgument = {
  name: "schema",
  title: "Schema",
  description:
    "Only this schema (PostgreSQL), database (MySQL) or attached database (SQLite).",
  required: false,
};

const AUDIENCE: PromptArgument = {
  name: "audience",
  title: "Audience",
  description: "Who the explanation is for.",
  required: false,
  choices: ["newcomer", "analyst", "engineer"],
};

const TABLE: PromptArgument = textArgument(
  "table",
  "Table",
  "The table or view name, as stored.",
  true,
);

const AUDIENCES: Readonly<Record<string, string>> = {
  newcomer:
    "someone new to this database: plain words, what each part is for, no jargon",
  analyst:
    "an analyst: which tables hold which facts, how they join, what to count and filter by",
  engineer:
    "an engineer: keys, constraints, indexes, naming, and structural risks",
};

/** A free-text argument. */
function textArgument(
  name: string,
  title: string,
  description: string,
  required: boolean,
): PromptArgument {
  return { name, title, description, required };
}

/** Query text echoed into a prompt, at most. */
const QUERY_ECHO_LIMIT = 8_000;

/** Every prompt over the server's connections. */
export function databasePrompts(deps: FeatureDeps): PromptEntry[] {
  return [
    definePrompt(deps, {
      name: "explain_schema",
      title: "Explain the schema",
      description:
        "A guided tour of a connection's schema: what the tables hold and how they relate, from the live catalog.",
      arguments: [SCHEMA, AUDIENCE],
      async render({ args, resolved, ctx }: RenderInput) {
        const all = await readOverview(deps, ctx, resolved, 200, args.schema);
        const sized = await tablesBySize(deps, { args, resolved, ctx });
        const detailed = await details(deps, ctx, resolved, sized, 8);
        return [
          `Explain the schema of the database connection ${resolved.label} to ${
            AUDIENCES[args.audience!]
          }.`,
          "",
          await header(deps, ctx, resolved),
          "",
          `## Tables (${all.totalTables})`,
          inventory(all.tables, all.totalTables),
          "",
          `## Full structure of the ${detailed.length} largest tables`,
          ...detailed.map(structure),
          "",
          "## What to write",
          "Give a guided tour: group the tables by what they are about, say what one row of each main table means, explain how they join (foreign keys, and naming where keys are missing), and point out anything surprising. Use only the tables and columns above; if something cannot be told from the structure, say so instead of guessing.",
        ].join("\n");
      },
    }),

    definePrompt(deps, {
      name: "explain_table",
      title: "Explain a table",
      description:
        "One table explained from its live structure (columns, keys, indexes, DDL), with three worthwhile queries.",
      arguments: [TABLE, SCHEMA, AUDIENCE],
      async render({ args, resolved, ctx }) {
        const found = await describeOrFail(deps, { args, resolved, ctx });
        const neighbours = found.foreignKeys.map((key) => ({
          schema: key.referencedSchema,
          name: key.referencedTable,
        })).filter((t) => t.name !== found.name);
        const related = await details(deps, ctx, resolved, neighbours, 4);
        return [
          `Explain the table ${found.schema}.${found.name} of the connection ${resolved.label} to ${
            AUDIENCES[args.audience!]
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
    }),

    definePrompt(deps, {
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
        const all = await readOverview(deps, ctx, resolved, 150, args.schema);
        const relevant = mentioned(args.question!, all.tables);
        const detailed = await details(
          deps,
          ctx,
          resolved,
          relevant.length > 0 ? relevant : all.tables,
          6,
        );
        return [
          `Write one SQL statement that answers this question on the connection ${resolved.label}:`,
          "",
          `> ${
            quoted(args.question!, QUERY_ECHO_LIMIT).replace(/\n/g, "\n> ")
          }`,
          "",
          await header(deps, ctx, resolved),
          "",
          `## Tables (${all.totalTables})`,
          inventory(all.tables, all.totalTables),
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
    }),

    definePrompt(deps, {
      name: "review_query",
      title: "Review a query",
      description:
        "Review a SQL statement against the live schema: correctness, then cost, then risk.",
      arguments: [
        textArgument("query", "Query", "The SQL statement to review.", true),
        SCHEMA,
      ],
      async render({ args, resolved, ctx }) {
        const query = args.query!;
        const all = await readOverview(deps, ctx, resolved, 1_000, args.schema);
        const referenced = await details(
          deps,
          ctx,
          resolved,
          mentioned(query, all.tables),
          12,
        );
        const verdict = classify(query, resolved.connection.driver);
        const kind = !verdict.ok
          ? `dbport cannot run it as it stands: ${verdict.message}`
          : `dbport classifies it as a ${verdict.tier}${
            verdict.dangerous ? " that touches every row (no WHERE)" : ""
          }${
            verdict.reach === null
              ? ""
              : `, reaching outside the database (${verdict.reach}), which external clients may never run`
          }.`;
        return [
          `Review this SQL statement for the connection ${resolved.label}:`,
          "",
          "```sql",
          quoted(query, QUERY_ECHO_LIMIT),
          "```",
          "",
          `- ${kind}`,
          await header(deps, ctx, resolved),
          "",
          "## Tables it references",
          ...(referenced.length === 0
            ? ["(none of the connection's tables is named in it)"]
            : referenced.map(structure)),
          "",
          "## What to write",
          "Review in this order: (1) correctness — does it do what it seems meant to, against these exact columns and types (NULLs, join fan-out, grouping, time zones)? (2) cost — which indexes it can use, full scans, sorts, N+1 patterns; ask for EXPLAIN through execute_query if it helps. (3) risk — locks, writes without a WHERE, what a mistake would destroy. Then give the improved statement.",
        ].join("\n");
      },
    }),

    definePrompt(deps, {
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
        const all = await readOverview(deps, ctx, resolved, 150, args.schema);
        const named = args.table === undefined
          ? []
          : all.tables.filter((table) => table.name === args.table);
        if (args.table !== undefined && named.length === 0) {
          await describeOrFail(deps, { args, resolved, ctx });
        }
        const targets = [
          ...named,
          ...mentioned(args.change!, all.tables).filter((table) =>
            !named.includes(table)
          ),
        ];
        const detailed = await details(deps, ctx, resolved, targets, 6);
        return [
          `Write a migration for the connection ${resolved.label}:`,
          "",
          `> ${quoted(args.change!, QUERY_ECHO_LIMIT).replace(/\n/g, "\n> ")}`,
          "",
          await header(deps, ctx, resolved),
          "",
          `## Tables (${all.totalTables})`,
          inventory(all.tables, all.totalTables),
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
    }),
  ];
}

/** Tables ordered by engine row statistics, largest first. */
async function tablesBySize(
  deps: FeatureDeps,
  { args, resolved, ctx }: RenderInput,
): Promise<TableSummary[]> {
  const tables = await resolved.driver.listTables({
    signal: ctx.signal,
    timeoutMs: deps.settings().queryTimeoutSeconds * 1000,
    // SQLite has no statistics: counting every table could take long.
    rowCounts: resolved.driver.engine !== "sqlite",
    ...(args.schema === undefined ? {} : { schema: args.schema }),
  }).catch((error) => rethrow(error, resolved.label));
  return tables.filter((table) => table.type !== "view").sort((a, b) =>
    (b.rowCount ?? 0) - (a.rowCount ?? 0)
  );
}

/** Describe `args.table`, or fail with `not_found` naming it. */
async function describeOrFail(
  deps: FeatureDeps,
  { args, resolved, ctx }: RenderInput,
) {
  const detail = await resolved.driver.describeTable(args.table!, {
    signal: ctx.signal,
    timeoutMs: deps.settings().queryTimeoutSeconds * 1000,
    ...(args.schema === undefined ? {} : { schema: args.schema }),
  }).catch((error) => rethrow(error, resolved.label));
  if (detail === null) {
    throw new ToolFailure(
      "not_found",
      noSuchTable(args.table!, args.schema, resolved.label),
    );
  }
  return detail;
}
