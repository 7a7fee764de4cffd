/**
 * One function a PostgreSQL statement reaches, judged (pg_vet.ts): a
 * built-in by the allowlists, a user function by its owner's choices (its
 * language, SECURITY DEFINER, its SET items) and, for a SQL function, by
 * the body it runs, which is read next.
 *
 * @module
 */

import { parseBody, type PgAnalysis } from "./pg_parse.ts";
import { allowlisted, writeAllowlisted } from "./allowlist.ts";
import { configuredPath } from "./search_path.ts";
import { configRefusal } from "../pg_settings.ts";
import {
  deniedFunction,
  functionRefusal,
  internalCode,
  pastDatabase,
  refusedSymbol,
} from "./pg_vet_functions.ts";
import { definesInCatalog, definingKind, mergedBody } from "./pg_vet_bodies.ts";
import type { Findings } from "./pg_vet_findings.ts";

type Row = Record<string, unknown>;

/** A text to parse: a statement, or a function body with its context. */
export interface Source {
  analysis: PgAnalysis;
  owner: number | undefined;
  path: string[] | null | undefined;
}

/** `nextval(regclass)`. */
const NEXTVAL = 1574;

/** A reached function's row, as `judgeFunction`'s steps read it. */
interface Reached {
  row: Row;
  oid: number;
  /** How it runs (vet_sql.ts `how`: `e`, `d` or `t`). */
  how: string;
  /** The user function whose body calls it, if any. */
  via: number | null;
  /** Its signature. */
  name: string;
  /** Where it is called, for the messages: "" or " (called in f(int))". */
  inside: string;
}

/**
 * One reached function: acceptable, refused (recorded in `found`), or a
 * string-bodied SQL function whose body is read next.
 */
export async function judgeFunction(
  row: Row,
  found: Findings,
): Promise<Source | null> {
  const name = String(row.signature ?? `${String(row.name)}()`);
  const reached: Reached = {
    row,
    oid: Number(row.oid),
    how: String(row.how),
    via: row.via === null ? null : Number(row.via),
    name,
    inside: row.caller === null ? "" : ` (called in ${String(row.caller)})`,
  };
  // A built-in's C symbol, which no ALTER renames or moves (outsider
  // stop 55: pg_read_file renamed to a55_alias read files as a write).
  const symbolReach = refusedSymbol(row.symbol);
  if (symbolReach !== null) {
    found.failReach(reached.how, `${name} ${symbolReach}${reached.inside}`);
    return null;
  }
  if (row.builtin === true) {
    judgeBuiltin(reached, found);
    return null;
  }
  if (!judgeUserFunction(reached, found)) return null;
  // Only a SQL body is read: any other language was refused above.
  if (row.language !== "sql") return null;
  return await readSqlBody(reached, found);
}

/** A built-in function reached: on an allowlist, or refused. */
function judgeBuiltin(reached: Reached, found: Findings): void {
  const { row, oid, how, via, inside } = reached;
  if (row.name === "set_config") found.setting ??= "set_config()";
  if (via === null && how === "e") found.builtins.add(String(row.name));
  if (allowlisted(oid)) return;
  const reach = deniedFunction(String(row.name)) ??
    (writeAllowlisted(oid) ? null : pastDatabase(String(row.name)));
  if (reach !== null) {
    found.failReach(how, `${reach}${inside}`);
    return;
  }
  // A serial column's own default: the one effect a dry run may leave is
  // a skipped sequence value, as any rolled-back INSERT leaves one.
  // (Reached through a foreign key's cascade it is `t`: the child's.)
  if ((how === "d" || how === "t") && oid === NEXTVAL) return;
  // The planner folds only IMMUTABLE (and, estimating, STABLE) functions;
  // a built-in's label is set by PostgreSQL itself. Inside a user
  // function's body it runs when the planner folds that function.
  const planner = row.volatility !== "v" || row.language === "sql" ||
    via !== null;
  found.fail(
    how,
    `${
      String(row.name)
    }() is not on dbport's allowlist of built-in functions that only compute a result`,
    planner,
  );
}

/**
 * A user function reached: noted (its name, its caller), and refused for
 * what its definition says. False when nothing more is to be read of it.
 */
function judgeUserFunction(reached: Reached, found: Findings): boolean {
  const { row, oid, how, via, name, inside } = reached;
  found.names.set(oid, name);
  if (via !== null) {
    const callees = found.calls.get(via) ?? new Set<number>();
    callees.add(oid);
    found.calls.set(via, callees);
  }
  // A user's LANGUAGE internal function runs a built-in's code: only one a
  // token may call (outsider stop 56: an admin's alias of
  // pg_terminate_backend in another schema ended sessions).
  const runs = internalCode(row);
  if (runs !== null) {
    found.failReach(how, `${name} ${runs}${inside}`);
    return false;
  }
  const refusal = functionRefusal(row, name);
  if (refusal !== null) found.fail(how, `${refusal}${inside}`, true);
  // Its SET items apply at each call, before the server reads its body:
  // checked as a SET statement is (pg_settings.ts), whenever it was made.
  const settings = configRefusal(row.config);
  if (settings !== null) found.failReach(how, `${name} ${settings}${inside}`);
  return true;
}

/**
 * A SQL function's body, read once: refused for what it reaches or writes,
 * and returned for its names to be looked up (null when already read, or
 * none).
 */
async function readSqlBody(
  reached: Reached,
  found: Findings,
): Promise<Source | null> {
  const { row, oid, how, via, name, inside } = reached;
  const path = configuredPath(row.config as string[] | null) ??
    (via === null ? null : found.paths.get(via) ?? null);
  if (!found.paths.has(oid)) found.paths.set(oid, path);
  if (row.source === null || found.bodies.has(oid)) return null;
  found.bodies.add(oid);
  // The body is read whatever else refused the function (SECURITY DEFINER,
  // a write): what it reaches is refused to every token, what it reads of a
  // credential catalog to every AI client (outsider stop 54).
  const body = await parseBody(String(row.source));
  if (!body.ok) {
    // A body the server accepts and dbport's parser does not (a newer
    // grammar's keyword, `system_user`, as a name) may run anything.
    found.failReach(
      how,
      `the body of ${name} could not be read by dbport's parser (${body.message}): it may reach anything, so it is refused${inside}`,
    );
    return null;
  }
  const merged = mergedBody(body.statements);
  if (body.statements.some((st) => st.kinds.includes("VariableSetStmt"))) {
    found.setting ??= name;
  }
  const defining = definingKind(body.statements);
  if (defining !== null) {
    found.defines ??= `${name} runs ${defining.replace(/Stmt$/, "")}`;
  }
  merged.reach ??= definesInCatalog(body.statements, path);
  if (merged.tier === "destructive") {
    const kind = body.statements.find((s) => s.tier === "destructive")!
      .kinds[0]!;
    found.destroys ??= `${name} runs ${
      kind === "AlterTableStmt"
        ? "ALTER TABLE ... DROP"
        : kind.replace(/Stmt$/, "").toUpperCase()
    } in its body`;
  }
  if (merged.reach !== null) found.reach ??= `${name} ${merged.reach}`;
  if (merged.reach !== null || merged.tier !== "read") {
    found.fail(
      how,
      `${name} ${
        merged.reach ?? "changes data (its body is not only SELECTs)"
      }`,
      true,
    );
  }
  // Its names are looked up even when it is already refused: a function it
  // calls, a table it writes may reach further.
  return { analysis: merged, owner: oid, path };
}
