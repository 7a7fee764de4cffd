/**
 * The existing objects a statement changes by name - commented on,
 * granted on, dropped, renamed, moved, altered, or given a trigger, rule,
 * policy or index - as the catalog resolves them (pg_builtin_targets.ts):
 * the text PostgreSQL's own `to_regclass`, `to_regtype`,
 * `to_regprocedure` and `to_regoperator` read, or a schema and name looked
 * up on the search path. An unqualified name is resolved by the server on
 * the search path, pg_catalog first unless placed later on purpose: only
 * the catalog can tell `comment on type int4` (a built-in) from a type of
 * the database's own.
 *
 * Extended statistics are left out (none is built in); a schema is named
 * exactly, never on the search path, and looked up so (`drop schema
 * information_schema cascade` dropped the catalog's views for a fullAccess
 * token, which the parser's check of schema names missed: only GRANT,
 * COMMENT and RENAME named one). Kinds the statement-kind allowlist refuses
 * (languages, conversions, casts, ...) never reach this.
 *
 * @module
 */

import { child, isNode, names, type Node, ON_TABLE } from "./pg_tree.ts";
import type { PgNamedObject, PgObjectKind } from "./pg_parse_types.ts";

/** Object kinds named by a relation: the relation is the object. */
const RELATIONS = new Set([
  "OBJECT_TABLE",
  "OBJECT_VIEW",
  "OBJECT_MATVIEW",
  "OBJECT_INDEX",
  "OBJECT_SEQUENCE",
  "OBJECT_FOREIGN_TABLE",
  // ALTER TYPE ... RENAME ATTRIBUTE: a composite type's relation.
  "OBJECT_ATTRIBUTE",
]);

/** Object kinds that are routines (a name and argument types). */
const ROUTINES = new Set([
  "OBJECT_FUNCTION",
  "OBJECT_PROCEDURE",
  "OBJECT_ROUTINE",
  "OBJECT_AGGREGATE",
]);

/** Object kinds looked up by schema and name on the search path. */
const BY_NAME: Readonly<Record<string, PgObjectKind>> = {
  OBJECT_COLLATION: "c",
  OBJECT_TSCONFIGURATION: "g",
  OBJECT_TSDICTIONARY: "d",
};

/** `name` as a quoted identifier (`"a""b"`). */
function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A relation or type from its name parts. */
function named(kind: "r" | "t", parts: string[], suffix = ""): PgNamedObject {
  return {
    k: kind,
    t: parts.map(quoted).join(".") + suffix,
    w: parts.join(".") + suffix,
  };
}

/** A `TypeName` node's fields, bare or under its node name. */
function typeNameOf(value: unknown): Node | undefined {
  const node = isNode(value) ? value : undefined;
  return child(node, "TypeName") ??
    (Array.isArray(node?.names) ? node : undefined);
}

/** A type as `to_regtype` reads it; null for `%TYPE` (a column's type). */
function typeText(type: Node): { t: string; w: string } | null {
  if (type.pct_type === true) return null;
  const parts = names(type.names);
  const bounds = Array.isArray(type.arrayBounds) ? type.arrayBounds.length : 0;
  return {
    t: parts.map(quoted).join(".") + "[]".repeat(bounds),
    w: parts.join(".") + "[]".repeat(bounds),
  };
}

/**
 * A routine or operator (`ObjectWithArgs`) as `to_regprocedure`,
 * `to_regproc` (arguments left out: the name must be unique) or
 * `to_regoperator` reads it.
 */
function withArgs(node: Node, operator: boolean): PgNamedObject {
  const parts = names(node.objname);
  const name = parts.at(-1) ?? "";
  const schema = parts.slice(0, -1);
  const head = [...schema.map(quoted), operator ? name : quoted(name)]
    .join(".");
  const written = parts.join(".");
  if (!operator && node.args_unspecified === true) {
    return { k: "p", t: head, w: written };
  }
  const args: { t: string; w: string }[] = [];
  for (const arg of Array.isArray(node.objargs) ? node.objargs : []) {
    const type = typeNameOf(arg);
    // An operator's missing side (`-(NONE, int4)`) is an empty node.
    if (type === undefined) {
      args.push({ t: "NONE", w: "NONE" });
      continue;
    }
    const text = typeText(type);
    if (text === null) return { k: "x", t: "", w: `${written}(...%TYPE)` };
    args.push(text);
  }
  return {
    k: operator ? "o" : "f",
    t: `${head}(${args.map((arg) => arg.t).join(",")})`,
    w: `${written}(${args.map((arg) => arg.w).join(", ")})`,
  };
}

/** The relation a `RangeVar` (bare or under its node name) names. */
function relationOf(value: unknown): PgNamedObject | null {
  const node = isNode(value) ? value : undefined;
  const relation = child(node, "RangeVar") ??
    (typeof node?.relname === "string" ? node : undefined);
  if (relation === undefined) return null;
  return named("r", [
    ...(typeof relation.schemaname === "string" ? [relation.schemaname] : []),
    String(relation.relname),
  ]);
}

/** The name parts of a `List` of strings, or of a bare name list. */
function partsOf(value: unknown): string[] {
  if (Array.isArray(value)) return names(value);
  const items = child(isNode(value) ? value : undefined, "List")?.items;
  return Array.isArray(items) ? names(items) : [];
}

/** The object of kind `type` that one node of a statement names, or null. */
export function objectOf(type: string, value: unknown): PgNamedObject | null {
  if (type === "OBJECT_SCHEMA") {
    const name = typeof value === "string"
      ? value
      : child(isNode(value) ? value : undefined, "String")?.sval;
    return typeof name === "string"
      ? { k: "s", t: "", s: null, n: name, w: name }
      : null;
  }
  const relation = relationOf(value);
  if (relation !== null) return relation;
  const node = isNode(value) ? value : undefined;
  const routine = child(node, "ObjectWithArgs") ??
    (Array.isArray(node?.objname) ? node : undefined);
  if (routine !== undefined) {
    return ROUTINES.has(type) || type === "OBJECT_OPERATOR"
      ? withArgs(routine, type === "OBJECT_OPERATOR")
      : null;
  }
  if (type === "OBJECT_TYPE" || type === "OBJECT_DOMAIN") {
    const typeName = typeNameOf(value);
    if (typeName !== undefined) {
      const text = typeText(typeName);
      return text === null ? null : { k: "t", ...text };
    }
    const parts = partsOf(value);
    return parts.length === 0 ? null : named("t", parts);
  }
  if (type === "OBJECT_DOMCONSTRAINT") {
    // COMMENT ON CONSTRAINT c ON DOMAIN d: (TypeName d, c); a rename: (d).
    const items = child(node, "List")?.items;
    const first = Array.isArray(items) ? typeNameOf(items[0]) : undefined;
    if (first !== undefined) return objectOf("OBJECT_TYPE", first);
    return objectOf("OBJECT_TYPE", value);
  }
  const parts = partsOf(value);
  if (parts.length === 0) return null;
  if (RELATIONS.has(type)) return named("r", parts);
  if (ON_TABLE.has(type)) {
    return parts.length < 2 ? null : named("r", parts.slice(0, -1));
  }
  const kind = BY_NAME[type];
  if (kind === undefined) return null;
  const name = parts.at(-1) ?? "";
  return {
    k: kind,
    t: "",
    s: parts.length >= 2 ? parts.at(-2) ?? null : null,
    n: name,
    w: parts.join("."),
  };
}

/** The field naming the kind of object a statement acts on. */
const TYPE_FIELD: Readonly<Record<string, string>> = {
  CommentStmt: "objtype",
  GrantStmt: "objtype",
  DropStmt: "removeType",
  RenameStmt: "renameType",
  AlterObjectSchemaStmt: "objectType",
  AlterFunctionStmt: "objtype",
};

/**
 * Statements that name what they change in one field, always of one kind:
 * the field and the kind.
 */
const ONE_OBJECT: Readonly<Record<string, readonly [string, string]>> = {
  AlterDomainStmt: ["typeName", "OBJECT_DOMAIN"],
  AlterEnumStmt: ["typeName", "OBJECT_TYPE"],
  AlterCollationStmt: ["collname", "OBJECT_COLLATION"],
  AlterTSDictionaryStmt: ["dictname", "OBJECT_TSDICTIONARY"],
  AlterTSConfigurationStmt: ["cfgname", "OBJECT_TSCONFIGURATION"],
  AlterTableStmt: ["relation", "OBJECT_TABLE"],
  AlterSeqStmt: ["sequence", "OBJECT_SEQUENCE"],
  // A trigger, rule, policy or index changes the table it is on.
  CreateTrigStmt: ["relation", "OBJECT_TABLE"],
  RuleStmt: ["relation", "OBJECT_TABLE"],
  CreatePolicyStmt: ["table", "OBJECT_TABLE"],
  AlterPolicyStmt: ["table", "OBJECT_TABLE"],
  IndexStmt: ["relation", "OBJECT_TABLE"],
};

/** The nodes naming what a statement of a `TYPE_FIELD` kind changes. */
function namingNodes(kind: string, body: Node): unknown[] {
  if (kind === "GrantStmt") {
    if (body.targtype !== "ACL_TARGET_OBJECT") return [];
    return Array.isArray(body.objects) ? body.objects : [];
  }
  if (kind === "DropStmt") {
    return Array.isArray(body.objects) ? body.objects : [];
  }
  if (kind === "AlterFunctionStmt") return [body.func];
  // ALTER SCHEMA s RENAME: the schema's name alone.
  return [body.relation ?? body.object ?? body.subname];
}

/**
 * The existing objects a statement of `kind` changes by name (none for a
 * statement that changes none, or only a schema or statistics).
 */
export function namedObjects(kind: string, body: Node): PgNamedObject[] {
  const field = TYPE_FIELD[kind];
  const one = Object.hasOwn(ONE_OBJECT, kind) ? ONE_OBJECT[kind] : undefined;
  const type = field !== undefined ? String(body[field] ?? "") : one?.[1];
  if (type === undefined) return [];
  const nodes = field !== undefined
    ? namingNodes(kind, body)
    : [body[one?.[0] ?? ""]];
  return nodes.map((node) => objectOf(type, node))
    .filter((object): object is PgNamedObject => object !== null)
    .map((object) => ({ ...object, v: kind }));
}
