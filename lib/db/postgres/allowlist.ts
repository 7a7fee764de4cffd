/**
 * dbport's allowlist of PostgreSQL built-in functions that have no effect
 * beyond their result (allowlist.json, generated and reviewed as README.md in
 * this folder says). A built-in function is known by its OID, which
 * PostgreSQL fixes in its own sources; one missing from the file (a newer
 * server's, or an excluded family's) is not a read.
 *
 * @module
 */

import list from "./allowlist.json" with { type: "json" };

/** The file's shape: signatures by category, each `[oid, "name(args)"]`. */
export interface AllowlistFile {
  generatedFrom: string;
  functions: Record<string, [number, string][]>;
}

const FILE = list as unknown as AllowlistFile;

const ALLOWED: ReadonlySet<number> = new Set(
  Object.values(FILE.functions).flatMap((entries) =>
    entries.map(([oid]) => oid)
  ),
);

/** Whether the built-in function `oid` is on the allowlist. */
export function allowlisted(oid: number): boolean {
  return ALLOWED.has(oid);
}

/** Every entry, for tests and review. */
export function allowlistEntries(): [number, string][] {
  return Object.values(FILE.functions).flat();
}
