/**
 * A wired PostgreSQL driver whose sessions carry an application_name of
 * their own, so a test counts and ends only its own sessions while other
 * tests and dbport processes use the same server.
 */

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
