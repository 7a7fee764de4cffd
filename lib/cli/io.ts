// deno-lint-ignore-file no-console
/**
 * Where the management CLI writes: stdout for results, stderr for problems.
 * Injectable so commands can be tested in-process.
 *
 * @module
 */

/** The CLI's output. */
export interface CliIO {
  out(line: string): void;
  err(line: string): void;
}

/** The process's own stdout and stderr. */
export const consoleIO: CliIO = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
};

/** A usage error: the command line itself is wrong (exit status 2). */
export class UsageError extends Error {
  override name = "UsageError";
}
