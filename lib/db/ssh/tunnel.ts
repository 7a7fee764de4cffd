/**
 * An SSH tunnel in the process (docs/connections.md "SSH tunnels"): one SSH
 * client per connection (a chain of them through jump hosts), shared by that
 * connection's pool. Each database socket is a channel forwarded through it,
 * so no local port is ever opened. Nothing connects until the first socket
 * is asked for; when the link drops, the next one reconnects.
 *
 * @module
 */

import { connect as tcpConnect } from "node:net";
import type { Duplex } from "node:stream";
import { Client } from "ssh2";
import { messageOf } from "../../base/message_of.ts";
import { DbError } from "../errors.ts";
import { redact } from "../redact.ts";
import { checkHostKey, fingerprint, keyType } from "./known_hosts.ts";

/** One SSH hop: the jump hosts first, the bastion that reaches the database last. */
export interface SshHop {
  host: string;
  port: number;
  user: string;
  /** A private key file (OpenSSH or PEM). */
  identityFile?: string;
  passphrase?: string;
  password?: string;
}

/** What a tunnel needs besides its hops. */
export interface TunnelOptions {
  hops: readonly SshHop[];
  /** The known-hosts texts, read at each connect (a trust takes effect at once). */
  knownHosts(): Promise<string[]>;
  /** The command that trusts an unknown key, for the refusal's text. */
  trustCommand: string;
  /** Redacted from every message (host and user for clients). */
  secrets: readonly string[];
  keepaliveMs?: number;
  readyTimeoutMs?: number;
}

/** What a hop showed when it was reached (for `connections test`). */
export interface HopReport {
  host: string;
  port: number;
  keyType: string;
  fingerprint: string;
}

/** A tunnel to a database through one or more SSH hops. */
export class SshTunnel {
  readonly #options: TunnelOptions;
  #chain: Promise<Client[]> | null = null;
  #reports: HopReport[] = [];
  #closed = false;
  /**
   * Every SSH client made and not yet closed, with the socket it runs on
   * (its own TCP socket, or the channel through the hop before it): `close`
   * waits for each, a dropped chain's too.
   */
  readonly #open = new Map<Client, Duplex>();

  constructor(options: TunnelOptions) {
    if (options.hops.length === 0) throw new Error("a tunnel needs a hop");
    this.#options = options;
  }

  /** The hops as last reached. */
  get reports(): readonly HopReport[] {
    return this.#reports;
  }

  /** A channel to `host:port` as the last hop sees it. */
  async forward(host: string, port: number): Promise<Duplex> {
    for (let attempt = 0;; attempt++) {
      const chain = await this.#connected();
      try {
        return await open(chain.at(-1)!, host, port);
      } catch (error) {
        // A link that died without a word: drop it and connect again once.
        this.#drop(chain);
        if (attempt > 0) {
          throw this.#fail(
            `the last SSH hop could not open a channel to the database (${
              messageOf(error)
            })`,
          );
        }
      }
    }
  }

  /** Connect every hop now (for `connections test`). */
  async check(): Promise<readonly HopReport[]> {
    await this.#connected();
    return this.#reports;
  }

  /**
   * Disconnect every hop; settles once each client's socket has closed.
   * ssh2's `end()` sends the disconnect and half-closes, and the socket —
   * with ssh2's keepalive interval (`keepaliveMs`) — lives on until the
   * server closes its side: a server that is slow to (a loaded machine, a
   * stalled hop) kept both past the close, past the end of the driver
   * that owned them (tests/e2e/ssh_tunnel_test.ts: "an interval was
   * started in this test, but never completed"). A socket still open
   * {@linkcode CLOSE_GRACE_MS} after the disconnect is destroyed.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const chain = this.#chain;
    this.#chain = null;
    await chain?.catch(() => []);
    // The last hop first: its channel runs through the ones before it.
    await Promise.all(
      [...this.#open].reverse().map(([client, socket]) =>
        closeClient(client, socket)
      ),
    );
  }

  #connected(): Promise<Client[]> {
    if (this.#closed) {
      return Promise.reject(
        new DbError("connect", "the connection was closed"),
      );
    }
    if (this.#chain === null) {
      const chain = this.#connect();
      this.#chain = chain;
      chain.catch(() => {
        if (this.#chain === chain) this.#chain = null;
      });
    }
    return this.#chain;
  }

  #drop(chain: Client[]): void {
    if (this.#chain === null) return;
    this.#chain.then((current) => {
      if (current === chain) this.#chain = null;
    }, () => {});
    for (const client of [...chain].reverse()) client.end();
  }

  async #connect(): Promise<Client[]> {
    const { hops } = this.#options;
    const known = await this.#options.knownHosts();
    const clients: Client[] = [];
    const reports: HopReport[] = [];
    try {
      for (const [index, hop] of hops.entries()) {
        const label = `SSH hop ${
          index + 1
        } of ${hops.length} (${hop.user}@${hop.host}:${hop.port})`;
        const sock = index === 0
          ? undefined
          : await open(clients.at(-1)!, hop.host, hop.port).catch((error) => {
            throw this.#fail(
              `${label} could not be reached through the hop before it: ${
                messageOf(error)
              }`,
            );
          });
        const client = await this.#reach(hop, label, known, sock, reports);
        clients.push(client);
        client.on("close", () => this.#drop(clients));
      }
    } catch (error) {
      for (const client of clients.reverse()) client.end();
      throw error;
    }
    this.#reports = reports;
    return clients;
  }

  async #reach(
    hop: SshHop,
    label: string,
    known: string[],
    sock: Duplex | undefined,
    reports: HopReport[],
  ): Promise<Client> {
    let privateKey: string | undefined;
    if (hop.identityFile !== undefined) {
      try {
        privateKey = await Deno.readTextFile(hop.identityFile);
      } catch (error) {
        throw this.#fail(
          `${label}: cannot read the SSH key file ${hop.identityFile}: ${
            messageOf(error)
          }`,
        );
      }
    }
    let refusal: string | null = null;
    let untrusted = false;
    const client = new Client();
    // The first hop's TCP socket is dbport's own, so that `close` can
    // destroy it (ssh2's `destroy()` does nothing once `end()` was called).
    const socket = sock ?? tcpConnect(hop.port, hop.host);
    this.#open.set(client, socket);
    client.once("close", () => this.#open.delete(client));
    await new Promise<void>((resolve, reject) => {
      client.once("ready", () => resolve());
      client.once("error", (error: Error) => {
        const failure = this.#fail(
          refusal ?? `${label}: ${describeSshError(error)}`,
        );
        if (untrusted) UNTRUSTED.add(failure);
        reject(failure);
      });
      client.connect({
        host: hop.host,
        port: hop.port,
        username: hop.user,
        sock: socket,
        ...(privateKey === undefined ? {} : { privateKey }),
        ...(hop.passphrase === undefined ? {} : { passphrase: hop.passphrase }),
        ...(hop.password === undefined ? {} : { password: hop.password }),
        readyTimeout: this.#options.readyTimeoutMs ?? 10_000,
        keepaliveInterval: this.#options.keepaliveMs ?? 15_000,
        keepaliveCountMax: 3,
        hostVerifier: (key: Uint8Array) => {
          const blob = new Uint8Array(key);
          const print = `${keyType(blob)} ${fingerprint(blob)}`;
          const check = checkHostKey(known, hop.host, hop.port, blob);
          switch (check.status) {
            case "known":
              reports.push({
                host: hop.host,
                port: hop.port,
                keyType: keyType(blob),
                fingerprint: fingerprint(blob),
              });
              return true;
            case "unknown":
              untrusted = true;
              refusal =
                `${label} presented a host key that is not trusted yet (${print}); if that is the server's key, trust it: ${this.#options.trustCommand}`;
              return false;
            case "changed":
              refusal =
                `${label} presented a DIFFERENT host key (${print}) from the one trusted for it (${check.listed}): someone may be intercepting the connection, or the server's key was replaced; nothing was sent. If the change is expected, remove the old key from known_hosts and trust the new one: ${this.#options.trustCommand}`;
              return false;
            case "revoked":
              refusal =
                `${label} presented a revoked host key (${print}); nothing was sent`;
              return false;
          }
        },
      });
    });
    // A hop that fails later is seen by its close event (the chain is dropped).
    client.on("error", () => {});
    // Small writes go out at once: with Nagle's algorithm each of a read's
    // round trips (BEGIN, the statement, ROLLBACK) waited for a delayed ACK,
    // 40 ms apiece (bench T1).
    client.setNoDelay(true);
    return client;
  }

  #fail(message: string): DbError {
    return new DbError("connect", redact(message, this.#options.secrets));
  }
}

/** How long `close` waits for a hop's socket to close before destroying it. */
const CLOSE_GRACE_MS = 1_000;

/**
 * End `client` (the disconnect, then the socket's end) and settle once its
 * socket has closed: destroyed if it has not within
 * {@linkcode CLOSE_GRACE_MS}.
 */
function closeClient(client: Client, socket: Duplex): Promise<void> {
  if (socket.destroyed && socket.closed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
    client.once("close", () => {
      clearTimeout(timer);
      resolve();
    });
    client.end();
  });
}

/** Failures that were only a host key not trusted yet. */
const UNTRUSTED = new WeakSet<Error>();

/**
 * Whether `error` is a hop's host key that is not trusted yet (and nothing
 * else): `connections trust-host` is what it needs.
 */
export function isUntrustedHostKey(error: unknown): boolean {
  return error instanceof Error && UNTRUSTED.has(error);
}

/** Open a channel to `host:port` through `client`. */
function open(client: Client, host: string, port: number): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    client.forwardOut(
      "127.0.0.1",
      0,
      host,
      port,
      (error: Error | undefined, channel: unknown) => {
        if (error) return reject(error);
        const stream = channel as unknown as Duplex;
        // As a TCP socket does (allowHalfOpen false): the database closed
        // its side, so this side ends too, and the channel closes. An ssh2
        // channel stays half open otherwise and never emits "close" — a
        // cancel request, which the server answers by closing, was never
        // known to be delivered (a read through the tunnel waited for it).
        stream.once("end", () => stream.end());
        resolve(stream);
      },
    );
  });
}

/** An ssh2 failure in words a user can act on. */
function describeSshError(
  error: Error & { level?: string; code?: string },
): string {
  if (error.level === "client-authentication") {
    return "the SSH login was refused (check the user, the key, its passphrase or the password)";
  }
  if (error.level === "client-timeout") {
    return "the SSH server did not answer in time";
  }
  if (/passphrase|Encrypted private/i.test(error.message)) {
    return "the SSH key could not be decrypted (a missing or wrong passphrase)";
  }
  if (error.code === "ECONNREFUSED") {
    return "the SSH port refused the connection";
  }
  if (error.code === "ENOTFOUND") return "the SSH host name does not resolve";
  return error.message;
}
