/**
 * Per-token budgets and the kill switch end to end, set with the CLI against
 * a running server sharing its app directory: a token limited to 10 calls a
 * minute gets its 11th tool call refused with the retry time (and a protocol
 * request -33010 with Retry-After); a paused token is refused everything and
 * its running query on PostgreSQL is stopped within a second
 * (docs/tokens.md "Budgets and pausing").
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import { mainArgs } from "../_main.ts";
import { parseHandshake } from "../../lib/protocol/handshake.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture, runningCount } from "../_db.ts";
import { modernRequest, postModern } from "../_server.ts";
import { callTool, toolErrorText } from "../_tool_call.ts";
import { waitUntil } from "../_wait.ts";

async function dbport(home: string, ...args: string[]): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: mainArgs(...args),
    env: { DBPORT_HOME: home, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  assertEquals(
    output.code,
    0,
    `${args.join(" ")}: ${new TextDecoder().decode(output.stderr)}`,
  );
  return text;
}

Deno.test("a token limited to 10 calls a minute gets its 11th refused with the retry time", async () => {
  await using server = await serverWith([]);
  const { plaintext } = await server.mint("readOnly", { name: "b40 calls" });
  const authorization = `Bearer ${plaintext}`;
  const set = await dbport(
    server.home,
    "tokens",
    "set",
    "b40 calls",
    "--max-calls-per-minute",
    "10",
  );
  assertMatch(set, /Budget of token "b40 calls" .*: 10 calls\/min/);
  await server.server.syncTokens();
  for (let i = 1; i <= 10; i++) {
    const ok = await callTool(server, "list_connections", {}, {
      authorization,
    });
    assertEquals(ok.json.result?.isError, undefined, `call ${i}: ${ok.text}`);
  }
  const eleventh = await callTool(server, "list_connections", {}, {
    authorization,
  });
  assertMatch(
    toolErrorText(eleventh),
    /^denied: the token "b40 calls" may make 10 calls a minute \(its budget\), and made them; try again in \d+ s/,
  );
  const seconds = Number(
    /try again in (\d+) s/.exec(toolErrorText(eleventh))![1],
  );
  assert(seconds >= 1 && seconds <= 60, String(seconds));
  // A protocol request past the limit: -33010, HTTP 429, Retry-After.
  const listed = await postModern(
    server.url,
    modernRequest("tools/list", {}, 77),
    { authorization },
  );
  assertEquals(listed.status, 429);
  assertEquals(listed.json.error.code, -33010);
  const retry = Number(listed.headers.get("retry-after"));
  assert(retry >= 1 && retry <= 60, String(retry));
  assertEquals(listed.json.error.data.retryAfterSeconds, retry);
  // Another token is not held by this one's budget.
  const other = await callTool(server, "list_connections", {});
  assertEquals(other.json.result?.isError, undefined, other.text);
  const listedCli = await dbport(server.home, "tokens", "list");
  assertMatch(listedCli, /10 calls\/min/);
});

Deno.test(
  "postgres: pausing a token refuses it and stops its running query within a second; resume lets it in",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const saved = savedConnection(fixture, "Pause pg");
    await using server = await serverWith([saved]);
    const { plaintext } = await server.mint("readOnly", { name: "b40 pause" });
    const authorization = `Bearer ${plaintext}`;
    const marker = `b40_pause_${crypto.randomUUID().slice(0, 8)}`;
    // A slow read (pg_sleep is off the allowlist): a heavy cross join.
    const running = callTool(server, "execute_query", {
      connection_id: saved.id,
      query:
        `select count(*) as ${marker} from generate_series(1, 100000000) a cross join generate_series(1, 100) b`,
      timeout_seconds: 120,
    }, { authorization });
    await waitUntil(
      "the slow read to start",
      async () => await runningCount(fixture, marker) > 0,
      { timeoutMs: 20_000, intervalMs: 20 },
    );
    const paused = await dbport(server.home, "tokens", "pause", "b40 pause");
    const pausedAt = Date.now();
    assertMatch(paused, /^Paused token "b40 pause"/);
    const answer = await running;
    const answered = Date.now() - pausedAt;
    assertEquals(answer.json.error?.code, -33002, answer.text);
    assertMatch(answer.json.error.message, /the user paused its token/);
    await waitUntil(
      "the paused token's read to leave pg_stat_activity",
      async () => await runningCount(fixture, marker) === 0,
      { timeoutMs: 60_000 },
    );
    const stopped = Date.now() - pausedAt;
    // deno-lint-ignore no-console
    console.log(
      `paused → answered in ${answered} ms, query gone from pg_stat_activity in ${stopped} ms`,
    );
    assert(stopped <= 1_000, `the query ran on for ${stopped} ms`);

    const refused = await callTool(server, "list_connections", {}, {
      authorization,
    });
    assertMatch(
      toolErrorText(refused),
      /^denied: the token "b40 pause" is paused by the user: nothing it sends runs until they resume it/,
    );
    const listed = await postModern(
      server.url,
      modernRequest("tools/list", {}, 78),
      { authorization },
    );
    assertEquals(listed.status, 403);
    assertEquals(listed.json.error.code, -33007);

    await dbport(server.home, "tokens", "resume", "b40 pause");
    await server.server.syncTokens();
    const back = await callTool(server, "list_connections", {}, {
      authorization,
    });
    assertEquals(back.json.result?.isError, undefined, back.text);
  },
);

Deno.test("sqlite: rows read and writes per hour refuse the next read and write with the retry time", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Budget sqlite", {
    externalAccess: "readWrite",
    safeMode: "silent",
  });
  await using server = await serverWith([saved]);
  const { plaintext } = await server.mint("readWrite", { name: "b40 rows" });
  const authorization = `Bearer ${plaintext}`;
  await dbport(
    server.home,
    "tokens",
    "set",
    "b40 rows",
    "--max-rows-per-hour",
    "3",
    "--max-writes-per-hour",
    "1",
  );
  await server.server.syncTokens();
  const run = (query: string) =>
    callTool(server, "execute_query", { connection_id: saved.id, query }, {
      authorization,
    });
  for (
    const query of ["select name from authors", "select name from authors"]
  ) {
    const read = await run(query);
    assertEquals(read.json.result?.structuredContent?.row_count, 2, read.text);
  }
  assertMatch(
    toolErrorText(await run("select 1")),
    /^denied: the token "b40 rows" has spent its 3 rows read an hour \(its budget\); try again in \d+ s, or ask the user to raise it \(.* --max-rows-per-hour N\)/,
  );
  const wrote = await run("insert into authors (name) values ('Grace')");
  assertEquals(
    wrote.json.result?.structuredContent?.rows_affected,
    1,
    wrote.text,
  );
  assertMatch(
    toolErrorText(await run("insert into authors (name) values ('Edsger')")),
    /^denied: the token "b40 rows" has spent its 1 writes an hour \(its budget\); try again in \d+ s/,
  );
  const [row] = await fixture.admin("select count(*) as n from authors") as {
    n: number;
  }[];
  assertEquals(Number(row?.n), 3);
});

Deno.test("the stdio bridge's tokens carry the bridge budget: tokens set --bridge limits them, tokens pause --bridge refuses them", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Bridge sqlite");
  await using server = await serverWith([saved]);
  const parsed = parseHandshake(
    await Deno.readTextFile(server.server.handshakePath),
  );
  assert(parsed.ok && parsed.handshake.token !== null);
  const authorization = `Bearer ${parsed.handshake.token}`;
  await dbport(
    server.home,
    "tokens",
    "set",
    "--bridge",
    "--max-calls-per-minute",
    "2",
  );
  await server.server.syncTokens();
  const call = () =>
    callTool(server, "list_connections", {}, { authorization });
  for (let i = 0; i < 2; i++) {
    assertEquals((await call()).json.result?.isError, undefined);
  }
  assertMatch(
    toolErrorText(await call()),
    /^denied: the token "__stdio_bridge__" may make 2 calls a minute .*tokens set --bridge --max-calls-per-minute N/,
  );
  // A user token is not held by the bridge's budget.
  assertEquals(
    (await callTool(server, "list_connections", {})).json.result?.isError,
    undefined,
  );
  await dbport(
    server.home,
    "tokens",
    "set",
    "--bridge",
    "--max-calls-per-minute",
    "off",
  );
  await dbport(server.home, "tokens", "pause", "--bridge");
  await server.server.syncTokens();
  assertMatch(
    toolErrorText(await call()),
    /is paused by the user.*tokens resume --bridge/,
  );
  assertMatch(
    await dbport(server.home, "tokens", "list"),
    /The stdio bridge's tokens: paused/,
  );
});
