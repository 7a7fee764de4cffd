/**
 * Secrets kept outside connections.json (docs/connections.md "Passwords
 * outside the file"): `passwordEnv` names an environment variable of the
 * server; `passwordCommand` is a program run without a shell (a password
 * manager's CLI, the OS keychain) whose standard output is the secret. The
 * command runs when the connection is first opened and again after an
 * authentication failure, never more; a failure never says what it
 * printed, and names the program (its path) only to the owner's own
 * terminal: a client is told "its passwordCommand" (a path says where the
 * user keeps their password manager and what it is).
 *
 * @module
 */

import { DbError } from "./errors.ts";

/** Where a secret comes from. */
export interface SecretSource {
  env?: string;
  command?: readonly string[];
}

/** Who reads a failure: an MCP client, or the owner at their terminal. */
export type SecretAudience = "clients" | "owner";

/** How long a password command may take (a manager may ask to unlock). */
export const COMMAND_TIMEOUT_MS = 60_000;

/** A secret read once and kept until it is found wrong. */
export class SecretCache {
  readonly #source: SecretSource;
  readonly #what: string;
  readonly #audience: SecretAudience;
  #value: Promise<string> | null = null;

  /** `what` names the secret in errors ("the password of \"Shop\""). */
  constructor(
    source: SecretSource,
    what: string,
    audience: SecretAudience = "clients",
  ) {
    this.#source = source;
    this.#what = what;
    this.#audience = audience;
  }

  /** The secret, reading it when it is not known yet. */
  get(): Promise<string> {
    if (this.#value === null) {
      const value = readSecret(this.#source, this.#what, this.#audience);
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

/**
 * Read a secret from its source. A failure names the command's program
 * for the owner only; for clients (the default) it says "its
 * passwordCommand".
 */
export async function readSecret(
  source: SecretSource,
  what: string,
  audience: SecretAudience = "clients",
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
  const named = audience === "owner"
    ? `the command ${JSON.stringify(program)}`
    : "its passwordCommand (the owner's `deno task dbport connections test` names the program)";
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
      `${what} comes from ${named}, which could not be run${
        error instanceof Deno.errors.NotFound ? " (not found)" : ""
      }`,
    );
  }
  if (!output.success) {
    throw new DbError(
      "connect",
      `${what} comes from ${named}, which failed (exit ${output.code})`,
    );
  }
  // One trailing line break is the command's, not the secret's.
  const secret = new TextDecoder().decode(output.stdout).replace(/\r?\n$/, "");
  if (secret === "") {
    throw new DbError(
      "connect",
      `${what} comes from ${named}, which printed nothing`,
    );
  }
  return secret;
}
