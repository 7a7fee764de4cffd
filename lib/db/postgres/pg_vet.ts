/**
 * What PostgreSQL's catalog says about everything a statement would run
 * (docs/security.md "What counts as a read on PostgreSQL"). A function label
 * (IMMUTABLE, STABLE) is a claim made by whoever created the function, so it
 * decides nothing here. A statement is a read only if every function it
 * runs — named, behind an operator or a cast, inside a view, a row-security
 * policy, a domain check, a default it evaluates, and inside the bodies of
 * the SQL functions it calls — is either a built-in on dbport's allowlist
 * (postgres/allowlist.json) or a user `LANGUAGE sql` function whose body the
 * same rules accept. Anything else (plpgsql, C, SECURITY DEFINER, a user
 * aggregate, a name that resolves to nothing) makes it a write. Every SQL
 * body is read, even one already refused (SECURITY DEFINER, a write): what it
 * reaches is refused to every token, and a body the parser cannot read is
 * too (it may reach anything). A user aggregate's support functions are
 * followed (vet_sql.ts).
 *
 * The same answer says whether EXPLAIN may plan the statement (planning
 * folds IMMUTABLE functions with constant arguments: it runs them), whether
 * a write may be dry-run (also its targets' triggers, rules and foreign
 * tables), and whether it reads a credential catalog (never an AI read).
 *
 * Names resolve as the server resolves them: every candidate of a name and
 * arity on the search path (the session's, or a function's own `SET
 * search_path`) must be acceptable, an over-approximation of the server's
 * overload choice. One catalog query per level of string-bodied SQL
 * functions; nothing is cached across calls.
 *
 * @module
 */

import type { Tier } from "../sql/classifier.ts";
import type { PgAnalysis, PgName } from "./pg_parse.ts";
import { lockedNonTable } from "./pg_lock_targets.ts";
import { bodiesChange, changedBuiltin } from "./pg_builtin_targets.ts";
import { FIRST_USER_OID, vetStatement } from "./vet_sql.ts";
import {
  deniedFunction,
  namedReach,
  refusedSymbol,
} from "./pg_vet_functions.ts";
import { Findings } from "./pg_vet_findings.ts";
import { judgeFunction, type Source } from "./pg_vet_reached.ts";
import { cycleOf, PLAIN } from "./pg_vet_bodies.ts";

/**
 * Runs catalog statements as one simple query (no parameters) and answers
 * the last one's rows.
 */
export type CatalogExec = (text: string) => Promise<Record<string, unknown>[]>;

/** The catalog's verdict on a statement. */
export interface PgVetting {
  tier: Tier;
  /** Set when the statement reaches files, code or other hosts. */
  reach: string | null;
  /** Why a read became a write, for the caller's message. */
  why: string | null;
  /** Why no AI client may run it at all (a credential catalog). */
  denied: string | null;
  /** Why EXPLAIN may not plan it (planning would run something); null: it may. */
  noPlan: string | null;
  /** Why a write may not be tried and rolled back; null: it may. */
  noDryRun: string | null;
  /**
   * Why a write always asks the user, whatever Safe Mode says: it writes a
   * foreign table, whose rows no count judges (every_row.ts).
   */
  danger?: string | null;
}

/** How deep string-bodied SQL functions are followed. */
const MAX_DEPTH = 8;

/** Statements that run stored expressions without naming them. */
const OPAQUE_STATEMENTS: Readonly<Record<string, string>> = {
  AnalyzeStmt: "ANALYZE evaluates index expressions",
  ClusterStmt: "CLUSTER evaluates index expressions",
  ReindexStmt: "REINDEX evaluates index expressions",
  RefreshMatViewStmt: "REFRESH runs the view's query",
  AlterTableStmt: "ALTER TABLE may evaluate stored checks and expressions",
  AlterDomainStmt: "ALTER DOMAIN checks stored values",
  CreateTrigStmt: "a trigger runs code on later writes",
  CreateEventTrigStmt: "an event trigger runs code",
};

/**
 * DDL that, on a foreign table, changes what it reads: `ALTER TABLE ft ADD
 * COLUMN`, `RENAME [COLUMN]`, `SET SCHEMA` (postgres_fdw reads the remote
 * table and columns of the local names). The parser cannot tell `ALTER TABLE
 * ft` from a table's; the catalog can (outsider stop 55's left-over).
 */
const RETARGETING = new Set([
  "AlterTableStmt",
  "RenameStmt",
  "AlterObjectSchemaStmt",
]);

/** One name to look up, as the query reads it. */
interface Item {
  s: string | null;
  n: string;
  a?: number | null;
  o?: boolean;
  /** Looked up only on a server older than this `server_version_num`. */
  v?: number;
  /** The function whose body names it, if any. */
  w?: number;
  /** The search path its body runs with; absent: the session's. */
  p?: string[];
  i: number;
}

/** The names of one round. */
interface VetInput {
  f: Item[];
  o: Item[];
  c: Item[];
  r: Item[];
  t: Item[];
  /** Operator classes an index, exclusion or partition key names. */
  l: Item[];
}

type Row = Record<string, unknown>;

/** What a statement that names nothing is found to do: nothing. */
const NOTHING_FOUND: Readonly<Findings> = Object.freeze(new Findings());

/** Whether the statement names no function, operator, type or relation. */
function namesNothing(analysis: PgAnalysis): boolean {
  return analysis.functions.length === 0 &&
    analysis.operators.length === 0 && analysis.castTypes.length === 0 &&
    analysis.relations.length === 0 && analysis.targets.length === 0 &&
    (analysis.opclasses?.length ?? 0) === 0;
}

/**
 * The vetting of `analysis` when the catalog has nothing to add — it
 * reaches the file system or runs code, or it names nothing (SELECT 1;
 * DDL always asks, for event triggers) — else null.
 */
export function vetWithoutCatalog(analysis: PgAnalysis): PgVetting | null {
  const reach = namedReach(analysis);
  if (reach !== null) {
    return {
      tier: "write",
      reach,
      why: reach,
      denied: null,
      noPlan: reach,
      noDryRun: reach,
    };
  }
  // A statement that names nothing costs no round trip.
  if (namesNothing(analysis) && PLAIN.has(analysis.kinds[0] ?? "")) {
    return verdict(analysis, NOTHING_FOUND);
  }
  return null;
}

/** Ask the catalog about everything `analysis` runs. */
export async function vetPostgres(
  exec: CatalogExec,
  analysis: PgAnalysis,
): Promise<PgVetting> {
  const local = vetWithoutCatalog(analysis);
  if (local !== null) return local;
  const findings = new Findings();
  const locked = await lockedNonTable(exec, analysis);
  if (locked !== null) findings.reach ??= locked;
  const builtin = await changedBuiltin(exec, analysis.changes ?? [], null);
  if (builtin !== null) findings.reach ??= builtin;
  let input: VetInput | null = inputOf([
    { analysis, owner: undefined, path: undefined },
  ]);
  for (let depth = 0; input !== null; depth++) {
    if (depth >= MAX_DEPTH) {
      findings.fail(
        "e",
        `SQL functions call SQL functions deeper than ${MAX_DEPTH} levels`,
        true,
      );
      break;
    }
    const rows = await exec(vetStatement(JSON.stringify(input)));
    const bodies = await judgeRows(rows, input, findings);
    const changes = await bodiesChange(
      exec,
      bodies,
      (oid) => findings.names.get(oid),
    );
    if (changes !== null) {
      findings.reach ??= changes;
      findings.fail("e", changes, true);
    }
    input = bodies.length === 0 ? null : inputOf(bodies);
  }
  const cycle = cycleOf(findings.calls, findings.names);
  if (cycle !== null) findings.fail("e", cycle, true);
  const moved = movedPath(findings);
  if (moved !== null) {
    findings.reach ??= moved;
    findings.fail("e", moved, true);
  }
  return verdict(analysis, findings);
}

/**
 * Why a body that defines or changes objects may do so in the server's own
 * catalogs, or null: something the same statement runs first changes a
 * setting (`set_config('search_path', 'pg_catalog', true)`, a body's `SET
 * search_path`), and the server creates an unqualified name in the first
 * schema of the search path as it is then. The body's own path said
 * nothing of it (definesInCatalog).
 */
function movedPath(found: Readonly<Findings>): string | null {
  if (found.setting === null || found.defines === null) return null;
  return `${found.defines} after ${found.setting} changes a setting, the search path among them: an unqualified name may be created in pg_catalog, the server's own catalogs; dbport changes the database's own objects only`;
}

function verdict(analysis: PgAnalysis, found: Readonly<Findings>): PgVetting {
  const plansOnly = analysis.plansOnly === true;
  const failing = plansOnly ? found.plans : found.evaluates;
  const tier = analysis.tier === "read" && failing !== null
    ? "write"
    : analysis.tier;
  const opaque = analysis.kinds.map((kind) => OPAQUE_STATEMENTS[kind])
    .find((why) => why !== undefined) ??
    (found.eventTrigger !== null && !PLAIN.has(analysis.kinds[0] ?? "")
      ? `the event trigger ${found.eventTrigger} runs code on DDL`
      : undefined);
  const retargets = found.foreignTable !== null &&
      RETARGETING.has(analysis.kinds[0] ?? "")
    ? `the statement changes or reaches the foreign table ${found.foreignTable}: renaming it, moving it or changing its columns changes what it reads on the other server or from files (postgres_fdw maps names to remote ones); dbport leaves foreign tables to the server's administrator`
    : null;
  const reach = found.reach ?? retargets ?? changesBuiltin(analysis, found);
  if (reach !== null) {
    return {
      tier: "write",
      reach,
      why: reach,
      denied: found.denied,
      noPlan: reach,
      noDryRun: reach,
    };
  }
  if (found.destroys !== null) {
    return {
      tier: "destructive",
      reach: null,
      why: found.destroys,
      denied: found.denied,
      noPlan: found.plans ?? found.destroys,
      noDryRun: found.evaluates ?? found.dryRun ?? opaque ?? null,
      ...foreignDanger(found),
    };
  }
  return {
    tier,
    reach: null,
    why: analysis.tier === "read" ? failing : null,
    denied: found.denied,
    noPlan: found.plans,
    noDryRun: found.evaluates ?? found.dryRun ?? opaque ?? null,
    ...foreignDanger(found),
  };
}

/** Why a write to a foreign table asks (`danger`), if it writes one. */
function foreignDanger(found: Readonly<Findings>): { danger?: string } {
  return found.writesForeign === null ? {} : {
    danger:
      `it writes the foreign table ${found.writesForeign}, whose rows are another server's: dbport cannot count what it changes there`,
  };
}

/** Statements that change the functions they name (GRANT, COMMENT). */
const CHANGES_NAMED: Readonly<Record<string, string>> = {
  GrantStmt: "GRANT|REVOKE",
  CommentStmt: "COMMENT",
};

/**
 * Why a GRANT|REVOKE or COMMENT changes a built-in function, or null: the
 * parser refuses a name qualified with a catalog schema; an unqualified one
 * (`revoke execute on function now() from public`) resolves to pg_catalog
 * first, which only the catalog can tell. A built-in's privileges and
 * comments are every user's (outsider stop 56).
 */
function changesBuiltin(
  analysis: PgAnalysis,
  found: Readonly<Findings>,
): string | null {
  const verb = CHANGES_NAMED[analysis.kinds[0] ?? ""];
  if (verb === undefined) return null;
  // A name it gives, not a cast its argument types bring (`f(int)`: int4()).
  const named = analysis.functions.find((fn) =>
    (fn.schema === null || fn.schema === "pg_catalog") &&
    found.builtins.has(fn.name)
  );
  if (named === undefined) return null;
  return `${verb} on ${named.name}() changes a built-in function of pg_catalog, an object of the server's own catalogs (its privileges and comment are every user's); dbport changes the database's own objects only`;
}

/**
 * The names in `sources`, for one round of the query. A function body's
 * write targets are looked up too: their defaults, checks, rules and
 * triggers run when it is called.
 */
function inputOf(sources: Source[]): VetInput {
  const input: VetInput = { f: [], o: [], c: [], r: [], t: [], l: [] };
  let i = 0;
  const add = (list: Item[], name: PgName, source: Source, extra = {}) =>
    list.push({
      s: name.schema,
      n: name.name,
      i: i++,
      ...(source.owner === undefined ? {} : { w: source.owner }),
      ...(source.path ? { p: source.path } : {}),
      ...extra,
    });
  for (const source of sources) {
    const { analysis } = source;
    for (const fn of analysis.functions) {
      add(input.f, fn, source, {
        a: fn.args,
        ...(fn.optional ? { o: true } : {}),
        ...(fn.before === undefined ? {} : { v: fn.before }),
      });
    }
    for (const op of analysis.operators) add(input.o, op, source);
    for (const type of analysis.castTypes) add(input.c, type, source);
    for (const rel of analysis.relations) add(input.r, rel, source);
    for (const rel of analysis.targets) add(input.t, rel, source);
    for (const opclass of analysis.opclasses ?? []) {
      add(input.l, opclass, source);
    }
  }
  return input;
}

/** Judge one round's rows; answer the string bodies to read next. */
async function judgeRows(
  rows: Row[],
  input: VetInput,
  found: Findings,
): Promise<Source[]> {
  const next: Source[] = [];
  const items = new Map<string, Item>();
  for (const [kind, list] of Object.entries(input)) {
    for (const item of list as Item[]) items.set(`${kind}${item.i}`, item);
  }
  // A user aggregate's own row before its support functions' (the message
  // names what the statement calls).
  const ordered = rows.toSorted((a, b) =>
    Number(b.kind === "a") - Number(a.kind === "a")
  );
  for (const row of ordered) {
    if (row.row === "u") {
      const item = items.get(`${String(row.relkind)}${String(row.item)}`);
      const what = row.relkind === "o" ? "operator" : "function";
      found.fail(
        "e",
        `no ${what} ${qualified(item)}${
          what === "function" ? "()" : ""
        } is visible to resolve${
          item?.a === undefined || item.a === null
            ? ""
            : ` for ${item.a} arguments`
        }`,
        true,
      );
    } else if (row.row === "s") {
      found.denied ??= `the statement reads ${
        String(row.name)
      }, the planner's statistics: sampled values of every column this login may read, pg_authid's password verifiers among them (it may read pg_authid); dbport never lets an AI client read a credential catalog, nor its statistics (a login made by \`dbport connections harden\` may read pg_stats)`;
    } else if (row.row === "x") {
      found.eventTrigger ??= String(row.name);
    } else if (row.row === "r") judgeRelation(row, found);
    else {
      const source = await judgeFunction(row, found);
      if (source !== null) next.push(source);
    }
  }
  return next;
}

function qualified(item: Item | undefined): string {
  if (item === undefined) return "?";
  return item.s === null ? item.n : `${item.s}.${item.n}`;
}

/** Credential catalogs: never an AI read, whoever the login. */
const CREDENTIALS: Readonly<Record<string, string>> = {
  "pg_catalog.pg_authid": "holds every role's password verifier",
  "pg_catalog.pg_shadow": "holds every role's password verifier",
  "pg_catalog.pg_user_mapping": "holds passwords for other servers",
  "pg_catalog.pg_user_mappings": "holds passwords for other servers",
};

function judgeRelation(row: Row, found: Findings): void {
  const name = String(row.name);
  const credential = CREDENTIALS[name];
  if (credential !== undefined && Number(row.oid) < 16384) {
    found.denied ??=
      `the statement reads ${name}, which ${credential}: dbport never lets an AI client read a credential catalog (pg_roles and pg_user show roles without their passwords)`;
  }
  const kind = String(row.relkind ?? "");
  if (kind.startsWith("f")) found.foreignTable ??= name;
  // A foreign table's scan runs its wrapper: a query to another server, a
  // file read, a program (file_fdw's program), at plan time too. A write target's
  // own message is below.
  if (kind.startsWith("f") && row.how === "e" && row.target !== true) {
    found.fail(
      "e",
      `${name} is a foreign table: reading it runs its foreign-data wrapper (another server, a file or a program)`,
      true,
    );
  }
  if (row.target !== true) return;
  // A superuser login may INSERT, UPDATE and DELETE the catalogs' rows
  // themselves (only DDL and TRUNCATE need allow_system_table_mods): a
  // comment, a function's definition, a role's attributes.
  if (
    Number(row.oid) < FIRST_USER_OID ||
    /^(pg_catalog|pg_toast|information_schema)\./.test(name)
  ) {
    found.reach ??=
      `the statement writes ${name}, a table of the server's own catalogs, which keep every object's definition, privileges and comment; dbport writes the database's own tables only`;
  }
  if (kind.startsWith("f")) {
    found.dryRun ??=
      `${name} is a foreign table: a write there reaches another server`;
    found.writesForeign ??= name;
  }
  if (kind.includes("R")) {
    found.dryRun ??=
      `${name} has rules that turn a write into other statements`;
  }
}

export { refusedSymbol };
export { deniedFunction, namedReach };
