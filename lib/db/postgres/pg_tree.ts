/**
 * Reading libpg_query's JSON parse tree: a node, its child nodes and name
 * lists (pg_parse.ts and the rules it applies, pg_reach.ts).
 *
 * @module
 */

export type Node = Record<string, unknown>;

/** Whether a value of the parse tree is a node (an object, not a list). */
export function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The node under `key`, if it is one. */
export function child(node: Node | undefined, key: string): Node | undefined {
  const value = node?.[key];
  return isNode(value) ? value : undefined;
}

/** The nodes of the list under `key` (none when it is absent). */
export function childList(node: Node | undefined, key: string): Node[] {
  const value = node?.[key];
  return Array.isArray(value) ? value.filter(isNode) : [];
}

/** The strings of a name list (`schema.name` parts). */
export function names(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((item) =>
    String(isNode(item) ? child(item, "String")?.sval ?? "" : "")
  );
}

/** Object kinds named `[schema.]table.name`: the table is what changes. */
export const ON_TABLE: ReadonlySet<string> = new Set([
  "OBJECT_COLUMN",
  "OBJECT_TABCONSTRAINT",
  "OBJECT_TRIGGER",
  "OBJECT_RULE",
  "OBJECT_POLICY",
]);
