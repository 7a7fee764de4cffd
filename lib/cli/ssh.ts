/**
 * The SSH side of `dbport connections`: the `--ssh…` and password-source
 * flags of `add` and `set`, `trust-host` (show each hop's host key and, once
 * the user says yes, add it to dbport's known_hosts), and the hop lines of
 * `test` (docs/connections.md "SSH tunnels").
 *
 * @module
 */

import { Client } from "ssh2";
import { connect as tcpConnect } from "node:net";
import type { Duplex } from "node:stream";
import type { SavedConnection } from "../app/connections.ts";
import { defaultSshContext, type SshContext } from "../db/open_driver.ts";
import { sshHops } from "../db/ssh/hops.ts";
import {
  checkHostKey,
  fingerprint,
  keyType,
  knownHostsLine,
  readKnownHosts,
} from "../db/ssh/known_hosts.ts";
import { type SshHop, SshTunnel } from "../db/ssh/tunnel.ts";
import { messageOf } from "../base/message_of.ts";
import {
  FieldError,
  sshFields as connectionSshFields,
} from "../app/ssh_fields.ts";

export { commandWords } from "../app/ssh_fields.ts";
import type { Parsed } from "./args.ts";
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

/**
 * What the flags change: the `ssh` setting (or its removal) and the password
 * source (lib/app/ssh_fields.ts, which the console's forms use too).
 */
export function sshFields(
  command: string,
  parsed: Parsed,
  current: SavedConnection | undefined,
): { fields: Partial<SavedConnection>; remove: (keyof SavedConnection)[] } {
  try {
    return connectionSshFields(command, parsed.flags, current);
  } catch (error) {
    if (error instanceof FieldError) throw new UsageError(error.message);
    throw error;
  }
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
    // Its own socket, so that one the server does not close after the
    // hang-up is destroyed: settled only once the socket closed, nothing of
    // the client outlives the call.
    const socket = sock ?? tcpConnect(hop.port, hop.host);
    let key: Uint8Array | null = null;
    let failure: Error | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    client.on("error", (error: Error) => {
      failure ??= error;
      timer ??= setTimeout(() => socket.destroy(), HANG_UP_GRACE_MS);
    });
    client.on("close", () => {
      clearTimeout(timer);
      if (key !== null) resolve(key);
      else reject(failure ?? new Error("the SSH server closed the connection"));
    });
    client.connect({
      host: hop.host,
      port: hop.port,
      username: hop.user,
      sock: socket,
      readyTimeout: 10_000,
      // Record the key and stop: nothing is sent to a server not yet trusted.
      hostVerifier: (presented: Uint8Array) => {
        key = new Uint8Array(presented);
        return false;
      },
    });
  });
}

/** How long a refused handshake's socket may take to close (`presentedKey`). */
const HANG_UP_GRACE_MS = 1_000;
