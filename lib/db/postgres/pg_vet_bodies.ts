/**
 * A SQL function's body as the vetting reads it (pg_vet.ts): its statements
 * merged into one, whether it defines objects in a catalog schema first on
 * its own search path, and cycles of SQL functions calling each other.
 *
 * @module
 */

import type { PgAnalysis } from "./pg_parse.ts";
import { namedReach } from "./pg_vet_functions.ts";

/** Statements no event trigger fires on. */
export const PLAIN = new Set([
  "SelectStmt",
  "InsertStmt",
  "UpdateStmt",
  "DeleteStmt",
  "MergeStmt",
  "ExplainStmt",
]);

/**
 * Why a body whose own `SET search_path` puts a catalog schema first
 * defines or changes objects there, or null: an unqualified `CREATE OR
 * REPLACE FUNCTION upper(text)` would replace the built-in, keeping the OID
 * the allowlist trusts (outsider stop 55's rename, by another road).
 */
export function definesInCatalog(
  statements: PgAnalysis[],
  path: string[] | null,
): string | null {
  const first = path?.[0];
  if (
    first === undefined ||
    !(first === "information_schema" ||
      (first.startsWith("pg_") && !/^pg_temp(_[0-9]+)?$/.test(first)))
  ) return null;
  const kind = statements.map((statement) => statement.kinds[0] ?? "")
    .find((kind) => !PLAIN.has(kind) && kind !== "VariableShowStmt");
  if (kind === undefined) return null;
  return `runs ${
    kind.replace(/Stmt$/, "")
  } with ${first} first on its search path: it may change the server's own catalogs; dbport changes the database's own objects only`;
}

/**
 * A body's statements as one: names of all, the highest tier (a DROP or
 * TRUNCATE in it makes calling the function destructive, pg_vet.ts).
 */
export function mergedBody(statements: PgAnalysis[]): PgAnalysis {
  const merged: PgAnalysis = {
    tier: "read",
    dangerous: false,
    reach: null,
    functions: [],
    operators: [],
    castTypes: [],
    relations: [],
    targets: [],
    kinds: [],
  };
  for (const statement of statements) {
    if (statement.tier === "destructive") merged.tier = "destructive";
    else if (statement.tier !== "read" || statement.plansOnly) {
      if (merged.tier === "read") merged.tier = "write";
    }
    merged.reach ??= namedReach(statement);
    merged.functions.push(...statement.functions);
    merged.operators.push(...statement.operators);
    merged.castTypes.push(...statement.castTypes);
    merged.relations.push(...statement.relations);
    merged.targets.push(...statement.targets);
    if (statement.changes !== undefined) {
      (merged.changes ??= []).push(...statement.changes);
    }
    if (statement.opclasses !== undefined) {
      (merged.opclasses ??= []).push(...statement.opclasses);
    }
  }
  return merged;
}

/** A cycle among user SQL functions, in words; null when none. */
export function cycleOf(
  calls: Map<number, Set<number>>,
  names: Map<number, string>,
): string | null {
  const state = new Map<number, "open" | "done">();
  const visit = (oid: number): boolean => {
    if (state.get(oid) === "open") return true;
    if (state.get(oid) === "done") return false;
    state.set(oid, "open");
    for (const callee of calls.get(oid) ?? []) if (visit(callee)) return true;
    state.set(oid, "done");
    return false;
  };
  for (const oid of calls.keys()) {
    if (visit(oid)) {
      return `${
        names.get(oid) ?? `function ${oid}`
      } is part of a cycle of SQL functions calling each other`;
    }
  }
  return null;
}
