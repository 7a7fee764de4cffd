/**
 * Outsider attack of stop 44, second round (branch attack2,
 * /work/notes/attack2.md): the `POST /mcp` fast path on node:http against
 * the Hono path, the wired PostgreSQL reader, MariaDB plain reads.
 */

import { assert, assertEquals } from "@std/assert";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture, runningCount } from "../_db.ts";
import { modernHeaders, modernRequest, rawHttp } from "../_server.ts";
import { callTool } from "../_tool_call.ts";
import { waitUntil } from "../_wait.ts";
import { secretMoves } from "../../lib/console/url_secrets.ts";

/** A raw POST of tools/list with `extra` header lines, to `target`. */
function rawPost(
  port: number,
  target: string,
  lines: string[],
  body = JSON.stringify(modernRequest("tools/list", {}, 1)),
): string {
  let request = `POST ${target} HTTP/1.1\r\n`;
  for (const [name, value] of Object.entries(modernHeaders(JSON.parse(body)))) {
    request += `${name}: ${value}\r\n`;
  }
  for (const line of lines) request += `${line}\r\n`;
  request += `Content-Length: ${
    new TextEncoder().encode(body).length
  }\r\nConnection: close\r\n\r\n${body}`;
  void port;
  return request;
}

Deno.test("POST /mcp on the fast path answers odd Host, Origin and Authorization headers as the Hono path does", async () => {
  await using fixture = await openFixture("sqlite");
  await using server = await serverWith([
    savedConnection(fixture, "atk2_lite"),
  ]);
  const p = server.port;
  const auth = `Authorization: Bearer ${server.token}`;
  const cases: Record<string, string[]> = {
    plain: [`Host: 127.0.0.1:${p}`, auth],
    twoHosts: [`Host: 127.0.0.1:${p}`, `Host: evil.example`, auth],
    upperHost: [`Host: LOCALHOST:${p}`, auth],
    dotHost: [`Host: localhost.:${p}`, auth],
    port0: [`Host: 127.0.0.1:0`, auth],
    v6: [`Host: [::1]:${p}`, auth],
    v6long: [`Host: [0:0:0:0:0:0:0:1]:${p}`, auth],
    noHost: [auth],
    twoAuth: [`Host: 127.0.0.1:${p}`, auth, `Authorization: Bearer x`],
    twoAuthRev: [`Host: 127.0.0.1:${p}`, `Authorization: Bearer x`, auth],
    originNull: [`Host: 127.0.0.1:${p}`, auth, `Origin: null`],
    twoOrigins: [
      `Host: 127.0.0.1:${p}`,
      auth,
      `Origin: https://claude.ai`,
      `Origin: https://evil.example`,
    ],
  };
  const expected: Record<string, number> = {
    plain: 200,
    twoHosts: 403,
    upperHost: 200,
    dotHost: 403,
    port0: 403,
    v6: 200,
    v6long: 403,
    noHost: 400,
    twoAuth: 400,
    twoAuthRev: 400,
    originNull: 403,
    twoOrigins: 403,
  };
  for (const [name, lines] of Object.entries(cases)) {
    const fast = await rawHttp(p, rawPost(p, "/mcp", lines));
    const hono = await rawHttp(
      p,
      rawPost(p, `http://127.0.0.1:${p}/mcp`, lines),
    );
    const other = await rawHttp(p, rawPost(p, `/mcp/`, lines));
    const dbl = await rawHttp(p, rawPost(p, `//mcp`, lines));
    const up = await rawHttp(p, rawPost(p, `/MCP`, lines));
    assertEquals(
      fast.status,
      expected[name],
      `${name}: ${fast.body.slice(0, 200)}`,
    );
    assertEquals(hono.status, fast.status, name);
    assertEquals(hono.body, fast.body, name);
    for (const elsewhere of [other, dbl, up]) {
      assert(elsewhere.status !== 200, `${name}: ${elsewhere.status}`);
    }
  }
});

Deno.test(
  "mariadb: a view over a definer function that sets a user variable is not a plain read",
  needs("mysql"),
  async () => {
    await using fixture = await openFixture("mysql");
    await fixture.admin(
      `create function atk2_f() returns int deterministic begin set @atk2_left = 'atk2_secret'; return 1; end`,
    );
    await fixture.admin(`create view atk2_v as select atk2_f() as one`);
    const shop = savedConnection(fixture, "atk2_my", {
      externalAccess: "readOnly",
    });
    await using server = await serverWith([shop]);
    const a = `Bearer ${
      (await server.mint("readOnly", { name: "A" })).plaintext
    }`;
    const b = `Bearer ${
      (await server.mint("readOnly", { name: "B" })).plaintext
    }`;
    const run = async (query: string, auth: string) => {
      const answer = await callTool(server, "execute_query", {
        connection_id: shop.id,
        query,
      }, { authorization: auth });
      return JSON.stringify(
        answer.json?.result?.structuredContent?.rows ?? answer.text,
      ).slice(0, 300);
    };
    assert((await run(`select * from atk2_v`, a)).includes("-33007"));
    assertEquals(await run(`select @atk2_left`, b), "[[null]]");
    await run(`select cast('atk2_secret_w' as signed) as x`, a);
    assertEquals(await run(`show warnings`, b), "[]");
  },
);

const PG_VALUES = [
  `'NaN'::numeric`,
  `'Infinity'::numeric`,
  `'-Infinity'::float8`,
  `'NaN'::float4`,
  `'\\x00ff10'::bytea`,
  `array[1,null,3]`,
  `'{{1,2},{3,4}}'::int[]`,
  `array['a,b','"q"',null,'NULL','']::text[]`,
  `'[1,5)'::int4range`,
  `'empty'::numrange`,
  `'{"a":[1,{"b":null}],"c":"\\u00e9"}'::jsonb`,
  `convert_from('\\xe9'::bytea,'LATIN1')`,
  `interval '1 day 2:03:04.5'`,
  `'2024-02-29 23:59:59.999999+05:30'::timestamptz`,
  `'infinity'::timestamp`,
  `'-infinity'::date`,
  `12345678901234567890::numeric`,
  `9223372036854775807::int8`,
  `'1.50'::money`,
  `'(1,2)'::point`,
  `'ab\tc\\d'::text`,
  `E'line\\nbreak'`,
  `chr(1)||chr(127)`,
  `'00000000-0000-0000-0000-000000000001'::uuid`,
  `'192.168.0.1/24'::inet`,
  `true`,
  `null::int`,
  `'a b'::tsvector`,
  `array[]::int[]`,
  `'{"(1,2)"}'::text[]`,
  `row(1,'a',null)`,
  `'1 2'::int2vector`,
  `'12:00+02'::timetz`,
  `b'1010'::bit(4)`,
  `'<a>x</a>'::xml`,
  `'{1.5,NaN}'::float8[]`,
  `array['[1,2)'::int4range]`,
];

Deno.test(
  "postgres: the wired reader answers every type as postgres.js does",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const query = `select ${
      PG_VALUES.map((v, i) => `${v} as c${i}`).join(", ")
    }`;
    const results: string[] = [];
    for (const flag of ["0", "1"]) {
      Deno.env.set("DBPORT_PG_WIRE", flag);
      const shop = savedConnection(fixture, `atk2_pg${flag}`);
      await using server = await serverWith([shop]);
      const answer = await callTool(server, "execute_query", {
        connection_id: shop.id,
        query,
      });
      results.push(
        JSON.stringify(answer.json?.result?.structuredContent ?? answer.text),
      );
    }
    Deno.env.delete("DBPORT_PG_WIRE");
    const a = JSON.parse(results[0]!), b = JSON.parse(results[1]!);
    assertEquals(b.rows.length, 1);
    for (let i = 0; i < PG_VALUES.length; i++) {
      assertEquals(b.columns[i], a.columns[i], PG_VALUES[i]);
      assertEquals(b.rows[0][i], a.rows[0][i], PG_VALUES[i]);
    }
    assertEquals(b.rows[0][0], "NaN");
    assertEquals(b.rows[0][11], "é");
  },
);

Deno.test({
  name:
    "postgres: 45 wired reads of three tokens at once, with errors and clients that leave, each answer its own rows",
  ...needs("postgres"),
  // Found by the outsider (medium), fixed — not where it guessed: a client that leaves mid-read makes dbport send a
  // CancelRequest for its session's backend (lib/db/postgres/pg_wired.ts
  // cancelRequest, via the connection signal); when it lands after that
  // read ended and the session went to another token's read, that read is
  // cancelled instead. Seen (1 run in 3 of this whole file, 2 cores
  // shared): another token's `select 'atk2_…'::int` answered -33003
  // "Request timed out: canceling statement due to user request [SQLSTATE
  // 57014]" instead of its own invalid-input error. Not reproduced alone.
  // The cancel was postgres.js's, for the leaving call's vetting statement
  // on dbport's own pool (lib/db/postgres/postgres.ts `run`): sent without
  // waiting, it stopped the next caller's vetting on that session. A
  // cancelled call now lets its catalog statement end (3 in 8 runs of this
  // file failed before, 0 in 8 after).
  async fn() {
    await using fixture = await openFixture("postgres");
    const shop = savedConnection(fixture, "atk2_pgc");
    await using server = await serverWith([shop]);
    const tokens: string[] = [];
    for (const name of ["A", "B", "C"]) {
      tokens.push(
        `Bearer ${(await server.mint("readOnly", { name })).plaintext}`,
      );
    }
    const aborts: AbortController[] = [];
    const jobs = Array.from({ length: 45 }, async (_, i) => {
      const tag = `atk2_${i}_${crypto.randomUUID().slice(0, 8)}`;
      const n = i % 3 === 0 ? 2000 : i % 3 === 1 ? 1 : 7;
      const kind = i % 9;
      if (kind === 4) {
        // a client that goes away mid-read
        const controller = new AbortController();
        aborts.push(controller);
        const body = modernRequest("tools/call", {
          name: "execute_query",
          arguments: {
            connection_id: shop.id,
            query:
              `select '${tag}' as tag, count(*) from generate_series(1, 20000000) g`,
          },
        }, 1000 + i);
        const pending = fetch(server.url, {
          method: "POST",
          body: JSON.stringify(body),
          headers: { ...modernHeaders(body), authorization: tokens[i % 3]! },
          signal: controller.signal,
        }).then((r) => r.text()).catch(() => "aborted");
        const timer = setTimeout(() => controller.abort(), 100);
        await pending;
        clearTimeout(timer);
        return null;
      }
      const query = kind === 7
        ? `select '${tag}'::int`
        : `select '${tag}' as tag, g from generate_series(1, ${n}) g`;
      const answer = await callTool(server, "execute_query", {
        connection_id: shop.id,
        query,
      }, { authorization: tokens[i % 3]! });
      return { tag, n, kind, answer };
    });
    for (const result of await Promise.all(jobs)) {
      if (result === null) continue;
      const { tag, n, kind, answer } = result;
      const content = answer.json?.result?.structuredContent;
      if (kind === 7) {
        assert(
          answer.json?.result?.isError === true,
          answer.text.slice(0, 400),
        );
        assert(answer.text.includes(tag), answer.text.slice(0, 300));
        continue;
      }
      assert(content !== undefined, answer.text.slice(0, 300));
      for (const row of content.rows) assertEquals(row[0], tag);
      if (!content.is_truncated) assertEquals(content.rows.length, n);
    }
  },
});

Deno.test({
  name:
    "mariadb: a plain read's found_rows and warning count are not seen by another token",
  ...needs("mysql"),
  // Found by the outsider (low), fixed: a plain read (lib/db/mysql/mysql_plain.ts
  // leavesNoState allows
  // SQL_CALC_FOUND_ROWS and warnings) runs with no reset
  // (lib/db/mysql/mysql_read.ts), so the next token's read on the same pooled
  // session reads FOUND_ROWS() and @@warning_count of the previous token's
  // statement: START TRANSACTION READ ONLY clears neither. A read that is
  // not plain now first runs a statement reading a table, which clears both
  // (lib/db/mysql/mysql_read.ts CLEAR_LAST_STATEMENT).
  async fn() {
    await using fixture = await openFixture("mysql");
    const shop = savedConnection(fixture, "atk2_my");
    await using server = await serverWith([shop]);
    const a = `Bearer ${
      (await server.mint("readOnly", { name: "A" })).plaintext
    }`;
    const b = `Bearer ${
      (await server.mint("readOnly", { name: "B" })).plaintext
    }`;
    const run = async (query: string, auth: string) => {
      const answer = await callTool(server, "execute_query", {
        connection_id: shop.id,
        query,
      }, { authorization: auth });
      return JSON.stringify(
        answer.json?.result?.structuredContent?.rows ?? answer.text,
      ).slice(0, 300);
    };
    await run(`select sql_calc_found_rows seq from seq_1_to_4242 limit 1`, a);
    assertEquals(await run(`select found_rows()`, b), `[["0"]]`);
    await run(
      `select cast('atk2_secret_w' as signed) as x, cast('y' as signed) as y`,
      a,
    );
    assertEquals(await run(`select @@warning_count`, b), `[["0"]]`);
  },
});

/** Send `bytes` on a fresh socket and read until the server closes or `ms`. */
async function exchange(
  port: number,
  parts: (string | Uint8Array)[],
  ms = 3000,
  gapMs = 0,
): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const chunks: Uint8Array[] = [];
  const reader = (async () => {
    const buffer = new Uint8Array(65536);
    for (;;) {
      const n = await conn.read(buffer).catch(() => null);
      if (n === null) break;
      chunks.push(buffer.slice(0, n));
    }
  })();
  const timer = setTimeout(() => {
    try {
      conn.close();
    } catch { /* closed */ }
  }, ms);
  for (const part of parts) {
    const bytes = typeof part === "string"
      ? new TextEncoder().encode(part)
      : part;
    let off = 0;
    while (off < bytes.length) {
      const n = await conn.write(bytes.subarray(off)).catch(() => -1);
      if (n < 0) {
        off = bytes.length;
        break;
      }
      off += n;
    }
    if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
  }
  await reader;
  clearTimeout(timer);
  try {
    conn.close();
  } catch { /* closed */ }
  const total = new Uint8Array(chunks.reduce((a, c) => a + c.length, 0));
  let o = 0;
  for (const c of chunks) {
    total.set(c, o);
    o += c.length;
  }
  return new TextDecoder().decode(total);
}

Deno.test("chunked, oversized, lying, pipelined, HTTP/1.0 and Expect bodies: the fast path answers as the Hono path", async () => {
  await using fixture = await openFixture("sqlite");
  await using server = await serverWith([
    savedConnection(fixture, "atk2_lite"),
  ]);
  const p = server.port;
  const body = JSON.stringify(modernRequest("tools/list", {}, 1));
  const head = (target: string, extra: string[]) => {
    let r =
      `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nAuthorization: Bearer ${server.token}\r\n`;
    for (const [n, v] of Object.entries(modernHeaders(JSON.parse(body)))) {
      r += `${n}: ${v}\r\n`;
    }
    for (const l of extra) r += `${l}\r\n`;
    return r + "\r\n";
  };
  const big = new Uint8Array(1024 * 1024).fill(0x20);
  const chunk = (b: Uint8Array) => {
    const h = new TextEncoder().encode(b.length.toString(16) + "\r\n");
    const out = new Uint8Array(h.length + b.length + 2);
    out.set(h);
    out.set(b, h.length);
    out.set([13, 10], h.length + b.length);
    return out;
  };
  for (const target of ["/mcp", `http://127.0.0.1:${p}/mcp`]) {
    const parts: (string | Uint8Array)[] = [
      head(target, ["Transfer-Encoding: chunked"]),
    ];
    for (let i = 0; i < 12; i++) parts.push(chunk(big));
    parts.push("0\r\n\r\n");
    const out = await exchange(p, parts, 5000);
    assert(out.startsWith("HTTP/1.1 413"), out.slice(0, 100));
    const lie = await exchange(
      p,
      [head(target, [`Content-Length: 11000000`])],
      2000,
    );
    assert(lie.startsWith("HTTP/1.1 413"), lie.slice(0, 100));
    const exp = await exchange(
      p,
      [
        head(target, [
          `Content-Length: ${body.length}`,
          "Expect: 100-continue",
        ]),
        body,
      ],
      2000,
      100,
    );
    assert(
      exp.startsWith("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200"),
      exp.slice(0, 100),
    );
    const pipe = await exchange(p, [
      head(target, [`Content-Length: ${body.length}`]) + body +
      head(target, [`Content-Length: ${body.length}`]).replace(
        /Authorization: [^\r]*\r\n/,
        "Authorization: Bearer nope\r\n",
      ) + body +
      head(target, [`Content-Length: ${body.length}`, "Connection: close"]) +
      body,
    ], 3000);
    assertEquals(pipe.match(/HTTP\/1.1 \d+/g), [
      "HTTP/1.1 200",
      "HTTP/1.1 401",
      "HTTP/1.1 200",
    ]);
    const ten = await exchange(p, [
      head(target, [`Content-Length: ${body.length}`]).replace(
        "HTTP/1.1",
        "HTTP/1.0",
      ) + body,
    ], 2000);
    assert(ten.startsWith("HTTP/1.1 200"), ten.slice(0, 100));
    const te2 = await exchange(p, [
      head(target, [
        `Content-Length: ${body.length}`,
        "Transfer-Encoding: chunked",
      ]) + chunk(new TextEncoder().encode(body)).reduce((s, b) =>
        s + String.fromCharCode(b), "") +
      "0\r\n\r\n",
    ], 2000);
    assert(te2.startsWith("HTTP/1.1 400"), te2.slice(0, 100));
  }
});

Deno.test(
  "a client that leaves mid-answer stops its query on both paths and both engines",
  needs("postgres", "mysql"),
  async () => {
    for (const engine of ["postgres", "mysql"] as const) {
      await using fixture = await openFixture(engine);
      const shop = savedConnection(fixture, "atk2_cut");
      await using server = await serverWith([shop]);
      for (const target of ["/mcp", `http://127.0.0.1:${server.port}/mcp`]) {
        const tag = `atk2_cut_${crypto.randomUUID().slice(0, 8)}`;
        const sleep = engine === "postgres"
          ? `(select count(*) from generate_series(1, 400000000))`
          : `(select count(*) from seq_1_to_1000 a, seq_1_to_1000 b, seq_1_to_1000 c)`;
        const body = JSON.stringify(
          modernRequest("tools/call", {
            name: "execute_query",
            arguments: {
              connection_id: shop.id,
              query: `select '${tag}' as tag, ${sleep}`,
            },
          }, 7),
        );
        let r =
          `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAuthorization: Bearer ${server.token}\r\nContent-Length: ${
            new TextEncoder().encode(body).length
          }\r\n`;
        for (
          const [n, v] of Object.entries(modernHeaders(JSON.parse(body)))
        ) r += `${n}: ${v}\r\n`;
        // The client stays until its statement is seen running (a first call
        // opens the pool and reads the catalog: seconds under CI's load),
        // then leaves without reading the answer.
        const conn = await Deno.connect({
          hostname: "127.0.0.1",
          port: server.port,
        });
        await conn.write(new TextEncoder().encode(r + "\r\n" + body));
        try {
          await waitUntil(
            `${engine} ${target}: its statement running`,
            async () => await runningCount(fixture, tag) === 1,
            { timeoutMs: 15_000, intervalMs: 50 },
          );
        } finally {
          conn.close();
        }
        await waitUntil(
          `${engine} ${target}: its statement stopped after the client left`,
          async () => await runningCount(fixture, tag) === 0,
          { timeoutMs: 5_000, intervalMs: 50 },
        );
      }
    }
  },
);

Deno.test(
  "postgres: 400,000,000-character values grow the process by less than 64 MiB and the rows after them stay right",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const shop = savedConnection(fixture, "atk2_huge");
    await using server = await serverWith([shop]);
    await callTool(server, "execute_query", {
      connection_id: shop.id,
      query: `select 1`,
    });
    const before = Deno.memoryUsage().rss;
    let peak = before;
    const timer = setInterval(() => {
      peak = Math.max(peak, Deno.memoryUsage().rss);
    }, 20);
    for (
      const query of [
        `select repeat('x', 400000000) as v`,
        `select 1 as a, repeat('y', 200000000) as v, 2 as b union all select 3, 'z', 4`,
        `select array_agg(repeat('x', 1000000)) from generate_series(1, 300)`,
      ]
    ) {
      const answer = await callTool(server, "execute_query", {
        connection_id: shop.id,
        query,
      });
      assertEquals(answer.status, 200);
      assert(answer.text.length < 200_000, `${answer.text.length}`);
      const rows = answer.json.result.structuredContent?.rows;
      if (query.includes("union") && rows?.length === 2) {
        assertEquals([rows[1][0], rows[1][1], rows[1][2]], [3, "z", 4]);
      }
    }
    clearInterval(timer);
    assert(peak - before < 64 * 1048576, `${(peak - before) / 1048576} MiB`);
  },
);

Deno.test(
  "postgres: session state a readWrite token leaves is not seen by a readOnly token's wired reads",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const s = fixture.schema;
    const shop = savedConnection(fixture, "atk2_pgs", {
      externalAccess: "readWrite",
      safeMode: "silent",
    });
    await using server = await serverWith([shop]);
    const w = `Bearer ${
      (await server.mint("fullAccess", { name: "W" })).plaintext
    }`;
    const r = `Bearer ${
      (await server.mint("readOnly", { name: "R" })).plaintext
    }`;
    const run = async (query: string, auth: string) => {
      const answer = await callTool(server, "execute_query", {
        connection_id: shop.id,
        query,
      }, { authorization: auth });
      return JSON.stringify(
        answer.json?.result?.structuredContent?.rows ??
          answer.json?.result?.content?.[0]?.text ?? answer.text,
      ).slice(0, 200);
    };
    for (
      const q of [
        `set application_name = 'atk2_w'`,
        `set search_path = atk2_nowhere`,
        `create temp table books (title text)`,
        `create temp table atk2_tmp as select 'atk2_secret' as v`,
        `prepare atk2_p as select 'atk2_secret'`,
        `listen atk2_chan`,
        `select pg_advisory_lock(4402)`,
        `begin`,
        `declare atk2_c cursor with hold for select 'atk2_secret'`,
        `select set_config('atk2.x', 'atk2_secret', false)`,
      ]
    ) await run(q, w);
    for (let i = 0; i < 4; i++) {
      const seen: string[] = [];
      for (
        const q of [
          `select current_setting('application_name'), current_setting('search_path'), current_setting('atk2.x', true)`,
          `select title from ${s}.books order by title`,
          `select count(*) from pg_prepared_statements`,
          `select count(*) from pg_cursors where name <> ''`,
          `select count(*) from pg_listening_channels()`,
          `select count(*) from pg_locks where locktype='advisory' and pid = pg_backend_pid()`,
          `select count(*) from pg_class where relname = 'atk2_tmp' and relpersistence = 't' and pg_table_is_visible(oid)`,
        ]
      ) seen.push(await run(q, r));
      // The custom setting: since stop 56 its set_config is refused
      // (pg_settings.ts), so the read finds it undefined (null); a session
      // that had it would show "" after DISCARD ALL. Never the secret.
      seen[0] = seen[0]!.replace(/,""\]\]$/, ",null]]");
      assertEquals(seen, [
        `[["dbport/unknown","\\"$user\\", public",null]]`,
        `[["Computing Machinery"],["Notes"]]`,
        `[["0"]]`,
        `[["0"]]`,
        `[["0"]]`,
        `[["0"]]`,
        `[["0"]]`,
      ]);
    }
  },
);

Deno.test({
  name: "tokens minted at once are all created",
  // Found by the outsider (low, outside the four areas), fixed: two TokenStore.create at once
  // (lib/app/tokens.ts create → lib/app/state_client.ts batch) fail with
  // "cannot start a transaction within a transaction": batch's BEGIN
  // IMMEDIATE is not serialised against another batch in flight.
  async fn() {
    await using fixture = await openFixture("sqlite");
    await using server = await serverWith([
      savedConnection(fixture, "atk2_lite"),
    ]);
    const minted = await Promise.all(
      ["A", "B", "C"].map((name) => server.mint("readOnly", { name })),
    );
    assertEquals(new Set(minted.map((m) => m.id)).size, 3);
  },
});

Deno.test("console edit: a saved password does not follow a new host, port, host parameter or tunnel", () => {
  const before = { url: "mysql://root:pw@db.example:3306/test" };
  for (
    const url of [
      "mysql://root:pw@evil.example:3306/test",
      "mysql://root:pw@db.example:3307/test",
      "mysql://root:pw@db.example:3306/test?host=evil.example",
      "postgres://root:pw@db.example:3306/test",
    ]
  ) assert(secretMoves(before, { url }) !== null, url);
  assert(
    secretMoves(before, { ...before, ssh: { host: "jump.evil.example" } }) !==
      null,
  );
  assertEquals(
    secretMoves(before, { url: "mysql://root:pw@DB.example:3306/other" }),
    null,
  );
});

Deno.test({
  name:
    "console edit: a saved MariaDB password does not follow a new socketPath",
  // Found by the outsider (low-medium), fixed: secretMoves (lib/console/url_secrets.ts
  // addressOf) compares protocol, host and the `host` query parameter only,
  // but mysql2 (lib/db/mysql/mysql_session.ts passes the URL as `uri`) takes every
  // other query parameter as an option: `?socketPath=/tmp/x.sock` makes it
  // connect to that Unix socket instead of the host, so an edit that adds
  // it sends the saved password to whoever listens there without asking for
  // it again. No query parameter of a connection URL is checked against an
  // allowlist.
  fn() {
    const before = { url: "mysql://root:pw@db.example:3306/test" };
    assert(
      secretMoves(before, {
        url: "mysql://root:pw@db.example:3306/test?socketPath=/tmp/atk2.sock",
      }) !== null,
    );
  },
});
