/**
 * What in a PostgreSQL statement reaches past the database's own data and
 * schema, read from its parse tree (pg_parse.ts `analyze`): statements that
 * reach files, code or other hosts, functions in a language dbport cannot
 * read or SECURITY DEFINER, grants of the server's powers and role
 * membership, changes of foreign tables, objects of the server's own
 * catalogs changed, created, granted, commented on or locked. Each rule
 * gives the reason a message names, or null.
 *
 * @module
 */

import { outsideDatabase } from "./pg_statement_kinds.ts";
import {
  child,
  childList,
  isNode,
  names,
  type Node,
  ON_TABLE,
} from "./pg_tree.ts";

/** Statements that reach files, code or other hosts: refused whatever the tier. */
export const REACH_STATEMENTS: Readonly<Record<string, string>> = {
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
export function installsCode(kind: string, body: Node): string | null {
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

/**
 * Why a GRANT|REVOKE or COMMENT changes an object of the server's own
 * catalogs, or null: `revoke execute on function pg_catalog.now() from
 * public` breaks every other user of the database, `comment on table
 * pg_catalog.pg_class`, `grant usage on schema pg_toast` change what the
 * server keeps for everyone (outsider stop 56). Unqualified names resolve
 * with pg_catalog first: the catalog decides what any name is
 * (pg_builtin_targets.ts), this only what a written name says.
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
  // CREATE TABLE … AS, CREATE MATERIALIZED VIEW, SELECT … INTO (outsider
  // stop 58): the relation their INTO clause names.
  const into = kind === "CreateTableAsStmt"
    ? child(body, "into")
    : kind === "SelectStmt"
    ? child(body, "intoClause")
    : undefined;
  if (into !== undefined) {
    const named = catalogObject(child(into, "rel"), false);
    return named === null || !named.includes(".")
      ? null
      : `${
        kind === "SelectStmt" ? "SELECT … INTO" : "CREATE … AS"
      } ${named} creates an object in the server's own catalogs; dbport changes the database's own objects only`;
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

/**
 * Why a top-level statement of `kind` reaches past the database's own data
 * and schema, or null: the rules above, then the allowlist of statement
 * kinds (pg_statement_kinds.ts).
 */
export function statementReach(kind: string, body: Node): string | null {
  return REACH_STATEMENTS[kind] ?? installsCode(kind, body) ??
    changesCatalog(kind, body) ?? createsInCatalog(kind, body) ??
    outsideDatabase(kind, body) ?? touchesCatalog(kind, body) ??
    locksCatalog(kind, body);
}
