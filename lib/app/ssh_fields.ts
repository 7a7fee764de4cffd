/**
 * The SSH setting and the password source of a connection from named
 * fields — the CLI's flags (`--ssh`, `--ssh-key`, …) or the console's form
 * fields of the same names — each checked as connections.json is.
 *
 * @module
 */

import { parseJump, type SshSetting } from "../db/ssh/setting.ts";
import { checkConnectionField, type SavedConnection } from "./connections.ts";

/** A field that is not valid: its message names it and what is allowed. */
export class FieldError extends Error {
  override name = "FieldError";
}

/** Fields by name (a flag's value, or true for a flag without one). */
export type Flags = Readonly<Record<string, string | boolean | undefined>>;

/** The SSH fields, by their flag names. */
export const SSH_FLAGS = [
  "ssh",
  "ssh-key",
  "ssh-jump",
  "ssh-config-host",
  "ssh-password",
  "ssh-password-env",
  "ssh-password-command",
] as const;

function text(flags: Flags, name: string): string | undefined {
  const value = flags[name];
  return typeof value === "string" ? value : undefined;
}

/** Split a command line into words: spaces separate, quotes group. */
export function commandWords(text: string): string[] {
  const words: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (const match of text.matchAll(pattern)) {
    words.push(
      match[1] !== undefined
        ? match[1].replace(/\\(.)/g, "$1")
        : match[2] ?? match[3]!,
    );
  }
  return words;
}

/** What a connection's fields change: values set, and keys removed. */
interface FieldChanges {
  fields: Partial<SavedConnection>;
  remove: (keyof SavedConnection)[];
}

/**
 * What the flags change: the `ssh` setting (or its removal) and the password
 * source. `current` is the connection being changed (set), if any.
 */
export function sshFields(
  command: string,
  flags: Flags,
  current: SavedConnection | undefined,
): FieldChanges {
  const changes: FieldChanges = { fields: {}, remove: [] };
  passwordSource(command, flags, changes);
  if (flags["no-ssh"] === true) {
    if (Object.keys(flags).some((flag) => flag.startsWith("ssh"))) {
      throw new FieldError(
        `${command}: --no-ssh goes alone, without other --ssh flags`,
      );
    }
    changes.remove.push("ssh");
    return changes;
  }
  const given = SSH_FLAGS.filter((flag) =>
    flag.startsWith("ssh") && flags[flag] !== undefined
  );
  if (given.length === 0) return changes;
  const ssh: SshSetting =
    given.includes("ssh") || given.includes("ssh-config-host")
      ? {}
      : { ...current?.ssh };
  sshTarget(command, flags, ssh);
  const key = text(flags, "ssh-key");
  if (key !== undefined) ssh.identityFile = key;
  const jump = text(flags, "ssh-jump");
  if (jump !== undefined) ssh.jump = jump;
  sshSecret(command, flags, ssh);
  const problem = checkConnectionField("ssh", ssh);
  if (problem !== null) {
    throw new FieldError(`${command}: the SSH settings ${problem}`);
  }
  changes.fields.ssh = ssh;
  return changes;
}

/** The database password's source (`--password-env`, `--password-command`). */
function passwordSource(
  command: string,
  flags: Flags,
  { fields, remove }: FieldChanges,
): void {
  const passwordEnv = text(flags, "password-env");
  const passwordCommand = text(flags, "password-command");
  if (passwordEnv !== undefined && passwordCommand !== undefined) {
    throw new FieldError(
      `${command}: give --password-env or --password-command, not both`,
    );
  }
  if (passwordEnv !== undefined) {
    fields.passwordEnv = passwordEnv;
    remove.push("passwordCommand", "password");
  }
  if (passwordCommand !== undefined) {
    fields.passwordCommand = commandWords(passwordCommand);
    remove.push("passwordEnv", "password");
  }
  for (const key of ["passwordEnv", "passwordCommand"] as const) {
    const value = fields[key];
    if (value === undefined) continue;
    const problem = checkConnectionField(key, value);
    if (problem !== null) {
      throw new FieldError(
        `${command}: --${
          key === "passwordEnv" ? "password-env" : "password-command"
        } ${problem}`,
      );
    }
  }
}

/** Where the tunnel goes: `--ssh user@host[:port]` or `--ssh-config-host`. */
function sshTarget(command: string, flags: Flags, ssh: SshSetting): void {
  const target = text(flags, "ssh");
  const configHost = text(flags, "ssh-config-host");
  if (target !== undefined && configHost !== undefined) {
    throw new FieldError(
      `${command}: give --ssh or --ssh-config-host, not both`,
    );
  }
  if (target !== undefined) {
    const hop = parseJump(target)?.[0];
    if (hop === undefined || hop.user === undefined || target.includes(",")) {
      throw new FieldError(
        `${command}: --ssh must read user@host[:port], got "${target}"`,
      );
    }
    ssh.host = hop.host;
    ssh.user = hop.user;
    if (hop.port !== undefined) ssh.port = hop.port;
  }
  if (configHost !== undefined) ssh.configHost = configHost;
}

/**
 * The tunnel's secret: one of a password (a key's passphrase where a key
 * or a config host is given), its environment variable or its command,
 * replacing whichever was saved.
 */
function sshSecret(command: string, flags: Flags, ssh: SshSetting): void {
  const secret = text(flags, "ssh-password");
  const env = text(flags, "ssh-password-env");
  const run = text(flags, "ssh-password-command");
  if ([secret, env, run].filter((x) => x !== undefined).length > 1) {
    throw new FieldError(
      `${command}: give one of --ssh-password-stdin, --ssh-password-env, --ssh-password-command`,
    );
  }
  if (secret !== undefined || env !== undefined || run !== undefined) {
    delete ssh.passphrase;
    delete ssh.password;
    delete ssh.passwordEnv;
    delete ssh.passwordCommand;
  }
  if (secret !== undefined) {
    if (ssh.identityFile !== undefined || ssh.configHost !== undefined) {
      ssh.passphrase = secret;
    } else ssh.password = secret;
  }
  if (env !== undefined) ssh.passwordEnv = env;
  if (run !== undefined) ssh.passwordCommand = commandWords(run);
}
