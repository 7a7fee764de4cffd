/**
 * Quoting identifiers for the SQL dbport writes itself (DDL rendering).
 *
 * @module
 */

import { type Engine, ENGINES } from "../engines.ts";

/** Quote an identifier the engine's way, doubling the quote inside it. */
export function quoteIdent(name: string, engine: Engine): string {
  const quote = ENGINES[engine].identifierQuote;
  return quote + name.replaceAll(quote, quote + quote) + quote;
}
