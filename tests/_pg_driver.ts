/**
 * A wired PostgreSQL driver whose sessions carry an application_name of
 * their own, so a test counts and ends only its own sessions while other
 * tests and dbport processes use the same server.
 */

import { connect as tcpConnect } from "node:net";
import { Duplex } from "node:stream";
import { openPostgres } from "../lib/db/postgres/postgres.ts";
import type { Driver } from "../lib/db/types.ts";

/**
 * A driver on `url` with wired reads, its sessions named `<prefix>_<random>`
 * (returned as `app`); `extra` adds URL parameters.
 */
export function ownPostgresDriver(
  url: string,
  prefix: string,
  extra: Record<string, string> = {},
): { driver: Driver; app: string } {
  const app = `${prefix}_${crypto.randomUUID().slice(0, 8)}`;
  const withApp = new URL(url);
  withApp.searchParams.set("application_name", app);
  for (const [k, v] of Object.entries(extra)) withApp.searchParams.set(k, v);
  return {
    driver: openPostgres({
      url: withApp.toString(),
      secrets: [],
      wiredReads: true,
    }),
    app,
  };
}

/**
 * A session's socket whose bytes from the server arrive `size` at a time:
 * every message of a read crosses chunk boundaries somewhere.
 */
export function choppedSocket(
  url: string,
  size: number,
): () => Promise<Duplex> {
  const { hostname, port } = new URL(url);
  return () => {
    const inner = tcpConnect(Number(port || 5432), hostname);
    const outer = new Duplex({
      write(chunk, _encoding, done) {
        inner.write(chunk, done);
      },
      read() {},
      final(done) {
        inner.end();
        done();
      },
      destroy(error, done) {
        inner.destroy();
        done(error);
      },
    });
    // postgres.js ends a socket it reads as open.
    Object.defineProperty(outer, "readyState", { get: () => inner.readyState });
    inner.on("data", (chunk: Uint8Array) => {
      for (let at = 0; at < chunk.length; at += size) {
        outer.push(chunk.subarray(at, at + size));
      }
    });
    inner.on("end", () => outer.push(null));
    inner.on("error", (error) => outer.destroy(error));
    inner.on("close", () => outer.destroy());
    return Promise.resolve(outer);
  };
}

/**
 * Whether a server of version `major` has lean reads (PostgreSQL 14 and
 * later, pg_lean.ts) for the test named `what`. Where it has not, the test
 * returns with a loud SKIPPED line; under CI it fails instead.
 */
export function hasLeanReads(major: number, what: string): boolean {
  if (major >= 14) return true;
  const why = `PostgreSQL ${major} has no lean reads (14 and later)`;
  if (Deno.env.get("CI")) throw new Error(`${what}: ${why}; CI never skips`);
  // deno-lint-ignore no-console
  console.error(`SKIPPED: ${what}: ${why}`);
  return false;
}
