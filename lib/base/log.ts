// deno-lint-ignore-file no-console
/**
 * Diagnostics go to stderr, always: stdout belongs to protocol traffic in the
 * bridge and to command output in the CLI.
 *
 * @module
 */

/** A sink for diagnostic lines. */
export type Logger = (line: string) => void;

/** Write one line to stderr. */
export const stderrLogger: Logger = (line) => console.error(line);

/** A logger that drops everything (tests that assert on other output). */
export const silentLogger: Logger = () => {};
