/**
 * PostgreSQL statements read by PostgreSQL's own parser (libpg_query compiled
 * to WebAssembly), so that what dbport decides about a statement rests on the
 * engine's grammar rather than on our lexer alone (docs/security.md "Reads on
 * PostgreSQL"). The tree gives the statement's kind, every function,
 * operator, cast and relation it names, `INTO`, locking clauses and
 * data-changing statements nested anywhere.
 *
 * @module
 */

import { loadModule, parseSync } from "libpg-query";
import type { Tier } from "./classifier.ts";

/** A name as written: `schema.name` or `name`, lower-cased as the parser gives it. */
export interface PgName {
  schema: string | null;
  name: string;
}

/** What the parser found in one statement. */
export interface PgAnalysis {
  tier: Tier;
  /** A DELETE or UPDATE without WHERE, at the top or in a CTE. */
  dangerous: boolean;
  /** What reaches files, code or other hosts; null when nothing does. */
  reach: string | null;
  /** Every function called anywhere in the statement. */
  functions: PgName[];
  /** Every operator used (its symbol). */
  operators: string[];
  /** The target types of every cast (`x::type`, `CAST(x AS type)`). */
  castTypes: string[];
  /** Every relation named (tables, views, CTE names). */
  relations: PgName[];
}

/** The parser's verdict on a text. */
export type PgParse =
  | { ok: true; statements: number; analysis: PgAnalysis | null }
  | { ok: false; message: string };

let loaded: Promise<void> | null = null;

/** Load the parser once (about 10 ms); every parse after that is synchronous. */
export function loadPgParser(): Promise<void> {
  return loaded ??= loadModule();
}

type Node = Record<string, unknown>;

/** Top-level statement kinds that only read (the rest are checked below). */
const READ_STATEMENTS = new Set(["SelectStmt", "VariableShowStmt"]);

/** Statements that reach files, code or other hosts: refused whatever the tier. */
const REACH_STATEMENTS: Readonly<Record<string, string>> = {
  CopyStmt: "COPY reads or writes files, programs or the client's stream",
  DoStmt: "DO runs a block of procedural code",
  CreateExtensionStmt: "CREATE EXTENSION installs code",
  AlterExtensionStmt: "ALTER EXTENSION changes installed code",
  CreatePLangStmt: "CREATE LANGUAGE installs code",
  LoadStmt: "LOAD reads a library",
  AlterSystemStmt: "ALTER SYSTEM writes the server's configuration file",
  CreateForeignServerStmt: "a foreign server reaches files or other hosts",
  CreateForeignTableStmt: "a foreign table reaches files or other hosts",
  ImportForeignSchemaStmt: "IMPORT FOREIGN SCHEMA reaches other hosts",
  CreateUserMappingStmt: "a user mapping holds credentials for other hosts",
  CreateSubscriptionStmt: "a subscription connects to other hosts",
};

/** Parses of recent statement texts: a parse is pure, so it can be reused. */
const PARSED = new Map<string, PgParse>();
const PARSED_MAX = 256;

/**
 * Parse `sql`. A text the parser rejects answers with the parser's own
 * message (`syntax error at or near …`); `analysis` is null when the text
 * holds other than exactly one statement. A client repeating a statement
 * (polling, paging) skips the parse (~25 µs plus the tree's JSON); what the
 * catalog says about it is never cached.
 */
export async function parsePostgres(sql: string): Promise<PgParse> {
  const seen = PARSED.get(sql);
  if (seen !== undefined) return structuredClone(seen);
  const parsed = await parseOnce(sql);
  if (sql.length <= 4096) {
    if (PARSED.size >= PARSED_MAX) PARSED.delete(PARSED.keys().next().value!);
    PARSED.set(sql, structuredClone(parsed));
  }
  return parsed;
}

async function parseOnce(sql: string): Promise<PgParse> {
  await loadPgParser();
  let tree: { stmts?: { stmt?: Node }[] };
  try {
    tree = parseSync(sql) as typeof tree;
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
  const statements = (tree.stmts ?? []).filter((s) => s.stmt !== undefined);
  if (statements.length !== 1) {
    return { ok: true, statements: statements.length, analysis: null };
  }
  return { ok: true, statements: 1, analysis: analyze(statements[0]!.stmt!) };
}

/** Read one statement's tree. */
export function analyze(statement: Node): PgAnalysis {
  const [kind, body] = Object.entries(statement)[0] as [string, Node];
  const found: PgAnalysis = {
    tier: "read",
    dangerous: false,
    reach: REACH_STATEMENTS[kind] ?? null,
    functions: [],
    operators: [],
    castTypes: [],
    relations: [],
  };
  if (kind === "ExplainStmt") {
    // EXPLAIN plans without running; EXPLAIN ANALYZE runs its statement.
    return explainAnalyzes(body) ? analyze(body.query as Node) : found;
  }
  if (kind.startsWith("Drop") || kind === "TruncateStmt") {
    found.tier = "destructive";
    found.dangerous = true;
  } else if (kind === "AlterTableStmt" && dropsSomething(body)) {
    found.tier = "destructive";
    found.dangerous = true;
  } else if (!READ_STATEMENTS.has(kind)) {
    found.tier = "write";
  }
  walk(statement, found);
  return found;
}

function explainAnalyzes(body: Node): boolean {
  for (const option of (body.options as Node[] | undefined) ?? []) {
    const element = option.DefElem as Node | undefined;
    if (element?.defname !== "analyze") continue;
    // `ANALYZE false|off|no|0` plans only; anything else (no value, true,
    // on, 1, a value we do not know) runs the statement.
    const arg = element.arg as
      | { String?: { sval?: string }; Integer?: { ival?: number } }
      | undefined;
    const text = arg?.String?.sval?.toLowerCase();
    const off = (text !== undefined &&
      ["false", "off", "no", "0", "f", "n"].includes(text)) ||
      (arg?.Integer !== undefined && (arg.Integer.ival ?? 0) === 0);
    if (!off) return true;
  }
  return false;
}

function dropsSomething(body: Node): boolean {
  for (const command of (body.cmds as Node[] | undefined) ?? []) {
    const subtype = (command.AlterTableCmd as Node | undefined)?.subtype;
    if (typeof subtype === "string" && subtype.startsWith("AT_Drop")) {
      return true;
    }
  }
  return false;
}

const MODIFYING = new Set([
  "InsertStmt",
  "UpdateStmt",
  "DeleteStmt",
  "MergeStmt",
]);

function names(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((item) =>
    String((item as Node).String ? ((item as Node).String as Node).sval : "")
  );
}

function pgName(parts: string[]): PgName {
  return parts.length > 1
    ? { schema: parts.at(-2)!, name: parts.at(-1)! }
    : { schema: null, name: parts[0] ?? "" };
}

/** Collect what the tree names, at every depth. */
function walk(value: unknown, found: PgAnalysis): void {
  if (Array.isArray(value)) {
    for (const item of value) walk(item, found);
    return;
  }
  if (value === null || typeof value !== "object") return;
  for (const [key, child] of Object.entries(value as Node)) {
    if (child === null || typeof child !== "object") continue;
    const node = child as Node;
    if (MODIFYING.has(key)) {
      found.tier = higher(found.tier, "write");
      if ((key === "DeleteStmt" || key === "UpdateStmt") && !node.whereClause) {
        found.dangerous = true;
      }
    } else if (key === "SelectStmt") {
      if (node.intoClause) found.tier = higher(found.tier, "write");
      if (Array.isArray(node.lockingClause) && node.lockingClause.length > 0) {
        // Row locks need a read-write transaction.
        found.tier = higher(found.tier, "write");
      }
    } else if (key === "FuncCall") {
      found.functions.push(pgName(names(node.funcname)));
    } else if (key === "A_Expr") {
      for (const name of names(node.name)) found.operators.push(name);
    } else if (key === "TypeCast") {
      const type = node.typeName as Node | undefined;
      const parts = names(type?.names);
      if (parts.length > 0) found.castTypes.push(parts.at(-1)!);
    } else if (key === "RangeVar") {
      found.relations.push({
        schema: typeof node.schemaname === "string" ? node.schemaname : null,
        name: String(node.relname ?? ""),
      });
    } else if (key in REACH_STATEMENTS && found.reach === null) {
      found.reach = REACH_STATEMENTS[key]!;
    }
    walk(child, found);
  }
}

const ORDER: Record<Tier, number> = { read: 0, write: 1, destructive: 2 };

function higher(a: Tier, b: Tier): Tier {
  return ORDER[a] >= ORDER[b] ? a : b;
}
