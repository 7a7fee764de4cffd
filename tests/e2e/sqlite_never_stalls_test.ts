/**
 * Issue 33 on SQLite, through the server: a write lock held by another
 * program, a heavy statement in a concurrent mix, and a huge value never
 * stall the server's other clients or bloat the process.
 */

import { assert, assertEquals } from "@std/assert";
import type { SavedConnection } from "../../lib/app/connections.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture } from "../_db.ts";
import { modernRequest, postModern, type TestServer } from "../_server.ts";
import { holdWriteLock } from "../_sqlite_lock.ts";

interface Timed {
  ms: number;
  code: number | undefined;
  isError: boolean;
  text: string;
}

async function tool(
  server: TestServer,
  token: string,
  name: string,
  args: Record<string, unknown>,
): Promise<Timed> {
  const started = performance.now();
  const answer = await postModern(
    server.url,
    modernRequest("tools/call", { name, arguments: args }, crypto.randomUUID()),
    { authorization: `Bearer ${token}` },
  );
  const result = answer.json.result;
  return {
    ms: performance.now() - started,
    code: answer.json.error?.code,
    isError: result?.isError === true,
    text: answer.json.error?.message ?? result?.content?.[0]?.text ?? "",
  };
}

const query = (
  server: TestServer,
  token: string,
  saved: SavedConnection,
  sql: string,
  timeoutSeconds = 30,
) =>
  tool(server, token, "execute_query", {
    connection_id: saved.id,
    query: sql,
    timeout_seconds: timeoutSeconds,
  });

const HEAVY =
  "with recursive c(x) as (select 1 union all select x + 1 from c where x < 100000000) select count(*) as n from c";

Deno.test(
  "a SQLite write waiting on another program's lock leaves PostgreSQL answering, and ends busy at its deadline",
  needs("postgres"),
  async () => {
    await using lite = await openFixture("sqlite");
    await using pg = await openFixture("postgres");
    const file = savedConnection(lite, "File", {
      externalAccess: "readWrite",
      safeMode: "silent",
    });
    const server_ = savedConnection(pg, "Server");
    await using server = await serverWith([file, server_]);
    const admin = await server.mint("fullAccess");
    const other = await server.mint("readOnly");
    // The PostgreSQL pool is warm: what is timed is the event loop's turn.
    await query(server, other.plaintext, server_, "select 1", 5);
    await using _lock = await holdWriteLock(lite.url, 10);
    const write = query(
      server,
      admin.plaintext,
      file,
      "insert into authors (name) values ('Grace')",
      3,
    );
    // The write reaches its worker and holds the file's lock; the worker
    // says nothing while it waits, so there is nothing to wait on.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const ping = await query(server, other.plaintext, server_, "select 1", 5);
    assert(!ping.isError && ping.code === undefined, ping.text);
    assert(ping.ms < 1_000, `SELECT 1 took ${ping.ms.toFixed(0)} ms`);
    const written = await write;
    assert(
      written.code === -33003 || /locked|busy/i.test(written.text),
      JSON.stringify(written),
    );
    assert(written.ms < 3_000 + 2_000, `the write took ${written.ms} ms`);
  },
);

Deno.test(
  "a heavy SQLite read in a concurrent mix is stopped at its timeout, and another token's PostgreSQL SELECT 1 answers promptly",
  needs("postgres", "mysql"),
  async () => {
    await using lite = await openFixture("sqlite");
    await using pg = await openFixture("postgres");
    await using my = await openFixture("mysql");
    const file = savedConnection(lite, "File");
    const pgSaved = savedConnection(pg, "Pg");
    const mySaved = savedConnection(my, "My");
    await using server = await serverWith([file, pgSaved, mySaved]);
    const one = await server.mint("readOnly");
    const two = await server.mint("readOnly");
    const t = one.plaintext;
    await query(server, two.plaintext, pgSaved, "select 1", 5);
    const started = performance.now();
    const heavy = query(server, t, file, HEAVY, 1);
    const mix = [
      ...Array.from({ length: 4 }, () =>
        tool(server, t, "list_tables", {
          connection_id: file.id,
          include_row_counts: true,
        })),
      ...Array.from({ length: 4 }, () =>
        tool(server, t, "describe_table", {
          connection_id: file.id,
          table: "books",
        })),
      query(server, t, pgSaved, "select pg_sleep(20)", 1),
      query(server, t, mySaved, "select sleep(20)", 1),
    ];
    // The heavy calls reach their workers and databases and run; nothing
    // marks that they all have.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const ping = await query(server, two.plaintext, pgSaved, "select 1", 5);
    assert(!ping.isError && ping.code === undefined, ping.text);
    assert(ping.ms < 1_000, `SELECT 1 took ${ping.ms.toFixed(0)} ms`);
    const stopped = await heavy;
    assertEquals(stopped.code, -33003, JSON.stringify(stopped));
    const took = performance.now() - started;
    assert(took < 3_000, `the heavy read ended after ${took.toFixed(0)} ms`);
    for (const answer of await Promise.all(mix)) {
      assert(answer.ms < 10_000, JSON.stringify(answer));
    }
  },
);

/** Peak RSS of this process (the server runs in it) while `work` runs. */
async function peakRss<T>(work: () => Promise<T>) {
  let peak = Deno.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, Deno.memoryUsage().rss);
  }, 5);
  try {
    const value = await work();
    peak = Math.max(peak, Deno.memoryUsage().rss);
    return { value, peak };
  } finally {
    clearInterval(timer);
  }
}

Deno.test("SELECT randomblob(500000000) answers within its timeout and the RSS grows < 256 MiB", async () => {
  await using lite = await openFixture("sqlite");
  const file = savedConnection(lite, "File");
  await using server = await serverWith([file]);
  const token = server.token!;
  // Warm the worker up, so the growth measured is the value's.
  await query(server, token, file, "select 1");
  const before = Deno.memoryUsage().rss;
  const { value, peak } = await peakRss(() =>
    query(server, token, file, "select randomblob(500000000) as b", 5)
  );
  assert(value.ms < 5_000, `${value.ms} ms`);
  assert(value.isError || value.code !== undefined, JSON.stringify(value));
  assert(/too big|budget|TOOBIG/i.test(value.text), value.text);
  const growth = (peak - before) / 2 ** 20;
  assert(growth < 256, `RSS grew ${growth.toFixed(0)} MiB`);
  for (
    const sql of [
      "select zeroblob(400000000) as b",
      "select length(replace(hex(zeroblob(10000000)), '0', '0000000000')) as n",
      "with recursive g(n) as (select 1 union all select n + 1 from g where n < 100) select length(group_concat(hex(zeroblob(1000000)))) from g",
    ]
  ) {
    const answer = await query(server, token, file, sql, 5);
    assert(/too big|TOOBIG/i.test(answer.text), `${sql}: ${answer.text}`);
  }
  // printf() past the limit answers NULL rather than failing (SQLite 3.40).
  const printf = await query(
    server,
    token,
    file,
    "select printf('%.*c', 300000000, 'x') as s",
    10,
  );
  assert(printf.text.length < 100_000, printf.text.slice(0, 200));
  const after = (Deno.memoryUsage().rss - before) / 2 ** 20;
  assert(after < 256, `RSS stayed ${after.toFixed(0)} MiB higher`);
});
