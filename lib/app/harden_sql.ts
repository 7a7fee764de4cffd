/**
 * How the AI login's plan, run, proof and drop (harden.ts) speak to the
 * server: the options of their reads and writes (as the saved login, or the
 * new login proving itself) and the SQL string literal their statements
 * quote names and passwords with.
 *
 * @module
 */

/** A call of harden's: never stopped by a caller, 30 s at most. */
export const CALL = { signal: new AbortController().signal, timeoutMs: 30_000 };
/** A write of harden's statements (a few rows at most). */
export const WRITE = {
  ...CALL,
  mode: "write" as const,
  maxRows: 100,
  maxBytes: 1_000_000,
  maxCellChars: 10_000,
};
/** A read of harden's (the same bounds). */
export const READ = { ...WRITE, mode: "read" as const };

/** A SQL string literal. */
export function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
