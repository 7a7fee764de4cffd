/**
 * The hops a connection's `ssh` setting stands for: written out
 * (`host`, `port`, `user`, `identityFile`, `jump`) or named by a `Host` of
 * the user's `~/.ssh/config` (`configHost`: `HostName`, `User`, `Port`,
 * `IdentityFile` and `ProxyJump`, read by the npm package ssh-config, each
 * jump host itself looked up there).
 *
 * @module
 */

import SSHConfig from "ssh-config";
import { DbError } from "../errors.ts";
import { readSecret, type SecretAudience } from "../secret_source.ts";
import { parseJump, sshSecretSource, type SshSetting } from "./setting.ts";
import type { SshHop } from "./tunnel.ts";

/** Where `~/.ssh` is, and a way to read its config. */
export interface SshEnv {
  /** The `.ssh` directory (`$HOME/.ssh`; tests give their own). */
  dir: string;
  /** The login name when a hop names none. */
  defaultUser: string;
}

/**
 * The hops of a setting, first jump host first, with its secret (the
 * passphrase or password, already read from its source) on each hop that
 * authenticates the way the setting says.
 */
export async function resolveHops(
  setting: SshSetting,
  env: SshEnv,
  secret: string | undefined,
): Promise<SshHop[]> {
  const auth = (hop: SshHop): SshHop => {
    const given = secret ?? setting.passphrase ?? setting.password;
    if (given === undefined) return hop;
    // A key file's secret is its passphrase; without a key, a password.
    return hop.identityFile !== undefined && setting.password === undefined
      ? { ...hop, passphrase: given }
      : { ...hop, password: setting.password ?? given };
  };
  if (setting.configHost !== undefined) {
    const config = await readConfig(env);
    return (await fromConfig(config, setting.configHost, env, 0)).map(auth);
  }
  const bastion: SshHop = {
    host: setting.host!,
    port: setting.port ?? 22,
    user: setting.user!,
    ...(setting.identityFile === undefined
      ? {}
      : { identityFile: expandHome(setting.identityFile, env) }),
  };
  const jumps = setting.jump === undefined ? [] : parseJump(setting.jump) ?? [];
  return [
    ...jumps.map((jump) => ({
      ...bastion,
      host: jump.host,
      port: jump.port ?? 22,
      user: jump.user ?? bastion.user,
    })),
    bastion,
  ].map(auth);
}

/**
 * The hops of a connection's setting with its secret read from its source
 * (`passwordEnv`, `passwordCommand`), if it has one; `name` names the
 * connection in a failure, and the program is named only for the `owner`
 * (the CLI, the default).
 */
export async function sshHops(
  setting: SshSetting,
  env: SshEnv,
  name: string,
  audience: SecretAudience = "owner",
): Promise<{ hops: SshHop[]; secret?: string }> {
  const source = sshSecretSource(setting);
  const secret = source === null ? undefined : await readSecret(
    source,
    `the SSH secret of ${JSON.stringify(name)}`,
    audience,
  );
  return {
    hops: await resolveHops(setting, env, secret),
    ...(secret === undefined ? {} : { secret }),
  };
}

async function readConfig(env: SshEnv): Promise<SSHConfig> {
  const path = `${env.dir}/config`;
  try {
    return SSHConfig.parse(await Deno.readTextFile(path));
  } catch (error) {
    throw new DbError(
      "connect",
      error instanceof Deno.errors.NotFound
        ? `the connection names an SSH config host, and ${path} does not exist`
        : `cannot read ${path}`,
    );
  }
}

/** A config Host as hops, its ProxyJump hosts first (looked up in turn). */
async function fromConfig(
  config: SSHConfig,
  name: string,
  env: SshEnv,
  depth: number,
): Promise<SshHop[]> {
  if (depth > 8) {
    throw new DbError("connect", "the SSH config's ProxyJump chain loops");
  }
  const computed = config.compute(name) as Record<string, string | string[]>;
  const one = (key: string) => {
    const value = computed[key];
    return Array.isArray(value) ? value[0] : value;
  };
  const host = one("HostName") ?? name;
  const port = Number(one("Port") ?? 22);
  const identity = one("IdentityFile");
  const hop: SshHop = {
    host,
    port: Number.isInteger(port) ? port : 22,
    user: one("User") ?? env.defaultUser,
    ...(identity === undefined
      ? {}
      : { identityFile: expandHome(identity, env) }),
  };
  const proxy = one("ProxyJump");
  if (proxy === undefined || proxy.toLowerCase() === "none") return [hop];
  const jumps = parseJump(proxy);
  if (jumps === null) {
    throw new DbError(
      "connect",
      `the SSH config's ProxyJump of ${name} cannot be read`,
    );
  }
  const before: SshHop[] = [];
  for (const jump of jumps) {
    const resolved = await fromConfig(config, jump.host, env, depth + 1);
    const last = resolved.at(-1)!;
    resolved[resolved.length - 1] = {
      ...last,
      ...(jump.user === undefined ? {} : { user: jump.user }),
      ...(jump.port === undefined ? {} : { port: jump.port }),
    };
    before.push(...resolved);
  }
  return [...before, hop];
}

function expandHome(path: string, env: SshEnv): string {
  if (path.startsWith("~/")) {
    return `${env.dir.replace(/\/\.ssh$/, "")}/${path.slice(2)}`;
  }
  return path;
}
