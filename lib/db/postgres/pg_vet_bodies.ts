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
 * Whether a schema is one of the server's own (pg_catalog, pg_toast, ...);
 * a session's temporary schema (pg_temp) is the database's.
 */
function catalogSchema(schema: string): boolean {
  return schema === "information_schema" ||
    (schema.startsWith("pg_") && !/^pg_temp(_[0-9]+)?$/.test(schema));
}

/** Statements that define no object, beside PLAIN: SHOW and SET. */
const SETTINGS = new Set(["VariableShowStmt", "VariableSetStmt"]);

/**
 * The kind of a body's first statement that defines or changes objects
 * (not a plain read or write, not SHOW or SET), or null when none does.
 */
export function definingKind(statements: PgAnalysis[]): string | null {
  return statements.map((statement) => statement.kinds[0] ?? "")
    .find((kind) => !PLAIN.has(kind) && !SETTINGS.has(kind)) ?? null;
}

/**
 * Why a body whose own `SET search_path` names a catalog schema defines or
 * changes objects there, or null: an unqualified `CREATE OR REPLACE
 * FUNCTION upper(text)` would replace the built-in, keeping the OID the
 * allowlist trusts (outsider stop 55's rename, by another road). Anywhere
 * on the path, not only first: the server creates an unqualified name in
 * the first schema of the path that exists, and `"$user"`, a dropped or a
 * misspelt schema before pg_catalog do not (the body may drop one itself).
 */
export function definesInCatalog(
  statements: PgAnalysis[],
  path: string[] | null,
): string | null {
  const catalog = path?.find(catalogSchema);
  if (catalog === undefined) return null;
  const kind = definingKind(statements);
  if (kind === null) return null;
  return `runs ${
    kind.replace(/Stmt$/, "")
  } with ${catalog} on its search path (an unqualified name is created in the path's first schema that exists): it may change the server's own catalogs; dbport changes the database's own objects only`;
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
