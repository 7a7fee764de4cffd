/**
 * Secrets kept outside connections.json (docs/connections.md "Passwords
 * outside the file"): `passwordEnv` names an environment variable of the
 * server; `passwordCommand` is a program run without a shell (a password
 * manager's CLI, the OS keychain) whose standard output is the secret. The
 * command runs when the connection is first opened and again after an
 * authentication failure, never more; a failure names the command, never
 * what it printed.
 *
 * @module
 */

import { DbError } from "./errors.ts";

/** Where a secret comes from. */
export interface SecretSource {
  env?: string;
  command?: readonly string[];
}

/** How long a password command may take (a manager may ask to unlock). */
export const COMMAND_TIMEOUT_MS = 60_000;

/** A secret read once and kept until it is found wrong. */
export class SecretCache {
  readonly #source: SecretSource;
  readonly #what: string;
  #value: Promise<string> | null = null;

  /** `what` names the secret in errors ("the password of \"Shop\""). */
  constructor(source: SecretSource, what: string) {
    this.#source = source;
    this.#what = what;
  }

  /** The secret, reading it when it is not known yet. */
  get(): Promise<string> {
    if (this.#value === null) {
      const value = readSecret(this.#source, this.#what);
      this.#value = value;
      value.catch(() => {
        if (this.#value === value) this.#value = null;
      });
    }
    return this.#value;
  }

  /** Forget it (an authentication failure): the next use reads it again. */
  forget(): void {
    this.#value = null;
  }
}

/** Read a secret from its source. */
export async function readSecret(
  source: SecretSource,
  what: string,
): Promise<string> {
  if (source.env !== undefined) {
    const value = Deno.env.get(source.env);
    if (value === undefined || value === "") {
      throw new DbError(
        "connect",
        `${what} comes from the environment variable ${source.env}, which the server does not have`,
      );
    }
    return value;
  }
  const argv = source.command ?? [];
  const program = argv[0];
  if (program === undefined) {
    throw new DbError("connect", `${what} has no source`);
  }
  const named = JSON.stringify(program);
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(program, {
      args: argv.slice(1),
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      signal: AbortSignal.timeout(COMMAND_TIMEOUT_MS),
    }).output();
  } catch (error) {
    throw new DbError(
      "connect",
      `${what} comes from the command ${named}, which could not be run${
        error instanceof Deno.errors.NotFound ? " (not found)" : ""
      }`,
    );
  }
  if (!output.success) {
    throw new DbError(
      "connect",
      `${what} comes from the command ${named}, which failed (exit ${output.code})`,
    );
  }
  // One trailing line break is the command's, not the secret's.
  const secret = new TextDecoder().decode(output.stdout).replace(/\r?\n$/, "");
  if (secret === "") {
    throw new DbError(
      "connect",
      `${what} comes from the command ${named}, which printed nothing`,
    );
  }
  return secret;
}
