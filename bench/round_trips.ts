/**
 * RT: what one read asks of the database — round trips and statements per
 * `execute_query SELECT 1` — for each target, counted on the wire by a
 * proxy in front of each database (`wire_count.ts`): fresh targets whose
 * connections go through the proxies, warmed up, then `calls` reads one
 * after another; only what those reads caused is counted.
 *
 * @module
 */

import { MYSQL_URL, POSTGRES_URL } from "../tests/_db.ts";
import { closeConnections, mcpRequest } from "./mcp_request.ts";
import {
  benchHome,
  startDbport,
  startSdkV2Peer,
  startToolbox,
  type Target,
} from "./targets.ts";
import { wireCounter, type WireCounts } from "./wire_count.ts";

/** `url` with its port replaced by `port`. */
function through(url: string, port: number): string {
  const parsed = new URL(url);
  parsed.port = String(port);
  return parsed.href;
}

/** Round trips and statements per read of `request`, over `calls` reads. */
async function perRead(
  counts: WireCounts,
  request: () => Promise<boolean>,
  calls: number,
): Promise<string> {
  for (let i = 0; i < 20; i++) {
    if (!await request()) throw new Error("RT: a warm-up read failed");
  }
  const before = { ...counts };
  for (let i = 0; i < calls; i++) {
    if (!await request()) throw new Error("RT: a read failed");
  }
  // The last answers' ReadyForQuery may trail the HTTP answer by a moment.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const trips = (counts.roundTrips - before.roundTrips) / calls;
  const statements = (counts.statements - before.statements) / calls;
  return `${trips.toFixed(2)} | ${statements.toFixed(2)}`;
}

/** The RT table's lines (markdown). */
export async function measureRoundTrips(
  dir: string,
  benchUser: { user: string; password: string },
  calls: number,
): Promise<string[]> {
  await using pg = wireCounter("postgres", Number(new URL(POSTGRES_URL).port));
  await using my = wireCounter("mysql", Number(new URL(MYSQL_URL).port));
  const pgUrl = through(POSTGRES_URL, pg.port);
  const myUrl = through(MYSQL_URL, my.port);
  const home = await benchHome(dir, myUrl, pgUrl);
  await Deno.writeFile(home.sqlitePath, new Uint8Array());
  await using dbport = await startDbport(home);
  await using toolbox = await startToolbox(dir, home.sqlitePath, benchUser, {
    postgres: pgUrl,
    mysql: myUrl,
  });
  await using sdk = await startSdkV2Peer(pgUrl);
  const query = (target: Target, tool: string, args: object) =>
    mcpRequest(target, "tools/call", { name: tool, arguments: args });
  const lines = [
    "| target | engine | round trips / read | statements / read |",
    "|---|---|---:|---:|",
  ];
  try {
    for (
      const [name, engine, counts, request] of [
        [
          "dbport",
          "PostgreSQL",
          pg.counts,
          query(dbport, "execute_query", {
            connection_id: home.ids.postgres,
            query: "select 1",
          }),
        ],
        [
          "Toolbox",
          "PostgreSQL",
          pg.counts,
          query(toolbox, "pg_execute_sql", {
            sql: "select 1",
          }),
        ],
        [
          "SDK v2 server",
          "PostgreSQL",
          pg.counts,
          query(
            sdk,
            "execute_query",
            { query: "select 1" },
          ),
        ],
        [
          "dbport",
          "MariaDB",
          my.counts,
          query(dbport, "execute_query", {
            connection_id: home.ids.mysql,
            query: "select 1",
          }),
        ],
        [
          "Toolbox",
          "MariaDB",
          my.counts,
          query(
            toolbox,
            "mysql_execute_sql",
            { sql: "select 1" },
          ),
        ],
      ] as const
    ) {
      lines.push(
        `| ${name} | ${engine} | ${await perRead(counts, request, calls)} |`,
      );
    }
  } finally {
    closeConnections();
  }
  return lines;
}
