// deno-lint-ignore-file no-console
/**
 * A cancel that lands as a PostgreSQL statement begins (docs/performance.md
 * "A cancel that lands as a statement begins"): `select pg_sleep(8)` on a
 * warm session, through a proxy that holds the sessions' bytes back
 * `--delay` ms (default 40; 0: no proxy) while cancel requests pass at
 * once, cancelled 0–30 ms after the call, on the wired read, the bound read
 * (postgres.js's path) and the write. Prints, per call, the time from the
 * cancel to the answer and to the backend's statement end
 * (pg_stat_activity), and the answer. `--driver <path>` measures another
 * tree's lib/db/postgres/postgres.ts (the before of a change).
 *
 *     deno run --config deno.dev.json -A bench/cancel_offsets.ts \
 *       [--rounds 3] [--delay 40] [--paths wired,bound,write] [--driver p]
 *
 * @module
 */

import postgres from "postgres";
import { POSTGRES_URL, READ_OPTIONS } from "../tests/_db.ts";
import { slowStatementProxy } from "../tests/_tcp_proxy.ts";

const arg = (name: string, fallback: string) => {
  const at = Deno.args.indexOf(`--${name}`);
  return at >= 0 ? Deno.args[at + 1]! : fallback;
};
const driverPath = arg(
  "driver",
  new URL("../lib/db/postgres/postgres.ts", import.meta.url).href,
);
const { openPostgres } = await import(
  driverPath.startsWith("/") ? `file://${driverPath}` : driverPath
);
const paths = arg("paths", "wired,bound,write").split(",");
const rounds = Number(arg("rounds", "3"));
const delay = Number(arg("delay", "40"));
const OFFSETS = [0, 1, 2, 3, 5, 7, 10, 15, 20, 25, 30];

const proxy = slowStatementProxy(new URL(POSTGRES_URL), delay);
const app = `cancelofs${Deno.pid}`;
const url = new URL(delay > 0 ? proxy.url : POSTGRES_URL);
url.searchParams.set("application_name", app);
const driver = openPostgres({
  url: url.toString(),
  secrets: [],
  wiredReads: true,
});
const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });

async function running(): Promise<number> {
  const [row] = await admin`
    select count(*)::int as n from pg_stat_activity
    where application_name like ${app + "%"} and state = 'active'
      and query like '%pg_sleep(8)%'`;
  return row!.n as number;
}

try {
  for (const path of paths) {
    for (const offset of OFFSETS) {
      for (let round = 0; round < rounds; round++) {
        // A warm, parked session: the cancel races the statement.
        await driver.query("select 1", READ_OPTIONS).catch(() => {});
        const abort = new AbortController();
        const text = path === "bound"
          ? "select pg_sleep(8)::text where $1::int = 1"
          : "select pg_sleep(8)::text";
        const work = driver.query(text, {
          ...READ_OPTIONS,
          mode: path === "write" ? "write" : "read",
          timeoutMs: 10_000,
          signal: abort.signal,
          ...(path === "bound" ? { params: [1] } : {}),
        });
        let cancelledAt = 0;
        const timer = setTimeout(() => {
          cancelledAt = performance.now();
          abort.abort();
        }, offset);
        let said = "answered";
        try {
          await work;
        } catch (error) {
          said = (error as Error).message;
        }
        clearTimeout(timer);
        const answeredAt = performance.now();
        let endedAt = answeredAt;
        while (await running() > 0) {
          await new Promise((resolve) => setTimeout(resolve, 10));
          endedAt = performance.now();
        }
        console.log(JSON.stringify({
          path,
          offset,
          answerMs: Math.round(answeredAt - cancelledAt),
          endMs: Math.round(endedAt - cancelledAt),
          said,
        }));
      }
    }
  }
  console.log(`cancel requests through the proxy: ${proxy.stats.cancels}`);
} finally {
  await driver.close();
  await admin.end();
  await proxy.close();
}
