/**
 * `review_query`: a statement reviewed against the live schema — correctness,
 * cost, risk — with dbport's own verdict on it.
 *
 * @module
 */

import { classify } from "../../db/sql/classifier.ts";
import type { PromptEntry } from "../catalog.ts";
import type { FeatureDeps } from "../deps.ts";
import { definePrompt } from "./define.ts";
import {
  QUERY_ECHO_LIMIT,
  SCHEMA,
  tableNames,
  textArgument,
} from "./shared.ts";
import { details, header, mentioned, quoted, structure } from "./structure.ts";

/** The `review_query` prompt. */
export function reviewQueryPrompt(deps: FeatureDeps): PromptEntry {
  return definePrompt(deps, {
    name: "review_query",
    title: "Review a query",
    description:
      "Review a SQL statement against the live schema: correctness, then cost, then risk.",
    arguments: [
      textArgument("query", "Query", "The SQL statement to review.", true),
      SCHEMA,
    ],
    async render({ args, resolved, ctx }) {
      const { query } = args;
      ctx.record?.({ sql: query });
      const names = await tableNames(deps, { args, resolved, ctx });
      const referenced = await details(
        deps,
        ctx,
        resolved,
        mentioned(query, names),
        12,
      );
      const verdict = classify(query, resolved.connection.engine);
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
  });
}
