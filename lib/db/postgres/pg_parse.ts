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
import { settingsReach } from "../pg_settings.ts";
import type { PgAnalysis, PgCall, PgName, PgParse } from "./pg_parse_types.ts";
import type { Tier } from "../sql/classifier.ts";

export type { PgAnalysis, PgCall, PgName, PgParse };

let loaded: Promise<void> | null = null;

/** Load the parser once (about 10 ms); every parse after that is synchronous. */
export function loadPgParser(): Promise<void> {
  return loaded ??= loadModule();
}

type Node = Record<string, unknown>;

/** Whether a value of the parse tree is a node (an object, not a list). */
function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The node under `key`, if it is one. */
function child(node: Node | undefined, key: string): Node | undefined {
  const value = node?.[key];
  return isNode(value) ? value : undefined;
}

/** The nodes of the list under `key` (none when it is absent). */
function childList(node: Node | undefined, key: string): Node[] {
  const value = node?.[key];
  return Array.isArray(value) ? value.filter(isNode) : [];
}

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
  // ALTER SERVER … OPTIONS, ALTER USER MAPPING … OPTIONS retarget what the
  // owner's foreign tables read: another host, a file (outsider stop 55).
  AlterForeignServerStmt:
    "ALTER SERVER changes where a foreign server reaches (files or other hosts)",
  CreateForeignTableStmt: "a foreign table reaches files or other hosts",
  ImportForeignSchemaStmt: "IMPORT FOREIGN SCHEMA reaches other hosts",
  CreateUserMappingStmt: "a user mapping holds credentials for other hosts",
  AlterUserMappingStmt: "a user mapping holds credentials for other hosts",
  // A wrapper's HANDLER and VALIDATOR are functions the server runs: ALTER
  // FOREIGN DATA WRAPPER … VALIDATOR f OPTIONS (…) runs f at once and at
  // every later OPTIONS (outsider stop 55).
  CreateFdwStmt:
    "CREATE FOREIGN DATA WRAPPER installs code (its handler and validator) that reaches files or other hosts",
  AlterFdwStmt:
    "ALTER FOREIGN DATA WRAPPER installs code (its handler and validator, the validator run at once) and changes what its foreign tables reach",
  CreateSubscriptionStmt: "a subscription connects to other hosts",
};

/** `ALTER [FOREIGN] TABLE` commands that change a foreign table's options. */
const FOREIGN_OPTIONS = new Set([
  "AT_GenericOptions",
  "AT_AlterColumnGenericOptions",
]);

/**
 * Why an `ALTER TABLE` changes a foreign table, or null. `ALTER FOREIGN
 * TABLE ft OPTIONS (SET filename 'PG_VERSION')` retargets the owner's
 * file_fdw table at any server file, then a plain `SELECT` reads it
 * (outsider stop 55); `ALTER TABLE ft OPTIONS (…)` does the same on a
 * foreign table. By allowlist: every `ALTER FOREIGN TABLE`, and `OPTIONS`
 * (only foreign tables have them) under any `ALTER TABLE`.
 */
function changesForeignTable(kind: string, body: Node): string | null {
  if (kind !== "AlterTableStmt") return null;
  const options = childList(body, "cmds").some((command) =>
    FOREIGN_OPTIONS.has(String(child(command, "AlterTableCmd")?.subtype))
  );
  if (body.objtype !== "OBJECT_FOREIGN_TABLE" && !options) return null;
  return `ALTER ${
    options ? "… OPTIONS" : "FOREIGN TABLE"
  } changes what a foreign table reaches (files, programs or other hosts); dbport leaves foreign tables to the server's administrator`;
}

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

async function parseOnce(sql: string): Promise<PgParse> {
  await loadPgParser();
  let tree: unknown;
  try {
    tree = parseSync(grammarText(sql));
  } catch (error) {
    return { ok: false, message: messageOf(error) };
  }
  const statements = childList(isNode(tree) ? tree : undefined, "stmts")
    .map((entry) => child(entry, "stmt"))
    .filter(isNode);
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
  await loadPgParser();
  let tree: unknown;
  try {
    tree = parseSync(grammarText(sql));
  } catch (error) {
    return { ok: false, message: messageOf(error) };
  }
  return {
    ok: true,
    statements: childList(isNode(tree) ? tree : undefined, "stmts")
      .map((entry) => child(entry, "stmt"))
      .filter(isNode)
      .map(analyze),
  };
}

/**
 * Why a `CREATE FUNCTION` or `CREATE PROCEDURE` installs code dbport cannot
 * read, or null: only a `LANGUAGE sql` body is read and vetted where it is
 * called (pg_vet.ts). Any other language — plpgsql included — runs with the
 * login's powers behind a body dbport never reads: a write token on a
 * superuser login read server files, `pg_authid` and ran programs through
 * `pg_read_file`, `EXECUTE` and `COPY … FROM PROGRAM` inside a plpgsql
 * function it created, each refused when sent itself (outsider stop 53).
 * By allowlist: the language must be SQL.
 */
function opaqueFunction(body: Node): string | null {
  const what = body.is_procedure === true ? "PROCEDURE" : "FUNCTION";
  const definer = definerOf(childList(body, "options"));
  if (definer !== null) return `CREATE ${what} … ${definer}`;
  const language = childList(body, "options")
    .map((option) => child(option, "DefElem"))
    .find((definition) => definition?.defname === "language");
  const named = child(child(language, "arg"), "String")?.sval;
  const name = typeof named === "string"
    ? named.toLowerCase()
    : body.sql_body !== undefined
    ? "sql"
    : null;
  if (name === "sql") return null;
  return `CREATE ${what} in LANGUAGE ${
    name ?? "(none)"
  } installs code whose body dbport cannot read, to run with the login's powers (files, programs, any SQL); only LANGUAGE sql bodies are vetted`;
}

/**
 * Why options (`CREATE FUNCTION`'s, `ALTER FUNCTION`'s actions) make a
 * function SECURITY DEFINER, or null. Such a function runs with its owner's
 * powers for whoever calls it — a login reached through dbport lends its
 * rights to every role that may call the function, past dbport entirely.
 * By allowlist: a function a statement installs runs as its caller
 * (outsider stop 54).
 */
function definerOf(options: Node[]): string | null {
  for (const option of options) {
    const element = child(option, "DefElem");
    if (element?.defname !== "security") continue;
    const value = child(child(element, "arg"), "Boolean")?.boolval;
    if (value !== true) continue;
    return "SECURITY DEFINER installs code that runs with its owner's powers for whoever calls it; dbport lets a statement install only SECURITY INVOKER functions";
  }
  return null;
}

/** Why a statement kind installs code dbport refuses, by its body, or null. */
function installsCode(kind: string, body: Node): string | null {
  if (kind === "CreateFunctionStmt") return opaqueFunction(body);
  if (kind === "AlterFunctionStmt") {
    const definer = definerOf(childList(body, "actions"));
    return definer === null ? null : `ALTER FUNCTION … ${definer}`;
  }
  return grantsPower(kind, body) ?? changesForeignTable(kind, body);
}

/**
 * Role attributes that give a role more than its data: every privilege
 * check skipped, roles made and granted, the replication protocol (every
 * table's bytes), row security skipped.
 */
const POWER_ATTRIBUTES = new Set([
  "superuser",
  "createrole",
  "isreplication",
  "bypassrls",
]);

/**
 * Schemas of the server's own catalogs, and of their out-of-line values:
 * `pg_toast.pg_toast_1260` is pg_authid's TOAST table (outsider stop 55).
 * `pg_toast_temp_N` and `pg_temp_N` hold only temporary tables' rows (a
 * catalog is never temporary): the database's own data.
 */
const CATALOG_SCHEMAS = new Set([
  "pg_catalog",
  "information_schema",
  "pg_toast",
]);

/** `CREATE ROLE` options that make roles members of others. */
const MEMBERSHIP_OPTIONS: Readonly<Record<string, string>> = {
  addroleto: "IN ROLE",
  rolemembers: "ROLE|USER",
  adminmembers: "ADMIN",
};

/** The role names of a `DefElem`'s list (a membership option's). */
function roleNames(element: Node | undefined): string[] {
  return childList(child(child(element, "arg"), "List"), "items")
    .map((item) => String(child(item, "RoleSpec")?.rolename ?? ""));
}

/** Why a statement changes role membership, in words. */
function membership(what: string, roles: string[]): string {
  const named = roles.filter((role) => role !== "").join(", ");
  return `${what}${
    named === "" ? "" : ` (${named})`
  } changes role membership: a member gets every privilege of the role it is in (a superuser's, a predefined role's) and may SET ROLE to it; dbport leaves role membership to the server's administrator`;
}

/**
 * Why a GRANT, or a role's attributes or membership, hands a role the
 * server's powers rather than the database's data, or null. What dbport
 * refuses a statement by name — server files, programs, other sessions, the
 * password verifiers — a write token could otherwise hand to any role, its
 * own login's included, past dbport for good: a power attribute, a
 * privilege on the catalogs (`GRANT SELECT ON pg_authid TO PUBLIC`), or
 * membership in a role that holds them. Which roles hold them is not
 * guessed: `GRANT postgres TO r` made r a superuser through membership
 * (`SET ROLE postgres`) as `GRANT pg_read_server_files` hands files
 * (outsider stop 55). By allowlist: no statement changes role membership —
 * `GRANT|REVOKE role`, `CREATE ROLE … IN ROLE|ROLE|USER|ADMIN`, `ALTER GROUP
 * … ADD|DROP USER` (a REVOKE too: a RESTRICTIVE row-security policy for a
 * role stops restricting its former members) — and a statement grants the
 * database's own privileges on the database's own objects.
 */
function grantsPower(kind: string, body: Node): string | null {
  if (kind === "GrantRoleStmt") {
    const roles = childList(body, "granted_roles")
      .map((item) => String(child(item, "AccessPriv")?.priv_name ?? ""));
    return membership(
      `${body.is_grant === true ? "GRANT" : "REVOKE"} of a role`,
      roles,
    );
  }
  if (kind === "CreateRoleStmt" || kind === "AlterRoleStmt") {
    const group = String(child(body, "role")?.rolename ?? "");
    if (kind === "AlterRoleStmt" && group.startsWith("pg_")) {
      return `ALTER ROLE|GROUP ${group} changes a predefined role, which holds the server's powers; dbport leaves role membership and attributes to the server's administrator`;
    }
    for (const option of childList(body, "options")) {
      const element = child(option, "DefElem");
      const name = String(element?.defname ?? "");
      const arg = child(element, "arg");
      if (
        POWER_ATTRIBUTES.has(name) &&
        child(arg, "Boolean")?.boolval !== false
      ) {
        return `${kind === "CreateRoleStmt" ? "CREATE" : "ALTER"} ROLE … ${
          name === "isreplication" ? "replication" : name
        } hands a role powers beyond its data; dbport leaves role attributes to the server's administrator`;
      }
      if (Object.hasOwn(MEMBERSHIP_OPTIONS, name)) {
        // `ALTER GROUP g ADD|DROP USER u` is `rolemembers` on ALTER ROLE.
        return membership(
          kind === "AlterRoleStmt"
            ? `ALTER GROUP ${group} ADD|DROP USER`
            : `CREATE ROLE … ${MEMBERSHIP_OPTIONS[name]}`,
          roleNames(element),
        );
      }
    }
  }
  if (kind === "GrantStmt") {
    const verb = body.is_grant === true ? "GRANT" : "REVOKE";
    if (body.targtype === "ACL_TARGET_ALL_IN_SCHEMA") {
      const schema = childList(body, "objects")
        .map((item) => String(child(item, "String")?.sval ?? ""))
        .find((name) => CATALOG_SCHEMAS.has(name));
      if (schema !== undefined) {
        return `${verb} … ALL … IN SCHEMA ${schema} changes who may use the server's catalogs; dbport changes privileges on the database's own objects only`;
      }
    }
    for (const item of childList(body, "objects")) {
      const relation = child(item, "RangeVar");
      if (relation === undefined) continue;
      const schema = typeof relation.schemaname === "string"
        ? relation.schemaname
        : null;
      const name = String(relation.relname ?? "");
      // Unqualified, a `pg_` name is the catalog's: pg_catalog comes first
      // on every search path unless placed later on purpose.
      if (
        (schema !== null && CATALOG_SCHEMAS.has(schema)) ||
        (schema === null && name.startsWith("pg_"))
      ) {
        return `${verb} on ${
          schema === null ? name : `${schema}.${name}`
        } changes who may read the server's catalogs (pg_authid holds every role's password verifier); dbport changes privileges on the database's own objects only`;
      }
    }
  }
  return null;
}

/**
 * The fields naming the object a statement renames, moves, re-owns, alters
 * or (re)defines. Read by `changesCatalog`.
 */
const CHANGED_OBJECT: Readonly<Record<string, readonly string[]>> = {
  RenameStmt: ["relation", "object"],
  AlterObjectSchemaStmt: ["relation", "object", "newschema"],
  AlterOwnerStmt: ["relation", "object"],
  AlterFunctionStmt: ["func"],
  AlterOperatorStmt: ["opername"],
  AlterTypeStmt: ["typeName"],
  AlterEnumStmt: ["typeName"],
  AlterDomainStmt: ["typeName"],
  AlterTableStmt: ["relation"],
  AlterSeqStmt: ["sequence"],
  AlterOpFamilyStmt: ["opfamilyname"],
  AlterCollationStmt: ["collname"],
  AlterTSDictionaryStmt: ["dictname"],
  AlterTSConfigurationStmt: ["cfgname"],
  AlterObjectDependsStmt: ["relation", "object"],
  AlterStatsStmt: ["defnames"],
  CreateFunctionStmt: ["funcname"],
  ViewStmt: ["view"],
  RuleStmt: ["relation"],
  CreateTrigStmt: ["relation"],
  DefineStmt: ["defnames"],
  CreateOpClassStmt: ["opclassname", "opfamilyname"],
  CreateOpFamilyStmt: ["opfamilyname"],
  CreatePolicyStmt: ["table"],
  AlterPolicyStmt: ["table"],
};

/**
 * Whether a schema is one of the server's own (pg_catalog, pg_toast, …);
 * a session's temporary schema (pg_temp) is the database's.
 */
function catalogSchema(schema: string): boolean {
  return schema === "information_schema" ||
    (schema.startsWith("pg_") && !/^pg_temp(_[0-9]+)?$/.test(schema));
}

/**
 * The catalog object one field of a statement names (`schema.name`), or
 * null. Unqualified, a `pg_` name is taken for the catalog's: pg_catalog
 * comes first on every search path unless placed later on purpose.
 */
function catalogObject(value: unknown, schemaObject: boolean): string | null {
  if (typeof value === "string") {
    return catalogSchema(value) ? value : null;
  }
  if (!isNode(value) && !Array.isArray(value)) return null;
  const node = isNode(value) ? value : {};
  const relation = child(node, "RangeVar") ??
    (typeof node.relname === "string" ? node : undefined);
  let parts: string[];
  if (relation !== undefined) {
    parts = [
      ...(typeof relation.schemaname === "string" ? [relation.schemaname] : []),
      String(relation.relname ?? ""),
    ];
  } else if (Array.isArray(value)) {
    parts = names(value);
  } else {
    const withArgs = child(node, "ObjectWithArgs") ??
      (Array.isArray(node.objname) ? node : undefined);
    const typeName = child(node, "TypeName") ??
      (Array.isArray(node.names) ? node : undefined);
    const list = child(node, "List");
    const text = child(node, "String")?.sval;
    parts = withArgs !== undefined
      ? names(withArgs.objname)
      : typeName !== undefined
      ? names(typeName.names)
      : list !== undefined
      ? names(list.items)
      : typeof text === "string" && schemaObject
      ? [text, ""]
      : [];
  }
  if (parts.length === 0) return null;
  const schema = parts.length >= 2 ? parts.at(-2) ?? "" : null;
  const name = parts.at(-1) ?? "";
  if (schema !== null ? catalogSchema(schema) : name.startsWith("pg_")) {
    return schema === null || name === ""
      ? schema ?? name
      : `${schema}.${name}`;
  }
  return null;
}

/**
 * Why a statement changes an object of the server's own catalogs, or null:
 * renames, moves (SET SCHEMA), re-owns or alters a pg_catalog or
 * information_schema function, operator, type, table, … or defines one
 * there (CREATE OR REPLACE keeps a built-in's OID, which the allowlist
 * trusts). A built-in renamed inside a SQL function's body
 * (`alter function pg_catalog.pg_read_file(text) rename to x`) is then
 * called by a name no deny list knows (outsider stop 55). By allowlist:
 * a statement changes the database's own objects only.
 */
function changesCatalog(kind: string, body: Node): string | null {
  const fields = Object.hasOwn(CHANGED_OBJECT, kind)
    ? CHANGED_OBJECT[kind]
    : undefined;
  if (fields === undefined) return null;
  const type = String(body.renameType ?? body.objectType ?? "");
  const schemaObject = type === "OBJECT_SCHEMA";
  const named = [
    ...fields.map((field) => body[field]),
    ...(kind === "RenameStmt" && schemaObject ? [body.subname] : []),
  ].map((value) => catalogObject(value, schemaObject))
    .find((name) => name !== null);
  if (named === undefined || named === null) return null;
  return `${
    kind.replace(/Stmt$/, "")
  } changes ${named}, an object of the server's own catalogs (a built-in renamed or replaced escapes what dbport refuses by name); dbport changes the database's own objects only`;
}

/** Object kinds named as `[schema.]table.name`: the table is the object's. */
const ON_TABLE = new Set([
  "OBJECT_COLUMN",
  "OBJECT_TABCONSTRAINT",
  "OBJECT_TRIGGER",
  "OBJECT_RULE",
  "OBJECT_POLICY",
]);

/**
 * Why a GRANT|REVOKE or COMMENT changes an object of the server's own
 * catalogs, or null: `revoke execute on function pg_catalog.now() from
 * public` breaks every other user of the database, `comment on table
 * pg_catalog.pg_class`, `grant usage on schema pg_toast` change what the
 * server keeps for everyone (outsider stop 56). Unqualified function names
 * resolve to pg_catalog first: the catalog decides (pg_vet.ts
 * changesBuiltin).
 */
function touchesCatalog(kind: string, body: Node): string | null {
  const grant = kind === "GrantStmt" &&
    body.targtype === "ACL_TARGET_OBJECT";
  if (!grant && kind !== "CommentStmt") return null;
  const type = String(body.objtype ?? "");
  const objects: unknown[] = grant
    ? (Array.isArray(body.objects) ? body.objects : [])
    : [body.object];
  for (const object of objects) {
    const items = child(isNode(object) ? object : undefined, "List")?.items;
    const value = ON_TABLE.has(type) && Array.isArray(items)
      ? items.slice(0, -1)
      : object;
    const named = catalogObject(value, type === "OBJECT_SCHEMA");
    if (named === null) continue;
    return `${
      grant ? (body.is_grant === true ? "GRANT" : "REVOKE") : "COMMENT"
    } on ${named} changes an object of the server's own catalogs (its privileges and comments are every user's); dbport changes the database's own objects only`;
  }
  return null;
}

/** `REINDEX` kinds that rebuild the catalogs' indexes. */
const REINDEX_CATALOGS: Readonly<Record<string, string>> = {
  REINDEX_OBJECT_SYSTEM: "REINDEX SYSTEM",
  REINDEX_OBJECT_DATABASE: "REINDEX DATABASE",
};

/**
 * Why a VACUUM, ANALYZE, REINDEX or CLUSTER locks the server's own
 * catalogs, or null. `vacuum full pg_catalog.pg_authid`, `reindex table
 * pg_authid`, `reindex system db`, `cluster pg_class` hold ACCESS
 * EXCLUSIVE (ANALYZE a SHARE UPDATE EXCLUSIVE) locks on catalogs every
 * session's login and lookups wait on (outsider stop 56). By allowlist: the
 * relations named must be the database's own; REINDEX SYSTEM|DATABASE
 * (catalogs included) and VACUUM FULL of every table are refused.
 */
function locksCatalog(kind: string, body: Node): string | null {
  const verb = kind === "VacuumStmt"
    ? (body.is_vacuumcmd === true ? "VACUUM" : "ANALYZE")
    : kind === "ReindexStmt"
    ? "REINDEX"
    : kind === "ClusterStmt"
    ? "CLUSTER"
    : kind === "LockStmt"
    ? "LOCK"
    : null;
  if (verb === null) return null;
  const why =
    "locks the server's own catalogs, which every session's login and lookups wait on; dbport maintains the database's own tables only";
  const whole = REINDEX_CATALOGS[String(body.kind ?? "")];
  if (kind === "ReindexStmt" && whole !== undefined) return `${whole} ${why}`;
  if (
    kind === "ReindexStmt" && body.kind === "REINDEX_OBJECT_SCHEMA" &&
    typeof body.name === "string" && catalogSchema(body.name)
  ) return `REINDEX SCHEMA ${body.name} ${why}`;
  const relations = kind === "VacuumStmt"
    ? childList(body, "rels").map((item) =>
      child(child(item, "VacuumRelation"), "relation")
    )
    : kind === "LockStmt"
    ? childList(body, "relations").map((item) => child(item, "RangeVar"))
    : [child(body, "relation")];
  for (const relation of relations) {
    const named = catalogObject(relation, false);
    if (named !== null) return `${verb} ${named} ${why}`;
  }
  if (
    kind === "VacuumStmt" && relations.length === 0 &&
    childList(body, "options").some((option) => fullOption(option))
  ) return `VACUUM FULL of every table ${why}`;
  return null;
}

/** Whether a VACUUM option is `FULL` (not `FULL false|off|0`). */
function fullOption(option: Node): boolean {
  const element = child(option, "DefElem");
  if (element?.defname !== "full") return false;
  const arg = child(element, "arg");
  if (arg === undefined) return true;
  const text = child(arg, "String")?.sval;
  return !(child(arg, "Boolean")?.boolval === false ||
    (typeof text === "string" &&
      ["false", "off", "no", "0"].includes(text.toLowerCase())) ||
    (child(arg, "Integer") !== undefined &&
      (child(arg, "Integer")?.ival ?? 0) === 0));
}

/**
 * The field of a statement that creates an object naming it (a RangeVar or
 * a name list), for {@linkcode createsInCatalog}.
 */
const CREATED_OBJECT: Readonly<Record<string, readonly [string, string]>> = {
  CreateStmt: ["relation", "CREATE TABLE"],
  CompositeTypeStmt: ["typevar", "CREATE TYPE"],
  CreateEnumStmt: ["typeName", "CREATE TYPE … AS ENUM"],
  CreateRangeStmt: ["typeName", "CREATE TYPE … AS RANGE"],
  CreateDomainStmt: ["domainname", "CREATE DOMAIN"],
  CreateSeqStmt: ["sequence", "CREATE SEQUENCE"],
  CreateStatsStmt: ["defnames", "CREATE STATISTICS"],
};

/**
 * Why a statement creates an object in a catalog schema, or null: `CREATE
 * TYPE pg_catalog.t AS ENUM (…)`, `CREATE DOMAIN pg_catalog.d` put a name
 * of the user's first on every search path (notice56, stop 57); an index
 * on a catalog table changes it. Creating names a schema explicitly: an
 * unqualified `pg_x` is created in the first schema of the path, never in
 * pg_catalog.
 */
function createsInCatalog(kind: string, body: Node): string | null {
  if (kind === "IndexStmt") {
    const table = catalogObject(body.relation, false);
    return table === null
      ? null
      : `CREATE INDEX on ${table} changes an object of the server's own catalogs; dbport changes the database's own objects only`;
  }
  const created = Object.hasOwn(CREATED_OBJECT, kind)
    ? CREATED_OBJECT[kind]
    : undefined;
  if (created === undefined) return null;
  const [field, words] = created;
  const named = catalogObject(body[field], false);
  if (named === null || !named.includes(".")) return null;
  return `${words} ${named} creates an object in the server's own catalogs; dbport changes the database's own objects only`;
}

/** Read one statement's tree. */
export function analyze(statement: Node): PgAnalysis {
  const [kind = "", value] = Object.entries(statement)[0] ?? [];
  const body = isNode(value) ? value : {};
  const found: PgAnalysis = {
    tier: "read",
    dangerous: false,
    reach: REACH_STATEMENTS[kind] ?? installsCode(kind, body) ??
      changesCatalog(kind, body) ?? createsInCatalog(kind, body) ??
      outsideDatabase(kind, body) ??
      touchesCatalog(kind, body) ?? locksCatalog(kind, body),
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

function names(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((item) =>
    String(isNode(item) ? child(item, "String")?.sval ?? "" : "")
  );
}

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
  // By own key only: a tree's keys include `constructor` (JsonArrayAgg's).
  const syntax =
    (Object.hasOwn(NEWER_SYNTAX, key) ? NEWER_SYNTAX[key] : null) ??
      (key === "JsonFuncExpr"
        ? [JSON_FUNCTIONS[String(node.op)] ?? "json_value", 170000] as const
        : undefined);
  if (syntax !== undefined) {
    // Any arity: every candidate of the name on the path is vetted.
    const [name, before] = syntax;
    found.functions.push({ schema: null, name, args: null, before });
  } else if (key === "FuncCall" || key === "funccall") {
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
  } else if (key === "DefineStmt") {
    found.functions.push(...supportFunctions(node));
  } else if (
    (key === "GrantStmt" || key === "CommentStmt") &&
    ROUTINE_OBJECTS.has(String(node.objtype))
  ) {
    // `GRANT EXECUTE ON FUNCTION pg_read_file(text) TO PUBLIC` runs nothing
    // but hands what dbport refuses by name to every role: the functions
    // it names are vetted as calls (outsider stop 54's left-over). A
    // built-in among them is a catalog object (pg_vet.ts changesBuiltin).
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
  } else if (key === "CreateCastStmt") {
    // `WITH FUNCTION f(…)`: every use of the cast runs it.
    const func = child(node, "func");
    const parts = names(func?.objname);
    if (parts.length > 0) {
      const args = Array.isArray(func?.objargs) ? func.objargs.length : null;
      found.functions.push({ ...pgName(parts), args });
    }
  } else if (key === "A_Expr") {
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
  } else if (key === "typeName" || key === "TypeName") {
    // Every type a value is converted to runs that type's domain checks: a
    // cast, a column definition list (`json_to_record(..) AS x(d dom)`), an
    // XMLTABLE column, `XMLSERIALIZE(.. AS dom)`, a JSON RETURNING clause.
    // Read wherever a type name stands, not from a list of node kinds.
    const typeNames = names(node.names);
    if (typeNames.length > 0) found.castTypes.push(pgName(typeNames));
  } else if (key === "RangeTableSample") {
    found.functions.push({ ...pgName(names(node.method)), args: 1 });
  } else if (key === "ColumnRef") {
    // `t.f` is f(t) when t has no column f.
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
  } else if (key === "A_Indirection") {
    for (const name of names(node.indirection)) {
      if (name === "") continue;
      found.functions.push({ schema: null, name, args: 1, optional: true });
    }
  }
}

const ORDER: Record<Tier, number> = { read: 0, write: 1, destructive: 2 };

function higher(a: Tier, b: Tier): Tier {
  return ORDER[a] >= ORDER[b] ? a : b;
}
