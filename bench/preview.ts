/**
 * What a write preview costs (docs/security.md "Write previews"): the time
 * from a write's request to its approval being asked, with the dry run and
 * with `writePreview: "off"`, for a one-row UPDATE and for an UPDATE of
 * 100,000 rows on PostgreSQL. The host dialog is a command that denies at
 * once, so the answer arrives as the question is asked.
 *
 * @module
 */

import postgres from "postgres";
import type { SavedConnection } from "../lib/app/connections.ts";
import { saveConnections } from "../lib/app/connections.ts";
import { inAppDir } from "../lib/app/paths.ts";
import { CONNECTIONS_FILE } from "../lib/base/identity.ts";
import { POSTGRES_URL } from "../tests/_db.ts";
import { callOnce, closeConnections } from "./mcp_request.ts";
import { mintToken, startDbport } from "./targets.ts";

const SCHEMA = "dbport_bench_preview";
const ROWS = 100_000;

/** One statement's median times, in milliseconds. */
export interface PreviewCost {
  statement: string;
  withDryRun: number;
  withoutPreview: number;
}

/** Measure `rounds` denied approvals of each statement, both ways. */
export async function measurePreviews(
  dir: string,
  rounds: number,
): Promise<PreviewCost[]> {
  const sql = postgres(POSTGRES_URL, { onnotice: () => {}, max: 1 });
  await sql.unsafe(`drop schema if exists ${SCHEMA} cascade`);
  await sql.unsafe(`create schema ${SCHEMA}`);
  await sql.unsafe(
    `create table ${SCHEMA}.big as select g as id, 0 as v from generate_series(1, ${ROWS}) g`,
  );
  await sql.unsafe(`alter table ${SCHEMA}.big add primary key (id)`);
  try {
    const home = `${dir}/dbport-home`;
    const base = {
      engine: "postgres",
      url: POSTGRES_URL,
      externalAccess: "readWrite",
      aiPolicy: "alwaysAllow",
      safeMode: "alert",
    } as const;
    const connections: SavedConnection[] = [
      { id: crypto.randomUUID(), name: "dry run", ...base },
      {
        id: crypto.randomUUID(),
        name: "no preview",
        writePreview: "off",
        ...base,
      },
    ];
    await saveConnections(inAppDir(home, CONNECTIONS_FILE), connections);
    const token = await mintToken(home, "readWrite", "bench writer");
    await using dbport = await startDbport(
      {
        home,
        sqlitePath: "",
        ids: { postgres: "", mysql: "", sqlite: "" },
        token,
      },
      [],
      { hostDialog: { command: ["sh", "-c", "cat > /dev/null; exit 1"] } },
    );
    const time = async (connection: string, query: string) => {
      const started = performance.now();
      const answer = await callOnce(dbport, "tools/call", {
        name: "execute_query",
        arguments: { connection_id: connection, query },
      });
      if (!answer.includes("denied: the user did not approve")) {
        throw new Error(`preview bench: ${answer.slice(0, 300)}`);
      }
      return performance.now() - started;
    };
    const costs: PreviewCost[] = [];
    for (
      const statement of [
        `UPDATE ${SCHEMA}.big SET v = v + 1 WHERE id = 1`,
        `UPDATE ${SCHEMA}.big SET v = v + 1`,
      ]
    ) {
      const dry: number[] = [];
      const off: number[] = [];
      // A first call of each warms the pool and the parser.
      await time(connections[0]!.id, statement);
      await time(connections[1]!.id, statement);
      for (let i = 0; i < rounds; i++) {
        dry.push(await time(connections[0]!.id, statement));
        off.push(await time(connections[1]!.id, statement));
      }
      costs.push({
        statement,
        withDryRun: median(dry),
        withoutPreview: median(off),
      });
    }
    closeConnections();
    return costs;
  } finally {
    await sql.unsafe(`drop schema if exists ${SCHEMA} cascade`);
    await sql.end();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
