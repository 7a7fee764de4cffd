/**
 * A connection's `ssh` setting: its shape, its check, and where its secret
 * comes from. No SSH code is loaded here (hops.ts and tunnel.ts are loaded
 * at a tunnel's first use).
 *
 * @module
 */

import * as s from "../../base/schema.ts";
import { isJsonObject } from "../../protocol/jsonrpc.ts";
import type { SecretSource } from "../secret_source.ts";

/** What a connection saves under `ssh`. */
export interface SshSetting {
  host?: string;
  port?: number;
  user?: string;
  identityFile?: string;
  /** The key's passphrase (with `identityFile`). */
  passphrase?: string;
  /** The SSH password (password login). */
  password?: string;
  /** The passphrase or password from an environment variable or a command. */
  passwordEnv?: string;
  passwordCommand?: string[];
  /** Jump hosts before the bastion, as ProxyJump writes them: `user@host:port,host2`. */
  jump?: string;
  /** A `Host` of ~/.ssh/config standing for all of the above. */
  configHost?: string;
}

const nonEmpty = (key: string): s.Check => (value) =>
  typeof value === "string" && value !== ""
    ? null
    : `.${key} must be a non-empty string`;

const text = (key: string) => s.refine(s.string(), nonEmpty(key));

/** The `ssh` setting's fields, each with the problem a user is told. */
export const SSH_SCHEMA = s.object({
  host: text("host"),
  port: s.refine(
    s.integer({ minimum: 1, maximum: 65535 }),
    (value) =>
      Number.isInteger(value) && (value as number) >= 1 &&
        (value as number) <= 65535
        ? null
        : ".port must be 1-65535",
  ),
  user: text("user"),
  identityFile: text("identityFile"),
  passphrase: text("passphrase"),
  password: text("password"),
  passwordEnv: text("passwordEnv"),
  passwordCommand: s.refine(
    s.array(s.string()),
    (value) =>
      Array.isArray(value) && value.length > 0 &&
        value.every((p) => typeof p === "string" && p !== "")
        ? null
        : '.passwordCommand must be ["program", "arg", ...]',
  ),
  jump: text("jump"),
  configHost: text("configHost"),
});

// The setting's type is the schema's: a field added to one and not the other
// fails `deno task check`.
const _sameFields: s.Same<SshSetting, s.Infer<typeof SSH_SCHEMA>> = true;

/** Check an `ssh` value; a problem text (never quoting a secret) or null. */
export function checkSshSetting(value: unknown): string | null {
  if (!isJsonObject(value)) return "must be an object";
  const issue = s.issueOf(SSH_SCHEMA, value);
  if (issue?.kind === "unknown") {
    return `has an unknown field "${issue.key}" (known: ${
      issue.known.join(", ")
    })`;
  }
  // Every field is refined: its own check says what is wrong.
  if (issue !== null) {
    return issue.kind === "invalid" ? issue.problem : "is not valid";
  }
  if (value.configHost === undefined) {
    if (value.host === undefined || value.user === undefined) {
      return 'needs "host" and "user", or "configHost"';
    }
  } else if (value.host !== undefined || value.jump !== undefined) {
    return '"configHost" stands for host, port, user, key and jump: give it alone';
  }
  const sources = ["passphrase", "password", "passwordEnv", "passwordCommand"]
    .filter((key) => value[key] !== undefined);
  if (
    sources.filter((key) => key === "passwordEnv" || key === "passwordCommand")
      .length > 1
  ) return 'give "passwordEnv" or "passwordCommand", not both';
  if (value.jump !== undefined && parseJump(String(value.jump)) === null) {
    return '.jump must read like ProxyJump: "user@host:port,host2"';
  }
  return null;
}

/** The secret source of an `ssh` setting, when it has one. */
export function sshSecretSource(setting: SshSetting): SecretSource | null {
  if (setting.passwordEnv !== undefined) return { env: setting.passwordEnv };
  if (setting.passwordCommand !== undefined) {
    return { command: setting.passwordCommand };
  }
  return null;
}

/** ProxyJump's `[user@]host[:port]` list; null when unreadable. */
export function parseJump(
  text: string,
): { user?: string; host: string; port?: number }[] | null {
  const hops = [];
  for (const part of text.split(",")) {
    const match = /^(?:([^@\s]+)@)?(\[[^\]]+\]|[^:@\s]+)(?::(\d{1,5}))?$/.exec(
      part.trim(),
    );
    if (match === null) return null;
    const host = match[2]!.replace(/^\[|\]$/g, "");
    hops.push({
      host,
      ...(match[1] === undefined ? {} : { user: match[1] }),
      ...(match[3] === undefined ? {} : { port: Number(match[3]) }),
    });
  }
  return hops;
}
