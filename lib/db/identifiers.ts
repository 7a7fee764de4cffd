/**
 * Quoting identifiers for the SQL dbport writes itself (DDL rendering).
 *
 * @module
 */

import type { Engine } from "./types.ts";

/** Quote an identifier the engine's way, doubling the quote inside it. */
export function quoteIdent(name: string, engine: Engine): string {
  return engine === "mysql"
    ? "`" + name.replaceAll("`", "``") + "`"
    : '"' + name.replaceAll('"', '""') + '"';
}
