/**
 * What PostgreSQL's catalog says about the functions a read would run: a
 * read may call only functions the catalog marks `IMMUTABLE` or `STABLE`
 * (PostgreSQL itself refuses non-SELECT commands inside those) plus a short
 * list of harmless volatile ones. Every other volatile function, operator
 * or cast function — user-defined ones included — makes the statement a
 * write; functions that reach files, code or other hosts are refused by
 * name. Views and row-security policies the statement reads are followed:
 * their definitions are parsed as the statement was (docs/security.md
 * "Reads on PostgreSQL").
 *
 * Nothing here is cached: a function replaced since the last call is always
 * looked up again.
 *
 * @module
 */

import type { Tier } from "./classifier.ts";
import {
  PG_DENIED_RELATIONS,
  PG_HARMLESS_VOLATILE,
  reachesOutside,
} from "./classifier_words.ts";
import { parsePostgres, type PgAnalysis, type PgName } from "./pg_parse.ts";

/** Runs one catalog statement with parameters. */
export type CatalogExec = (
  text: string,
  params: unknown[],
) => Promise<Record<string, unknown>[]>;

/** The catalog's verdict on a read. */
export interface PgVetting {
  tier: Tier;
  /** Set when the statement reaches files, code or other hosts. */
  reach: string | null;
  /** Why a read became a write, for the caller's message. */
  why: string | null;
}

const LOOKUP = `
SELECT 'f' AS kind, n.nspname AS schema, p.proname AS name, p.provolatile AS volatility, l.lanname AS language,
       CASE WHEN n.nspname = 'pg_catalog' THEN NULL ELSE p.prosrc END AS body, p.prosecdef AS definer
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
 WHERE p.proname = ANY($1::text[]) AND (p.provolatile = 'v' OR n.nspname <> 'pg_catalog')
UNION ALL
SELECT 'o', n.nspname, p.proname, p.provolatile, l.lanname,
       CASE WHEN n.nspname = 'pg_catalog' THEN NULL ELSE p.prosrc END, p.prosecdef
  FROM pg_operator o JOIN pg_proc p ON p.oid = o.oprcode
  JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
 WHERE o.oprname = ANY($2::text[]) AND (p.provolatile = 'v' OR n.nspname <> 'pg_catalog')
UNION ALL
SELECT 'c', n.nspname, p.proname, p.provolatile, l.lanname,
       CASE WHEN n.nspname = 'pg_catalog' THEN NULL ELSE p.prosrc END, p.prosecdef
  FROM pg_cast c JOIN pg_type t ON t.oid = c.casttarget JOIN pg_proc p ON p.oid = c.castfunc
  JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
 WHERE t.typname = ANY($3::text[]) AND (p.provolatile = 'v' OR n.nspname <> 'pg_catalog')
UNION ALL
SELECT 'v', n.nspname, c.relname, NULL, NULL, pg_get_viewdef(c.oid), NULL
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind = 'v' AND c.relname = ANY($4::text[])
   AND n.nspname NOT IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT 'p', n.nspname, c.relname, NULL, NULL, pg_get_expr(p.polqual, p.polrelid), NULL
  FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relname = ANY($4::text[]) AND p.polqual IS NOT NULL`;

/** How deep views of views are followed before the read counts as a write. */
const MAX_DEPTH = 8;

/** A name's own reach, by the deny lists; null when it has none. */
export function deniedFunction(name: string): string | null {
  if (reachesOutside(name.toUpperCase(), true)) {
    return `${name.toLowerCase()}() reaches files, code, other hosts or SQL text`;
  }
  return null;
}

/** The reach of what a parsed statement names by itself (no catalog needed). */
export function namedReach(analysis: PgAnalysis): string | null {
  if (analysis.reach !== null) return analysis.reach;
  for (const fn of analysis.functions) {
    const reach = deniedFunction(fn.name);
    if (reach !== null) return reach;
  }
  for (const relation of analysis.relations) {
    if (PG_DENIED_RELATIONS.has(relation.name.toUpperCase())) {
      return `${relation.name} shows the server's files or configuration`;
    }
  }
  return null;
}

/** Ask the catalog about everything `analysis` names, following views. */
export async function vetPostgresRead(
  exec: CatalogExec,
  analysis: PgAnalysis,
): Promise<PgVetting> {
  const seen = { functions: new Set<string>(), relations: new Set<string>() };
  let pending = analysis;
  for (let depth = 0;; depth++) {
    const reach = namedReach(pending);
    if (reach !== null) return { tier: "write", reach, why: reach };
    if (depth >= MAX_DEPTH) {
      return {
        tier: "write",
        reach: null,
        why: `views nest deeper than ${MAX_DEPTH} levels`,
      };
    }
    const functions = fresh(pending.functions, seen.functions);
    const relations = fresh(pending.relations, seen.relations);
    // Nothing (more) to ask: no round trip at all.
    if (
      functions.length === 0 && relations.length === 0 &&
      pending.operators.length === 0 && pending.castTypes.length === 0
    ) return { tier: "read", reach: null, why: null };
    const rows = await exec(LOOKUP, [
      arrayLiteral(functions),
      arrayLiteral([...new Set(pending.operators)]),
      arrayLiteral([...new Set(pending.castTypes)]),
      arrayLiteral(relations),
    ]);
    const next: PgAnalysis = emptyAnalysis();
    for (const row of rows) {
      const kind = String(row.kind);
      if (kind === "v" || kind === "p") {
        const found = await definitionOf(kind, String(row.body ?? ""));
        if (found === null) {
          return {
            tier: "write",
            reach: null,
            why: `the ${kind === "v" ? "view" : "policy of"} ${
              String(row.schema)
            }.${String(row.name)} could not be read`,
          };
        }
        merge(next, found);
        continue;
      }
      const verdict = functionVerdict(row);
      if (verdict !== null) return verdict;
    }
    // What the views and policies name is looked up in the next round.
    pending = next;
  }
}

/** What one catalog row about a function means for a read; null when harmless. */
function functionVerdict(row: Record<string, unknown>): PgVetting | null {
  const schema = String(row.schema);
  const name = String(row.name);
  const qualified = `${schema}.${name}`;
  const reach = deniedFunction(name);
  if (reach !== null) return { tier: "write", reach, why: reach };
  const builtin = schema === "pg_catalog";
  if (row.volatility === "v") {
    if (builtin && PG_HARMLESS_VOLATILE.has(name.toUpperCase())) return null;
    return {
      tier: "write",
      reach: null,
      why: `${qualified}() is VOLATILE, so it may change data`,
    };
  }
  if (builtin) return null;
  if (row.definer === true) {
    // It runs with its owner's privileges, which an AI login cannot limit.
    return {
      tier: "write",
      reach: null,
      why: `${qualified}() is SECURITY DEFINER: it runs as its owner`,
    };
  }
  const language = String(row.language);
  if (language !== "sql" && language !== "plpgsql") {
    return {
      tier: "write",
      reach: null,
      why: `${qualified}() runs code in language ${language}`,
    };
  }
  const body = String(row.body ?? "");
  for (const match of body.matchAll(/[A-Za-z_][A-Za-z0-9_$]*/g)) {
    const word = match[0];
    const denied = deniedFunction(word);
    if (denied !== null) {
      return {
        tier: "write",
        reach: `${qualified}() calls ${word.toLowerCase()}()`,
        why: denied,
      };
    }
    if (/^(EXECUTE|COPY|PERFORM)$/i.test(word) && language === "plpgsql") {
      return {
        tier: "write",
        reach: null,
        why:
          `${qualified}() runs dynamic SQL or commands (${word.toUpperCase()})`,
      };
    }
  }
  return null;
}

/** A view's definition or a policy's expression, parsed like the statement. */
async function definitionOf(
  kind: "v" | "p",
  text: string,
): Promise<PgAnalysis | null> {
  const sql = kind === "v" ? text : `SELECT ${text}`;
  const parsed = await parsePostgres(sql);
  if (!parsed.ok || parsed.analysis === null) return null;
  return parsed.analysis.tier === "read" ? parsed.analysis : null;
}

function emptyAnalysis(): PgAnalysis {
  return {
    tier: "read",
    dangerous: false,
    reach: null,
    functions: [],
    operators: [],
    castTypes: [],
    relations: [],
  };
}

function merge(into: PgAnalysis, from: PgAnalysis): void {
  into.reach ??= from.reach;
  into.functions.push(...from.functions);
  into.operators.push(...from.operators);
  into.castTypes.push(...from.castTypes);
  into.relations.push(...from.relations);
}

/** A text[] literal: every element quoted, `"` and `\` escaped. */
function arrayLiteral(items: readonly string[]): string {
  return `{${
    items.map((item) =>
      `"${item.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`
    )
      .join(",")
  }}`;
}

/** Names not looked up yet, remembered as seen. */
function fresh(list: readonly PgName[], seen: Set<string>): string[] {
  const out: string[] = [];
  for (const { name } of list) {
    if (seen.has(name)) continue;
    seen.add(name);
    out.push(name);
  }
  return out;
}
