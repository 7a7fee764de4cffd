/**
 * The fixes of the outsider findings of stop 44 (/work/notes/fix44.md),
 * end to end: what a unit test cannot show (the event loop, a pool shared
 * by two tokens, connection slots, files on disk).
 */

import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import { savedConnection, serverWith } from "../_connections.ts";
import { openFixture } from "../_db.ts";
import {
  type Answer,
  initializeSession,
  modernHeaders,
  modernRequest,
  post,
  postLegacy,
  postModern,
} from "../_server.ts";
import {
  deepBody,
  longestStall,
  textOf,
  TOOL_CALL_HEADERS,
  wideSelect,
} from "../_outsider.ts";
import { callTool } from "../_tool_call.ts";

Deno.test("a body nested millions deep is refused without stalling, with or without a token", async () => {
  await using fixture = await openFixture("sqlite");
  const shop = savedConnection(fixture, "fix44_lite");
  await using server = await serverWith([shop]);
  const body = deepBody(shop.id, "x", 4_900_000);
  let wrong: Answer | null = null;
  const stall = await longestStall(
    post(server.url, body, {
      ...TOOL_CALL_HEADERS,
      authorization: "Bearer dbp_not_a_token",
    }).then((answer) => wrong = answer),
  );
  assertEquals(wrong!.status, 401);
  assert(stall < 1_000, `the event loop stalled ${Math.round(stall)} ms`);
  const answer = await post(server.url, body, TOOL_CALL_HEADERS);
  assertEquals(answer.status, 400);
  assertEquals(answer.json.error.code, -32602);
  assertEquals(answer.json.error.data, { argument: "x" });
});

Deno.test("a mismatched Mcp-Param header over a deep value answers a short 400", async () => {
  await using fixture = await openFixture("sqlite");
  const shop = savedConnection(fixture, "fix44_lite");
  await using server = await serverWith([shop]);
  const body = deepBody(shop.id, "x", 60);
  const answer = await post(server.url, body, {
    ...TOOL_CALL_HEADERS,
    "mcp-param-x": "1",
  });
  assertEquals(answer.status, 400);
  assertEquals(answer.json.error.code, -32020);
  assert(answer.text.length < 10_000, `${answer.text.length} bytes`);
});

Deno.test("deeply nested bind params answer -32602 naming params", async () => {
  await using fixture = await openFixture("sqlite");
  const shop = savedConnection(fixture, "fix44_lite");
  await using server = await serverWith([shop]);
  for (const depth of [50, 1_000_000]) {
    const answer = await post(
      server.url,
      deepBody(shop.id, "params", depth),
      TOOL_CALL_HEADERS,
    );
    assertEquals(answer.json?.error?.code, -32602, answer.text.slice(0, 200));
    assertEquals(answer.json.error.data?.argument, "params");
  }
});

Deno.test("mariadb: one token's slow reads leave a session for another token's read", async () => {
  await using fixture = await openFixture("mysql");
  const shop = savedConnection(fixture, "fix44_my");
  await using server = await serverWith([shop]);
  const a = `Bearer ${
    (await server.mint("readOnly", { name: "A" })).plaintext
  }`;
  const b = `Bearer ${
    (await server.mint("readOnly", { name: "B" })).plaintext
  }`;
  const args = { connection_id: shop.id, query: "select 1" };
  await callTool(server, "execute_query", args, { authorization: b });
  const flood = Array.from(
    { length: 6 },
    () =>
      callTool(server, "execute_query", {
        connection_id: shop.id,
        query: "select sleep(4)",
      }, { authorization: a }),
  );
  await new Promise((resolve) => setTimeout(resolve, 500));
  const started = performance.now();
  const answer = await callTool(server, "execute_query", args, {
    authorization: b,
  });
  const waited = performance.now() - started;
  const slow = await Promise.all(flood);
  assertEquals(answer.json.result.isError, undefined, answer.text);
  assert(waited < 2_500, `token B waited ${Math.round(waited)} ms`);
  for (const done of slow) assertEquals(done.json.result.isError, undefined);
});

Deno.test("sqlite: long column names are refused within the budget by execute_query and listed within it by export_query", async () => {
  await using fixture = await openFixture("sqlite");
  const shop = savedConnection(fixture, "fix44_lite");
  await using server = await serverWith([shop]);
  const query = wideSelect("x".repeat(1_000), 40, 40);
  const read = await callTool(server, "execute_query", {
    connection_id: shop.id,
    query,
  });
  assert(textOf(read).length <= 40_000, `${textOf(read).length} characters`);
  assert(textOf(read).includes("1600 column names"), textOf(read));
  const exported = await callTool(server, "export_query", {
    connection_id: shop.id,
    query,
    format: "csv",
  });
  const text = textOf(exported);
  assert(text.length <= 40_000, `${text.length} characters`);
  assert(text.includes("of 1600 column names left out"), text.slice(0, 300));
});

Deno.test("postgres: a first row of 1,600 long cells answers within the budget and says why it is empty", async () => {
  await using fixture = await openFixture("postgres");
  const shop = savedConnection(fixture, "fix44_pg");
  await using server = await serverWith([shop]);
  const answer = await callTool(server, "execute_query", {
    connection_id: shop.id,
    query: wideSelect("c", 40, 40, "repeat('x', 30000)"),
  });
  const text = textOf(answer);
  assert(text.length <= 40_000, `${text.length} characters`);
  assert(
    text.includes("the first row alone is wider than the budget"),
    text.slice(-600),
  );
});

Deno.test("sqlite: exports stop at maxExportTotalBytes with a message naming it", async () => {
  await using fixture = await openFixture("sqlite");
  const shop = savedConnection(fixture, "fix44_lite");
  await using server = await serverWith([shop], {
    maxExportBytes: 4_000_000,
    maxExportTotalBytes: 7_000_000,
  });
  const query =
    `with recursive r(n) as (select 1 union all select n + 1 from r where n < 3000) select printf('%.*c', 1000, 'x') from r`;
  const texts: string[] = [];
  for (let i = 0; i < 3; i++) {
    texts.push(textOf(
      await callTool(server, "export_query", {
        connection_id: shop.id,
        query,
        format: "csv",
      }),
    ));
  }
  let total = 0;
  for await (const entry of Deno.readDir(`${server.home}/exports`)) {
    total += (await Deno.stat(`${server.home}/exports/${entry.name}`)).size;
  }
  assert(total <= 7_000_000, `${total} bytes of exports`);
  assert(texts[2]!.startsWith("denied:"), texts[2]);
  assert(texts[2]!.includes("maxExportTotalBytes"), texts[2]);
});

Deno.test("one token's subscription streams are capped: a ninth is -33010, another token is served", async () => {
  await using fixture = await openFixture("sqlite");
  await using server = await serverWith([
    savedConnection(fixture, "fix44_lite"),
  ]);
  const a = `Bearer ${
    (await server.mint("readOnly", { name: "A" })).plaintext
  }`;
  const b = `Bearer ${
    (await server.mint("readOnly", { name: "B" })).plaintext
  }`;
  const controllers: AbortController[] = [];
  const readers: ReadableStreamDefaultReader<Uint8Array>[] = [];
  const open = async (i: number) => {
    const body = modernRequest("subscriptions/listen", {
      notifications: { resourcesListChanged: true },
    }, 1000 + i);
    const controller = new AbortController();
    controllers.push(controller);
    const response = await fetch(server.url, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { ...modernHeaders(body), authorization: a },
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    readers.push(reader);
    await reader.read();
    return response.status;
  };
  try {
    const statuses = await Promise.all(
      Array.from({ length: 8 }, (_, i) => open(i)),
    );
    assertEquals(statuses, Array(8).fill(200));
    assertEquals(await open(8), 429);
    const answer = await postModern(
      server.url,
      modernRequest("tools/list", {}, 5),
      { authorization: b },
    );
    assertEquals(answer.status, 200, answer.text.slice(0, 200));
  } finally {
    for (const reader of readers) await reader.cancel().catch(() => {});
    for (const controller of controllers) controller.abort();
  }
});

Deno.test("sqlite: the history resource answers within the budget and counts what it cut", async () => {
  await using fixture = await openFixture("sqlite");
  const shop = savedConnection(fixture, "fix44_lite");
  await using server = await serverWith([shop]);
  const pad = "x".repeat(100_000);
  for (let i = 0; i < 5; i++) {
    await callTool(server, "execute_query", {
      connection_id: shop.id,
      query: `select ${i}, length('${pad}')`,
    });
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  const answer = await postModern(
    server.url,
    modernRequest("resources/read", {
      uri: `dbport://connections/${shop.id}/history?limit=5`,
    }, 1),
  );
  const text: string = answer.json.result.contents[0].text;
  assert(text.length <= 40_000, `${text.length} characters`);
  assertEquals(JSON.parse(text).cut_statements, 5);
});

Deno.test("one token's legacy sessions do not evict another token's session", async () => {
  await using fixture = await openFixture("sqlite");
  await using server = await serverWith([
    savedConnection(fixture, "fix44_lite"),
  ]);
  const a = `Bearer ${
    (await server.mint("readOnly", { name: "A" })).plaintext
  }`;
  const b = `Bearer ${
    (await server.mint("readOnly", { name: "B" })).plaintext
  }`;
  const session = await initializeSession(server.url, "2025-11-25", {
    authorization: b,
  });
  for (let i = 0; i < 17; i++) {
    await initializeSession(server.url, "2025-11-25", { authorization: a });
  }
  const answer = await postLegacy(server.url, {
    jsonrpc: "2.0",
    id: 3,
    method: "tools/list",
    params: {},
  }, {
    authorization: b,
    "mcp-session-id": session,
    "mcp-protocol-version": "2025-11-25",
  });
  assertEquals(answer.status, 200, answer.text.slice(0, 200));
});

Deno.test("postgres: explain_query echoes a cut statement and its answer stays within the budget", async () => {
  await using fixture = await openFixture("postgres");
  const shop = savedConnection(fixture, "fix44_pg");
  await using server = await serverWith([shop], { maxAnswerChars: 5_000 });
  // Under 4 KB: the statement is parsed on the event loop (no worker).
  const joins = Array.from(
    { length: 30 },
    (_, i) =>
      `join pg_catalog.pg_attribute a${i} on a${i}.attrelid = c.oid and a${i}.attnum = ${i}`,
  ).join(" ");
  const answer = await callTool(server, "explain_query", {
    connection_id: shop.id,
    query: `select * from pg_catalog.pg_class c ${joins}`,
  });
  const text = textOf(answer);
  assert(text.length <= 5_000, `${text.length} characters`);
  const structured = JSON.parse(text);
  assert(
    structured.statement.includes("more characters of the statement you sent"),
    structured.statement.slice(-200),
  );
  assertEquals(structured.is_truncated, true);
});

Deno.test("postgres: one token's reads waiting on a lock leave a session for another token's read", async () => {
  await using fixture = await openFixture("postgres");
  const shop = savedConnection(fixture, "fix44_pg");
  await using server = await serverWith([shop]);
  const a = `Bearer ${
    (await server.mint("readOnly", { name: "A" })).plaintext
  }`;
  const b = `Bearer ${
    (await server.mint("readOnly", { name: "B" })).plaintext
  }`;
  const args = { connection_id: shop.id, query: "select 1" };
  await callTool(server, "execute_query", args, { authorization: b });
  // A session of the test's own holds the table: A's reads wait on the lock
  // (no CPU spent), each holding one of the connection's sessions.
  const holder = postgres(fixture.url, { max: 1, onnotice: () => {} });
  const locked = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const held = holder.begin(async (tx) => {
    await tx.unsafe(
      `lock table ${fixture.schema}.authors in access exclusive mode`,
    );
    locked.resolve();
    await release.promise;
  });
  try {
    await locked.promise;
    const flood = Array.from(
      { length: 6 },
      () =>
        callTool(server, "execute_query", {
          connection_id: shop.id,
          query: `select count(*) from ${fixture.schema}.authors`,
        }, { authorization: a }),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const started = performance.now();
    const answer = await callTool(server, "execute_query", args, {
      authorization: b,
    });
    const waited = performance.now() - started;
    release.resolve();
    await held;
    const slow = await Promise.all(flood);
    assertEquals(answer.json.result.isError, undefined, answer.text);
    assert(waited < 2_500, `token B waited ${Math.round(waited)} ms`);
    for (const done of slow) {
      assertEquals(
        done.json.result?.isError,
        undefined,
        done.text.slice(0, 300),
      );
    }
  } finally {
    release.resolve();
    await held.catch(() => {});
    await holder.end();
  }
});
