/**
 * The SSH side of `dbport connections`: the `--ssh…` and password-source
 * flags of `add` and `set`, `trust-host` (show each hop's host key and, once
 * the user says yes, add it to dbport's known_hosts), and the hop lines of
 * `test` (docs/connections.md "SSH tunnels").
 *
 * @module
 */

import { Client } from "ssh2";
import type { Duplex } from "node:stream";
import {
  checkConnectionField,
  type SavedConnection,
} from "../app/connections.ts";
import { defaultSshContext, type SshContext } from "../db/pool.ts";
import { sshHops } from "../db/ssh/hops.ts";
import {
  checkHostKey,
  fingerprint,
  keyType,
  knownHostsLine,
  readKnownHosts,
} from "../db/ssh/known_hosts.ts";
import { parseJump, type SshSetting } from "../db/ssh/setting.ts";
import { type SshHop, SshTunnel } from "../db/ssh/tunnel.ts";
import { messageOf } from "../protocol/message_of.ts";
import { type Parsed, stringFlag } from "./args.ts";
import { type CliIO, UsageError } from "./io.ts";

/** The flags this module reads. */
export const SSH_FLAG_SPEC = {
  ssh: { type: "string" },
  "ssh-key": { type: "string" },
  "ssh-jump": { type: "string" },
  "ssh-config-host": { type: "string" },
  "ssh-password": { type: "string" },
  "ssh-password-env": { type: "string" },
  "ssh-password-command": { type: "string" },
  "no-ssh": { type: "boolean" },
  "password-env": { type: "string" },
  "password-command": { type: "string" },
} as const;

/** How the SSH flags read in the usage text. */
export const SSH_USAGE =
  `SSH (a database behind a bastion; no local port is opened):
  --ssh user@host[:port]      the bastion that reaches the database's host
  --ssh-key PATH              a private key (its passphrase: --ssh-password-stdin)
  --ssh-jump SPEC             jump hosts before it, as ProxyJump: user@host:port,host2
  --ssh-config-host NAME      a Host of ~/.ssh/config instead (HostName, User, Port,
                              IdentityFile, ProxyJump)
  --ssh-password-stdin        the key's passphrase, or the SSH password, from stdin
  --ssh-password-env NAME     ... from an environment variable of the server
  --ssh-password-command CMD  ... from a program's output (run without a shell)
  --no-ssh                    (set) connect directly again
Passwords outside connections.json:
  --password-env NAME         the database password from an environment variable
  --password-command CMD      ... from a program's output, e.g.
                              "security find-generic-password -s db -w" (macOS),
                              "secret-tool lookup service db" (libsecret), "pass show db"`;

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

/**
 * What the flags change: the `ssh` setting (or its removal) and the password
 * source. `current` is the connection being changed (set), if any.
 */
export function sshFields(
  command: string,
  parsed: Parsed,
  current: SavedConnection | undefined,
): { fields: Partial<SavedConnection>; remove: (keyof SavedConnection)[] } {
  const fields: Partial<SavedConnection> = {};
  const remove: (keyof SavedConnection)[] = [];
  const passwordEnv = stringFlag(parsed, "password-env");
  const passwordCommand = stringFlag(parsed, "password-command");
  if (passwordEnv !== undefined && passwordCommand !== undefined) {
    throw new UsageError(
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
      throw new UsageError(
        `${command}: --${
          key === "passwordEnv" ? "password-env" : "password-command"
        } ${problem}`,
      );
    }
  }
  if (parsed.flags["no-ssh"] === true) {
    if (Object.keys(parsed.flags).some((flag) => flag.startsWith("ssh"))) {
      throw new UsageError(
        `${command}: --no-ssh goes alone, without other --ssh flags`,
      );
    }
    remove.push("ssh");
    return { fields, remove };
  }
  const given = Object.keys(SSH_FLAG_SPEC).filter((flag) =>
    flag.startsWith("ssh") && parsed.flags[flag] !== undefined
  );
  if (given.length === 0) return { fields, remove };
  const ssh: SshSetting =
    given.includes("ssh") || given.includes("ssh-config-host")
      ? {}
      : { ...current?.ssh };
  const target = stringFlag(parsed, "ssh");
  const configHost = stringFlag(parsed, "ssh-config-host");
  if (target !== undefined && configHost !== undefined) {
    throw new UsageError(
      `${command}: give --ssh or --ssh-config-host, not both`,
    );
  }
  if (target !== undefined) {
    const hop = parseJump(target)?.[0];
    if (hop === undefined || hop.user === undefined || target.includes(",")) {
      throw new UsageError(
        `${command}: --ssh must read user@host[:port], got "${target}"`,
      );
    }
    ssh.host = hop.host;
    ssh.user = hop.user;
    if (hop.port !== undefined) ssh.port = hop.port;
  }
  if (configHost !== undefined) ssh.configHost = configHost;
  const key = stringFlag(parsed, "ssh-key");
  if (key !== undefined) ssh.identityFile = key;
  const jump = stringFlag(parsed, "ssh-jump");
  if (jump !== undefined) ssh.jump = jump;
  const secret = stringFlag(parsed, "ssh-password");
  const env = stringFlag(parsed, "ssh-password-env");
  const run = stringFlag(parsed, "ssh-password-command");
  if ([secret, env, run].filter((x) => x !== undefined).length > 1) {
    throw new UsageError(
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
  const problem = checkConnectionField("ssh", ssh);
  if (problem !== null) {
    throw new UsageError(`${command}: the SSH settings ${problem}`);
  }
  fields.ssh = ssh;
  return { fields, remove };
}

/**
 * `connections trust-host NAME [--yes]`: reach each hop in turn, show the
 * key it presents, and on yes add it to dbport's known_hosts. A hop that is
 * trusted already is said so; one whose key differs from a trusted one is
 * never replaced here (remove the old line by hand first).
 */
export async function trustHost(
  connection: SavedConnection,
  knownHostsPath: string,
  io: CliIO,
  confirm: (question: string) => Promise<boolean>,
  context: SshContext = defaultSshContext([knownHostsPath]),
): Promise<number> {
  if (connection.ssh === undefined) {
    throw new UsageError(
      `connections trust-host: "${connection.name}" has no SSH settings`,
    );
  }
  const { hops } = await sshHops(connection.ssh!, context.env, connection.name);
  for (const [index, hop] of hops.entries()) {
    const label = `SSH hop ${
      index + 1
    } of ${hops.length}, ${hop.host}:${hop.port}`;
    // Hops before this one are trusted by now: reach this one through them.
    const before = index === 0 ? null : new SshTunnel({
      hops: hops.slice(0, index),
      secrets: [],
      trustCommand: "",
      knownHosts: () => readKnownHosts(context.knownHostsFiles),
    });
    let blob: Uint8Array;
    try {
      const sock = before === null
        ? undefined
        : await before.forward(hop.host, hop.port);
      blob = await presentedKey(hop, sock);
    } catch (error) {
      io.err(`${label}: ${messageOf(error)}`);
      return 1;
    } finally {
      await before?.close();
    }
    const print = `${keyType(blob)} ${fingerprint(blob)}`;
    const check = checkHostKey(
      await readKnownHosts(context.knownHostsFiles),
      hop.host,
      hop.port,
      blob,
    );
    if (check.status === "known") {
      io.out(`${label}: already trusted (${print})`);
      continue;
    }
    if (check.status !== "unknown") {
      io.err(
        `${label} presents ${print}, which differs from the key trusted for it${
          check.status === "changed" ? ` (${check.listed})` : " (revoked)"
        }. It is not replaced here: if the change is expected, remove the old line from known_hosts first.`,
      );
      return 1;
    }
    io.out(`${label} presents the host key ${print}`);
    if (!await confirm("Is that the server's key? Trust it? [y/N] ")) {
      io.out("Not trusted.");
      return 1;
    }
    await Deno.writeTextFile(
      knownHostsPath,
      knownHostsLine(hop.host, hop.port, blob) + "\n",
      {
        append: true,
        mode: 0o600,
      },
    );
    io.out(`Trusted: added to ${knownHostsPath}`);
  }
  return 0;
}

/** The host key a server presents, without logging in. */
function presentedKey(
  hop: SshHop,
  sock: Duplex | undefined,
): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    let key: Uint8Array | null = null;
    client.on("error", (error: Error) => {
      if (key !== null) resolve(key);
      else reject(error);
    });
    client.on("close", () => {
      if (key !== null) resolve(key);
    });
    client.connect({
      host: hop.host,
      port: hop.port,
      username: hop.user,
      ...(sock === undefined ? {} : { sock }),
      readyTimeout: 10_000,
      // Record the key and stop: nothing is sent to a server not yet trusted.
      hostVerifier: (presented: Uint8Array) => {
        key = new Uint8Array(presented);
        return false;
      },
    });
  });
}
