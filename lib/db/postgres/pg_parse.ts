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

import { messageOf } from "../../base/message_of.ts";
import { loadModule, parseSync } from "libpg-query";
import { outsideDatabase } from "./pg_statement_kinds.ts";
import { installsCode, REACH_STATEMENTS, statementReach } from "./pg_reach.ts";
import { child, childList, isNode, names, type Node } from "./pg_tree.ts";
import { settingsReach } from "../pg_settings.ts";
import { namedObjects } from "./pg_named_objects.ts";
import type {
  PgAnalysis,
  PgCall,
  PgName,
  PgNamedObject,
  PgParse,
} from "./pg_parse_types.ts";
import type { Tier } from "../sql/classifier.ts";

export type { PgAnalysis, PgCall, PgName, PgNamedObject, PgParse };

let loaded: Promise<void> | null = null;

/** Load the parser once (about 10 ms); every parse after that is synchronous. */
export function loadPgParser(): Promise<void> {
  return loaded ??= loadModule();
}

/** Top-level statement kinds that only read (the rest are checked below). */
const READ_STATEMENTS = new Set(["SelectStmt", "VariableShowStmt"]);

/**
 * Statements longer than this are parsed in a worker: a few KB parse in well
 * under a millisecond, 100 KB (the query limit) took 140-180 ms of the event
 * loop's CPU, seconds on a loaded machine, and a deep one threw RangeError.
 */
const OFF_LOOP_CHARS = 4096;

/** Parses of recent statement texts: a parse is pure, so it can be reused. */
const PARSED = new Map<string, PgParse>();
const PARSED_MAX = 256;

/**
 * Parse `sql`. A text the parser rejects answers with the parser's own
 * message (`syntax error at or near …`); `analysis` is null when the text
 * holds other than exactly one statement. A client repeating a statement
 * (polling, paging) skips the parse (~25 µs plus the tree's JSON); what the
 * catalog says about it is never cached. A parse is frozen, so the cached one
 * is handed out as it is: no caller can change what the next one reads (a
 * copy per call was 2% of a W1 read's CPU).
 */
export async function parsePostgres(sql: string): Promise<PgParse> {
  const seen = PARSED.get(sql);
  if (seen !== undefined) return seen;
  // A long text can take seconds of synchronous parsing: off the event loop.
  const parsed = deepFreeze(
    sql.length > OFF_LOOP_CHARS
      ? await (await import("./pg_parse_off_loop.ts")).parseOffLoop(sql)
      : await parseOnce(sql),
  );
  if (sql.length <= 4096) {
    const oldest = PARSED.keys().next();
    if (PARSED.size >= PARSED_MAX && !oldest.done) PARSED.delete(oldest.value);
    PARSED.set(sql, parsed);
  }
  return parsed;
}

/** `value` and everything in it made read-only. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

/**
 * `sql` as the parser must be given it: every lone surrogate as U+FFFD.
 * libpg-query sizes its copy of the text with emscripten's
 * `lengthBytesUTF8`, which counts a lone surrogate as 4 bytes and skips the
 * unit after it, then writes it as 3: the text's end was cut off what the
 * parser read, and a readOnly token read pg_authid behind 20 lone
 * surrogates in a string literal (outsider stop 57). The server gets each
 * as U+FFFD (every UTF-8 encoder, postgres.js's and the wired reader's,
 * writes it so): the parser reads what the server runs.
 */
function grammarText(sql: string): string {
  return sql.isWellFormed() ? sql : sql.toWellFormed();
}

/** Parse here, on this thread (the parse worker's entry). */
export function parseNow(sql: string): Promise<PgParse> {
  return parseOnce(sql);
}

/**
 * The statements' trees of `sql`, or the parser's message when it rejects
 * the text.
 */
async function statementTrees(
  sql: string,
): Promise<{ ok: true; trees: Node[] } | { ok: false; message: string }> {
  await loadPgParser();
  let tree: unknown;
  try {
    tree = parseSync(grammarText(sql));
  } catch (error) {
    return { ok: false, message: messageOf(error) };
  }
  return {
    ok: true,
    trees: childList(isNode(tree) ? tree : undefined, "stmts")
      .map((entry) => child(entry, "stmt"))
      .filter(isNode),
  };
}

async function parseOnce(sql: string): Promise<PgParse> {
  const parsed = await statementTrees(sql);
  if (!parsed.ok) return parsed;
  const statements = parsed.trees;
  const [only] = statements;
  if (statements.length !== 1 || only === undefined) {
    return { ok: true, statements: statements.length, analysis: null };
  }
  return { ok: true, statements: 1, analysis: analyze(only) };
}

/** A function body's statements, or the parser's reason it cannot read it. */
export type PgBody =
  | { ok: true; statements: PgAnalysis[] }
  | { ok: false; message: string };

/**
 * Every statement of a function body (`prosrc`), each read as a statement;
 * the parser's message when it rejects the text (a body valid on the
 * server's older grammar may not be on ours). Not cached: bodies change.
 */
export async function parseBody(sql: string): Promise<PgBody> {
  const parsed = await statementTrees(sql);
  if (!parsed.ok) return parsed;
  return { ok: true, statements: parsed.trees.map(analyze) };
}

/** Read one statement's tree. */
export function analyze(statement: Node): PgAnalysis {
  const [kind = "", value] = Object.entries(statement)[0] ?? [];
  const body = isNode(value) ? value : {};
  const found: PgAnalysis = {
    tier: "read",
    dangerous: false,
    reach: statementReach(kind, body),
    functions: [],
    operators: [],
    castTypes: [],
    relations: [],
    targets: [],
    // ANALYZE shares VACUUM's node; only ANALYZE runs in a transaction.
    kinds: [
      kind === "VacuumStmt" && body.is_vacuumcmd !== true
        ? "AnalyzeStmt"
        : kind,
    ],
  };
  if (kind === "ExplainStmt") {
    // EXPLAIN plans without running; EXPLAIN ANALYZE runs its statement.
    // Planning still evaluates functions (constant folding): what it names
    // is vetted as for a plan.
    const query = child(body, "query");
    if (query === undefined) return found;
    const inner = analyze(query);
    return explainAnalyzes(body)
      ? inner
      : { ...inner, tier: "read", dangerous: false, plansOnly: true };
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
  // The relation `ALTER TABLE`, `RENAME`, `SET SCHEMA` change (a bare node,
  // not a RangeVar): looked up, a foreign table's change is reach (pg_vet.ts
  // RETARGETING).
  const changed = child(body, "relation");
  if (changed !== undefined && CHANGES_RELATION.has(kind)) {
    found.relations.push(relationName(changed));
  }
  return found;
}

/** Statements whose `relation` is the table they change. */
const CHANGES_RELATION = new Set([
  "AlterTableStmt",
  "RenameStmt",
  "AlterObjectSchemaStmt",
]);

function explainAnalyzes(body: Node): boolean {
  for (const option of childList(body, "options")) {
    const element = child(option, "DefElem");
    if (element?.defname !== "analyze") continue;
    // `ANALYZE false|off|no|0` plans only; anything else (no value, true,
    // on, 1, a value we do not know) runs the statement.
    const arg = child(element, "arg");
    const sval = child(arg, "String")?.sval;
    const text = typeof sval === "string" ? sval.toLowerCase() : undefined;
    const integer = child(arg, "Integer");
    const off = (text !== undefined &&
      ["false", "off", "no", "0", "f", "n"].includes(text)) ||
      (integer !== undefined && (integer.ival ?? 0) === 0);
    if (!off) return true;
  }
  return false;
}

function dropsSomething(body: Node): boolean {
  for (const command of childList(body, "cmds")) {
    const subtype = child(command, "AlterTableCmd")?.subtype;
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

function pgName(parts: string[]): PgName {
  const name = parts.at(-1) ?? "";
  const schema = parts.at(-2);
  return { schema: schema ?? null, name };
}

/** Collect what the tree names, at every depth. */
function walk(value: unknown, found: PgAnalysis): void {
  if (Array.isArray(value)) {
    for (const item of value) walk(item, found);
    return;
  }
  if (!isNode(value)) return;
  for (const [key, inner] of Object.entries(value)) {
    if (inner === null || typeof inner !== "object") continue;
    // A list under a key is walked below; only a node has fields to read.
    const node = isNode(inner) ? inner : {};
    if (key.endsWith("Stmt") && !Array.isArray(inner)) {
      found.kinds.push(key);
      // `CREATE SCHEMA s GRANT SELECT ON pg_authid TO PUBLIC` grants as the
      // statement sent by itself would (outsider stop 55's left-over).
      // A node's type, not a field named so (`InsertStmt.selectStmt`).
      found.reach ??= installsCode(key, node) ??
        (/^[A-Z]/.test(key) ? outsideDatabase(key, node) : null);
      // What it changes by name, `CREATE SCHEMA s GRANT ...`'s too: the
      // catalog tells a built-in from the database's own (pg_vet.ts).
      const changes = /^[A-Z]/.test(key) ? namedObjects(key, node) : [];
      if (changes.length > 0) (found.changes ??= []).push(...changes);
    }
    // Settings that change how the server reads what dbport vetted, who
    // runs it or the server's own checks (pg_settings.ts).
    found.reach ??= settingsReach(key, node);
    if (MODIFYING.has(key)) {
      found.tier = higher(found.tier, "write");
      if ((key === "DeleteStmt" || key === "UpdateStmt") && !node.whereClause) {
        found.dangerous = true;
      }
      const target = child(node, "relation");
      if (target !== undefined) found.targets.push(relationName(target));
    } else if (key === "SelectStmt") {
      if (node.intoClause) found.tier = higher(found.tier, "write");
      if (Array.isArray(node.lockingClause) && node.lockingClause.length > 0) {
        // Row locks need a read-write transaction.
        found.tier = higher(found.tier, "write");
      }
    } else if (key === "RangeVar") {
      found.relations.push(relationName(node));
    } else if (found.reach === null && Object.hasOwn(REACH_STATEMENTS, key)) {
      found.reach = REACH_STATEMENTS[key] ?? null;
    } else {
      collectCalls(key, node, found);
    }
    collectOpclasses(key, node, found);
    walk(inner, found);
  }
}

/**
 * The operator classes an index's, an exclusion constraint's or a partition
 * key's element names, and an exclusion constraint's operators: building,
 * checking and routing call the classes' support functions (a LANGUAGE sql
 * FUNCTION 1 reading a server file ran in `create index … (x s.opc)`,
 * outsider stop 55). Looked up and followed as vet_sql.ts follows a table's
 * index classes.
 */
function collectOpclasses(key: string, node: Node, found: PgAnalysis): void {
  if (key === "IndexElem" || key === "PartitionElem") {
    const parts = names(node.opclass);
    if (parts.length > 0) (found.opclasses ??= []).push(pgName(parts));
  } else if (key === "Constraint" && node.contype === "CONSTR_EXCLUSION") {
    for (const pair of childList(node, "exclusions")) {
      const [, operator] = childList(child(pair, "List"), "items");
      const parts = names(child(operator, "List")?.items);
      if (parts.length > 0) found.operators.push(pgName(parts));
    }
  }
}

function relationName(node: Node): PgName {
  return {
    schema: typeof node.schemaname === "string" ? node.schemaname : null,
    name: String(node.relname ?? ""),
  };
}

/** `BETWEEN` and its forms compare with these operators. */
const BETWEEN_OPERATORS: Readonly<Record<string, string[]>> = {
  AEXPR_BETWEEN: [">=", "<="],
  AEXPR_BETWEEN_SYM: [">=", "<="],
  AEXPR_NOT_BETWEEN: ["<", ">"],
  AEXPR_NOT_BETWEEN_SYM: ["<", ">"],
};

const EQUALS: PgName = { schema: null, name: "=" };

/**
 * The functions `CREATE AGGREGATE` and `CREATE OPERATOR` name as their
 * support functions, by definition key. The grammar reads `sfunc =
 * pg_read_file` as a type name; the server calls that function whenever the
 * aggregate or operator runs (outsider stop 54).
 */
const SUPPORT_FUNCTIONS: Readonly<Record<string, ReadonlySet<string>>> = {
  OBJECT_AGGREGATE: new Set([
    "sfunc",
    "sfunc1",
    "finalfunc",
    "combinefunc",
    "serialfunc",
    "deserialfunc",
    "msfunc",
    "minvfunc",
    "mfinalfunc",
  ]),
  OBJECT_OPERATOR: new Set(["function", "procedure", "restrict", "join"]),
};

/** The support functions a `CREATE AGGREGATE` or `CREATE OPERATOR` names. */
function supportFunctions(node: Node): PgCall[] {
  const kind = String(node.kind);
  const keys = Object.hasOwn(SUPPORT_FUNCTIONS, kind)
    ? SUPPORT_FUNCTIONS[kind]
    : undefined;
  if (keys === undefined) return [];
  const calls: PgCall[] = [];
  for (const item of childList(node, "definition")) {
    const element = child(item, "DefElem");
    if (!keys.has(String(element?.defname ?? "").toLowerCase())) continue;
    const arg = child(element, "arg");
    const typeName = child(arg, "TypeName");
    const text = child(arg, "String")?.sval;
    const parts = typeName !== undefined
      ? names(typeName.names)
      : typeof text === "string"
      ? [text]
      : [];
    if (parts.length > 0) calls.push({ ...pgName(parts), args: null });
  }
  return calls;
}

/**
 * SQL/JSON and MERGE syntax of the bundled grammar (libpg_query,
 * PostgreSQL 17/18) that an older server reads as a call of a function of
 * that name on the search path — a user's `public.json_array(text)` on
 * PostgreSQL 15 — with the server version that made it syntax.
 */
const NEWER_SYNTAX: Readonly<Record<string, [string, number]>> = {
  JsonArrayConstructor: ["json_array", 160000],
  JsonArrayQueryConstructor: ["json_array", 160000],
  JsonObjectConstructor: ["json_object", 160000],
  JsonArrayAgg: ["json_arrayagg", 160000],
  JsonObjectAgg: ["json_objectagg", 160000],
  JsonParseExpr: ["json", 170000],
  JsonScalarExpr: ["json_scalar", 170000],
  JsonSerializeExpr: ["json_serialize", 170000],
  JsonTable: ["json_table", 170000],
  MergeSupportFunc: ["merge_action", 170000],
};

/** `JSON_VALUE`, `JSON_QUERY`, `JSON_EXISTS` (PostgreSQL 17). */
const JSON_FUNCTIONS: Readonly<Record<string, string>> = {
  JSON_VALUE_OP: "json_value",
  JSON_QUERY_OP: "json_query",
  JSON_EXISTS_OP: "json_exists",
};

/** GRANT's and COMMENT's object kinds that name functions. */
const ROUTINE_OBJECTS = new Set([
  "OBJECT_FUNCTION",
  "OBJECT_PROCEDURE",
  "OBJECT_ROUTINE",
  "OBJECT_AGGREGATE",
]);

/** The functions, operators and casts one node calls (by name or implied). */
function collectCalls(key: string, node: Node, found: PgAnalysis): void {
  const syntax = newerSyntax(key, node);
  if (syntax !== undefined) {
    // Any arity: every candidate of the name on the path is vetted.
    const [name, before] = syntax;
    found.functions.push({ schema: null, name, args: null, before });
  } else if (key === "FuncCall" || key === "funccall") {
    collectFuncCall(key, node, found);
  } else if (key === "DefineStmt") {
    found.functions.push(...supportFunctions(node));
  } else if (
    (key === "GrantStmt" || key === "CommentStmt") &&
    ROUTINE_OBJECTS.has(String(node.objtype))
  ) {
    collectNamedRoutines(key, node, found);
  } else if (key === "CreateCastStmt") {
    // `WITH FUNCTION f(…)`: every use of the cast runs it.
    const func = child(node, "func");
    const parts = names(func?.objname);
    if (parts.length > 0) {
      const args = Array.isArray(func?.objargs) ? func.objargs.length : null;
      found.functions.push({ ...pgName(parts), args });
    }
  } else if (key === "typeName" || key === "TypeName") {
    // Every type a value is converted to runs that type's domain checks: a
    // cast, a column definition list (`json_to_record(..) AS x(d dom)`), an
    // XMLTABLE column, `XMLSERIALIZE(.. AS dom)`, a JSON RETURNING clause.
    // Read wherever a type name stands, not from a list of node kinds.
    const typeNames = names(node.names);
    if (typeNames.length > 0) found.castTypes.push(pgName(typeNames));
  } else if (key === "RangeTableSample") {
    found.functions.push({ ...pgName(names(node.method)), args: 1 });
  } else if (key === "ColumnRef" || key === "A_Indirection") {
    collectFieldCalls(key, node, found);
  } else {
    collectOperators(key, node, found);
  }
}

/**
 * The function a node of newer syntax calls (`NEWER_SYNTAX`, the JSON
 * functions of `JsonFuncExpr`), with the server version that reads it so,
 * or undefined.
 */
function newerSyntax(
  key: string,
  node: Node,
): readonly [string, number] | undefined {
  // By own key only: a tree's keys include `constructor` (JsonArrayAgg's).
  return (Object.hasOwn(NEWER_SYNTAX, key) ? NEWER_SYNTAX[key] : null) ??
    (key === "JsonFuncExpr"
      ? [JSON_FUNCTIONS[String(node.op)] ?? "json_value", 170000] as const
      : undefined);
}

/** A function call (`FuncCall`), or CALL's procedure (`funccall`). */
function collectFuncCall(
  key: "FuncCall" | "funccall",
  node: Node,
  found: PgAnalysis,
): void {
  // CALL's procedure is `funccall`, not a `FuncCall` node: any arity (a
  // procedure's OUT arguments are given too), every candidate vetted.
  const call = key === "funccall";
  // An ordered-set aggregate's WITHIN GROUP columns are arguments too.
  const args = (Array.isArray(node.args) ? node.args.length : 0) +
    (node.agg_within_group === true && Array.isArray(node.agg_order)
      ? node.agg_order.length
      : 0);
  const name = pgName(names(node.funcname));
  const variadic = call || node.func_variadic === true;
  found.functions.push({ ...name, args: variadic ? null : args });
  // `json_object(…)` is read as `pg_catalog.json_object(…)` since
  // PostgreSQL 16's grammar; PostgreSQL 15 resolves `json_object` on the
  // search path (a user's json_object(text) before the built-in's).
  if (name.schema === "pg_catalog" && name.name === "json_object") {
    found.functions.push({
      schema: null,
      name: name.name,
      args: variadic ? null : args,
      before: 160000,
    });
  }
}

/**
 * The routines a GRANT or COMMENT on functions names. `GRANT EXECUTE ON
 * FUNCTION pg_read_file(text) TO PUBLIC` runs nothing but hands what dbport
 * refuses by name to every role: the functions it names are vetted as
 * calls (outsider stop 54's left-over). A built-in among them is a catalog
 * object (pg_vet.ts changesBuiltin).
 */
function collectNamedRoutines(
  key: "GrantStmt" | "CommentStmt",
  node: Node,
  found: PgAnalysis,
): void {
  const objects = key === "GrantStmt"
    ? childList(node, "objects")
    : [child(node, "object")].filter(isNode);
  for (const item of objects) {
    const routine = child(item, "ObjectWithArgs");
    const parts = names(routine?.objname);
    if (parts.length === 0) continue;
    const args = routine?.args_unspecified === true ||
        !Array.isArray(routine?.objargs)
      ? null
      : routine.objargs.length;
    found.functions.push({ ...pgName(parts), args });
  }
}

/** `t.f` is f(t) when t has no column f: a field may be a function. */
function collectFieldCalls(
  key: "ColumnRef" | "A_Indirection",
  node: Node,
  found: PgAnalysis,
): void {
  if (key === "ColumnRef") {
    const fields = names(node.fields);
    const last = fields.at(-1);
    if (fields.length >= 2 && last) {
      found.functions.push({
        schema: null,
        name: last,
        args: 1,
        optional: true,
      });
    }
    return;
  }
  for (const name of names(node.indirection)) {
    if (name === "") continue;
    found.functions.push({ schema: null, name, args: 1, optional: true });
  }
}

/** The operators an expression, a sort, a CASE or a join calls. */
function collectOperators(key: string, node: Node, found: PgAnalysis): void {
  if (key === "A_Expr") {
    const between = BETWEEN_OPERATORS[String(node.kind)];
    if (between !== undefined) {
      for (const name of between) found.operators.push({ schema: null, name });
    } else found.operators.push(pgName(names(node.name)));
  } else if (key === "SubLink" && Array.isArray(node.operName)) {
    found.operators.push(pgName(names(node.operName)));
  } else if (key === "SortBy" && Array.isArray(node.useOp)) {
    found.operators.push(pgName(names(node.useOp)));
  } else if (key === "CaseExpr" && node.arg !== undefined) {
    found.operators.push(EQUALS);
  } else if (
    key === "JoinExpr" && (node.isNatural === true || node.usingClause)
  ) {
    found.operators.push(EQUALS);
  }
}

const ORDER: Record<Tier, number> = { read: 0, write: 1, destructive: 2 };

function higher(a: Tier, b: Tier): Tier {
  return ORDER[a] >= ORDER[b] ? a : b;
}
