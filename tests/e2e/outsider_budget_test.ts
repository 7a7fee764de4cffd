/**
 * An outside attack on issue 40's plan limits and token budgets (branch
 * attack40b, /work/notes/attack40b.md): each bypass that worked is a test
 * here, fixed; the defences that held are a table per engine.
 *
 * Broke (fixed): SQLite aliases a plan line cannot be told apart from its
 * own words (`AS "q.r"`, `"CONSTANT ROW"`, `"x USING INDEX y"`, `"(z"`,
 * `"a VIRTUAL TABLE b"`); SQLite's automatic index (built by reading the
 * whole inner table, shown as `SEARCH … USING AUTOMATIC …`); `LIMIT n OFFSET
 * m` taken as n rows on SQLite and MariaDB; a partial index's
 * `sqlite_stat1` row taken as the table's size; writes sent at once all
 * passing a writes-per-hour budget before any was counted.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import type { Engine } from "../../lib/db/types.ts";
import { mainArgs } from "../_main.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture, runningCount } from "../_db.ts";
import { postLegacy } from "../_server.ts";
import { callTool, toolErrorText } from "../_tool_call.ts";
import { waitUntil } from "../_wait.ts";

const ROWS = 1_000_000;
const LIMIT = 100_000;

/** A 1,000,000-row table and a 1,000-row one, in the fixture's own space. */
const TABLES: Record<Engine, string[]> = {
  postgres: [
    `create table a4b_big as select g as id, md5(g::text) as w, g % 1000 as x from generate_series(1, ${ROWS}) g`,
    `alter table a4b_big add primary key (id)`,
    `create table a4b_small as select g as id, g as v from generate_series(1, 1000) g`,
    `analyze a4b_big`,
    `analyze a4b_small`,
  ],
  mysql: [
    `create table a4b_big (id int primary key, w varchar(40), x int)`,
    `insert into a4b_big select seq, md5(seq), seq % 1000 from seq_1_to_${ROWS}`,
    `create table a4b_small (id int primary key, v int)`,
    `insert into a4b_small select seq, seq from seq_1_to_1000`,
    `analyze table a4b_big`,
    `analyze table a4b_small`,
  ],
  sqlite: [
    `create table a4b_big (id integer primary key, w text, x int)`,
    `insert into a4b_big with recursive s(g) as (select 1 union all select g + 1 from s where g < ${ROWS}) select g, hex(g), g % 1000 from s`,
    `create table a4b_small (id integer primary key, v int)`,
    `insert into a4b_small with recursive s(g) as (select 1 union all select g + 1 from s where g < 1000) select g, g from s`,
  ],
};

const REFUSED =
  /^denied: (the plan of this read expects|"Limits \w+" refuses reads over a planned size)/;

/** Queries over `$big`/`$small`: refused (true) or run (false). */
const CASES: Record<Engine, [string, boolean][]> = {
  sqlite: [
    // Broke before the fix: the alias was cut at its dot or its words.
    [`select count(*) from $big as "q.r" where w like '%'`, true],
    [`select count(*) from $big as "CONSTANT ROW" where w like '%'`, true],
    [`select count(*) from $big "x USING INDEX y" where w like '%'`, true],
    [`select count(*) from $big as "(z" where w like '%'`, true],
    [`select count(*) from $big as "a VIRTUAL TABLE b" where w like '%'`, true],
    // Broke: SQLite reads all of b to build its automatic index.
    [`select count(*) from $small s join $big b on b.x = s.v`, true],
    // Broke: the skipped rows are read too.
    [`select * from $big limit 10 offset 999990`, true],
    [`select * from $big limit 999990, 10`, true],
    // Ran 3,000,000 rows sized as none: a recursive CTE is unsized, refused.
    [
      `with recursive r(n) as (select 1 union all select n + 1 from r where n < 3000000) select count(*) from r`,
      true,
    ],
    [`with c(n) as (select 1) select n from c`, false],
    // Ran unplanned: these PRAGMAs read every row of the file.
    [`pragma integrity_check`, true],
    [`pragma main.quick_check`, true],
    [`select * from pragma_integrity_check`, true],
    [`select * from "pragma_quick_check" as q`, true],
    [`pragma table_info(a4b_big)`, false],
    [`select name from pragma_table_info('a4b_big')`, false],
    // Held.
    [`select * from $big as small where w like '%'`, true],
    [`select * from main.$big where w like '%'`, true],
    [`select (select count(*) from $big) from $small`, true],
    [`select * from $small where v in (select x from $big)`, true],
    [
      `with c as materialized (select * from $big) select count(*) from c`,
      true,
    ],
    [`select * from $big limit -1`, true],
    [`select * from $big limit 10 /* offset 5 */`, false],
    [`select * from $big limit 10 offset 20`, false],
    [`select * from $big where id < 100`, false],
    [`explain select * from $big`, true],
  ],
  mysql: [
    // Broke before the fix.
    [`select * from $big limit 10 offset 999990`, true],
    [`select * from $big limit 999990, 10`, true],
    // Passed unplanned as metadata (MySQL 8's DESCRIBE ANALYZE runs it).
    [`desc select * from $big`, true],
    [`describe format=json select * from $big`, true],
    [`describe $big`, false],
    [`desc $big id`, false],
    [`show index from $big`, false],
    // Held.
    [`select count(*) from $small a, $small b`, true],
    [`select (select count(*) from $big) from $small`, true],
    [`select count(*) from (select * from $big) d`, true],
    [`select * from $small where v in (select x from $big)`, true],
    [`select count(*) from seq_1_to_50000000`, true],
    [`values (1), (2)`, true],
    [`analyze select * from $big`, true],
    [`select * from $big limit 10 offset 20`, false],
    [`select * from $big where id < 100`, false],
  ],
  postgres: [
    [`table $big`, true],
    [`(select * from $big)`, true],
    [`select * from $small a, $small b`, true],
    [
      `select * from $small a, lateral (select * from $big b where b.x = a.v) l`,
      true,
    ],
    [`with c as materialized (select * from $big) select * from c`, true],
    [`select * from $big union all select * from $big where id < 10`, true],
    [`explain analyze select * from $big`, true],
    [`select * from $big where id < 100`, false],
  ],
};

for (const engine of ["sqlite", "mysql", "postgres"] as const) {
  Deno.test(
    `${engine}: reads past maxEstimatedRows through aliases, automatic indexes, OFFSET and joins are refused; narrow ones run`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      for (const statement of TABLES[engine]) await fixture.admin(statement);
      const saved = savedConnection(fixture, `Limits ${engine}`, {
        maxEstimatedRows: LIMIT,
      });
      await using server = await serverWith([saved]);
      const prefix = engine === "postgres" ? `${fixture.schema}.` : "";
      const failures: string[] = [];
      for (const [template, refused] of CASES[engine]) {
        const query = template.replaceAll("$big", `${prefix}a4b_big`)
          .replaceAll("$small", `${prefix}a4b_small`);
        const answer = await callTool(server, "execute_query", {
          connection_id: saved.id,
          query,
          timeout_seconds: 60,
        });
        const error = answer.json.result?.isError === true
          ? toolErrorText(answer)
          : answer.json.error !== undefined
          ? JSON.stringify(answer.json.error)
          : null;
        if (refused && (error === null || !REFUSED.test(error))) {
          failures.push(
            `${query}: ran (${error ?? answer.text.slice(0, 200)})`,
          );
        }
        if (!refused && error !== null) failures.push(`${query}: ${error}`);
      }
      assertEquals(failures, []);
    },
  );
}

Deno.test("sqlite: a partial index's sqlite_stat1 row is not taken for the table's size", async () => {
  await using fixture = await openFixture("sqlite");
  for (const statement of TABLES.sqlite) await fixture.admin(statement);
  await fixture.admin("create index a4b_x on a4b_big (x)");
  await fixture.admin("create index a4b_p on a4b_big (w) where id < 10");
  await fixture.admin("analyze");
  // The first row of the table's statistics is the partial index's 9 rows.
  const [first] = await fixture.admin(
    "select stat from sqlite_stat1 where tbl = 'a4b_big' order by idx is not null limit 1",
  ) as { stat: string }[];
  assertEquals(first?.stat, "9 1");
  const saved = savedConnection(fixture, "Stat sqlite", {
    maxEstimatedRows: LIMIT,
  });
  await using server = await serverWith([saved]);
  const answer = await callTool(server, "execute_query", {
    connection_id: saved.id,
    query: "select w from a4b_big where w like '%F%'",
  });
  assertMatch(
    toolErrorText(answer),
    /^denied: the plan of this read expects about 1,000,000 rows \(the whole table a4b_big, from sqlite_stat1\)/,
  );
});

Deno.test("sqlite: an FTS5 table's shadow tables are sized like any table", async () => {
  await using fixture = await openFixture("sqlite");
  await fixture.admin("create virtual table a4b_fts using fts5(a)");
  await fixture.admin(
    "insert into a4b_fts with recursive s(g) as (select 1 union all select g + 1 from s where g < 150000) select hex(g) from s",
  );
  const saved = savedConnection(fixture, "Fts sqlite", {
    maxEstimatedRows: LIMIT,
  });
  await using server = await serverWith([saved]);
  const answer = await callTool(server, "execute_query", {
    connection_id: saved.id,
    query: "select count(*) from a4b_fts_content where c0 like '%'",
  });
  assertMatch(
    toolErrorText(answer),
    /^denied: the plan of this read expects more than 100,000 rows \(the whole table a4b_fts_content, counted up to the limit\)/,
  );
});

async function dbport(home: string, ...args: string[]): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: mainArgs(...args),
    env: { DBPORT_HOME: home, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(
    output.code,
    0,
    `${args.join(" ")}: ${new TextDecoder().decode(output.stderr)}`,
  );
  return new TextDecoder().decode(output.stdout);
}

Deno.test("writes sent at once cannot all pass a writes-per-hour budget before any is counted", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Race sqlite", {
    externalAccess: "readWrite",
    safeMode: "silent",
  });
  await using server = await serverWith([saved]);
  const { plaintext } = await server.mint("readWrite", { name: "a4b race" });
  await dbport(
    server.home,
    "tokens",
    "set",
    "a4b race",
    "--max-writes-per-hour",
    "2",
  );
  await server.server.syncTokens();
  const [before] = await fixture.admin("select count(*) as n from authors") as {
    n: number;
  }[];
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      callTool(server, "execute_query", {
        connection_id: saved.id,
        query: `insert into authors (name) values ('a4b race ${i}')`,
      }, { authorization: `Bearer ${plaintext}` })),
  );
  const ran =
    answers.filter((a) => a.json.result?.structuredContent?.rows_affected === 1)
      .length;
  const refused = answers.filter((a) =>
    a.json.result?.isError === true &&
    /writes an hour \(its budget/.test(toolErrorText(a))
  ).length;
  const [after] = await fixture.admin("select count(*) as n from authors") as {
    n: number;
  }[];
  assertEquals(Number(after?.n) - Number(before?.n), ran);
  assertEquals([ran, refused], [2, 6]);
  // A refused or finished call holds no place: the hour's count is exact.
  const next = await callTool(server, "execute_query", {
    connection_id: saved.id,
    query: "insert into authors (name) values ('a4b race late')",
  }, { authorization: `Bearer ${plaintext}` });
  assertMatch(toolErrorText(next), /spent its 2 writes an hour/);
});

Deno.test(
  "postgres: pausing a token mid-export stops it and leaves no partial file",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const dir = await Deno.makeTempDir({ prefix: "dbport-a4b-exports-" });
    const saved = savedConnection(fixture, "Export pause pg");
    await using server = await serverWith([saved], {
      exportDirectory: `${dir}/exports`,
    });
    const { plaintext } = await server.mint("readOnly", { name: "a4b export" });
    const marker = `a4b_export_${crypto.randomUUID().slice(0, 8)}`;
    const files = async () => {
      const names: string[] = [];
      try {
        for await (const e of Deno.readDir(`${dir}/exports`)) {
          names.push(e.name);
        }
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
      return names;
    };
    try {
      const running = callTool(server, "export_query", {
        connection_id: saved.id,
        query:
          `select g as ${marker}, md5(g::text) as w from generate_series(1, 30000000) g`,
        format: "csv",
        timeout_seconds: 120,
      }, { authorization: `Bearer ${plaintext}` });
      await waitUntil(
        "the export to start a file",
        async () => (await files()).length > 0,
        { timeoutMs: 30_000, intervalMs: 25 },
      );
      const paused = await dbport(server.home, "tokens", "pause", "a4b export");
      // The message names how to resume this token (it said just "resume").
      assertMatch(paused, /\(resume: .*tokens resume [0-9a-f-]{36}\)/);
      const answer = await running;
      assertEquals(answer.json.error?.code, -33002, answer.text);
      await waitUntil(
        "the paused export's file to be removed",
        async () => (await files()).length === 0,
        { intervalMs: 50 },
      );
      assertEquals(await files(), []);
      await waitUntil(
        "the paused export's read to leave pg_stat_activity",
        async () => await runningCount(fixture, marker) === 0,
        { intervalMs: 20 },
      );
      assertEquals(await runningCount(fixture, marker), 0);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("explain_query's analyze runs the read: a token past its rows per hour is refused it, and its rows count", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Explain rows sqlite");
  await using server = await serverWith([saved]);
  const { plaintext } = await server.mint("readOnly", { name: "a4b explain" });
  const authorization = `Bearer ${plaintext}`;
  await dbport(
    server.home,
    "tokens",
    "set",
    "a4b explain",
    "--max-rows-per-hour",
    "3",
  );
  await server.server.syncTokens();
  const explain = () =>
    callTool(server, "explain_query", {
      connection_id: saved.id,
      query: "select name from authors",
      analyze: true,
    }, { authorization });
  const first = await explain();
  assertEquals(
    first.json.result?.structuredContent?.summary?.actual_rows,
    2,
    first.text,
  );
  const second = await explain();
  assertEquals(second.json.result?.isError, undefined, second.text);
  // 4 rows measured: the budget of 3 is spent, for explain and reads alike.
  assertMatch(toolErrorText(await explain()), /spent its 3 rows read an hour/);
  const read = await callTool(server, "execute_query", {
    connection_id: saved.id,
    query: "select 1",
  }, { authorization });
  assertMatch(toolErrorText(read), /spent its 3 rows read an hour/);
  // The plan alone runs nothing and stays allowed.
  const plan = await callTool(server, "explain_query", {
    connection_id: saved.id,
    query: "select name from authors",
  }, { authorization });
  assertEquals(plan.json.result?.isError, undefined, plan.text);
});

Deno.test("a token paused while the user looks at its write's approval: the call ends -33002 and the write never runs, though the user then approves", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Approve sqlite", {
    externalAccess: "readWrite",
    safeMode: "alert",
  });
  const dir = await Deno.makeTempDir({ prefix: "dbport-a4b-dialog-" });
  // The dialog approves 3 s after it was asked.
  await using server = await serverWith([saved], {
    hostDialog: {
      command: ["sh", "-c", `cat > "$0"; sleep 3; exit 0`, `${dir}/asked`],
    },
  });
  try {
    const { plaintext } = await server.mint("readWrite", {
      name: "a4b approve",
    });
    const running = callTool(server, "execute_query", {
      connection_id: saved.id,
      query: "insert into authors (name) values ('a4b paused')",
    }, { authorization: `Bearer ${plaintext}` });
    await waitUntil(
      "the dialog to be asked",
      async () => (await Deno.stat(`${dir}/asked`).catch(() => null)) !== null,
      { intervalMs: 25 },
    );
    await dbport(server.home, "tokens", "pause", "a4b approve");
    const answer = await running;
    assertEquals(answer.json.error?.code, -33002, answer.text);
    // Past the dialog's approval: its `sleep 3` timer, then its exit.
    await new Promise((r) => setTimeout(r, 3_500));
    const [row] = await fixture.admin(
      "select count(*) as n from authors where name = 'a4b paused'",
    ) as { n: number }[];
    assertEquals(Number(row?.n), 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("legacy initialize is a request like any other: a paused token is refused it, and it counts toward calls per minute", async () => {
  await using server = await serverWith([]);
  const { plaintext } = await server.mint("readOnly", { name: "a4b init" });
  const authorization = `Bearer ${plaintext}`;
  const initialize = (id: number) =>
    postLegacy(server.url, {
      jsonrpc: "2.0",
      id,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "a4b", version: "1" },
      },
    }, { authorization });
  await dbport(
    server.home,
    "tokens",
    "set",
    "a4b init",
    "--max-calls-per-minute",
    "3",
  );
  await server.server.syncTokens();
  for (let i = 1; i <= 3; i++) {
    assertEquals((await initialize(i)).status, 200, `initialize ${i}`);
  }
  // Each mints a session, and only 16 are kept: past its budget a token
  // could evict every other legacy client's.
  const fourth = await initialize(4);
  assertEquals(fourth.status, 429, fourth.text);
  assertEquals(fourth.json.error.code, -33010);
  assert(Number(fourth.headers.get("retry-after")) >= 1);
  await dbport(
    server.home,
    "tokens",
    "set",
    "a4b init",
    "--max-calls-per-minute",
    "off",
  );
  await dbport(server.home, "tokens", "pause", "a4b init");
  await server.server.syncTokens();
  const paused = await initialize(5);
  assertEquals(paused.status, 403, paused.text);
  assertEquals(paused.json.error.code, -33007);
  assertMatch(paused.json.error.message, /paused by the user/);
});

Deno.test("a write's RETURNING rows count toward rows per hour", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Returning sqlite", {
    externalAccess: "readWrite",
    safeMode: "silent",
  });
  await using server = await serverWith([saved]);
  const { plaintext } = await server.mint("readWrite", { name: "a4b ret" });
  const authorization = `Bearer ${plaintext}`;
  await dbport(
    server.home,
    "tokens",
    "set",
    "a4b ret",
    "--max-rows-per-hour",
    "2",
  );
  await server.server.syncTokens();
  // A third author the update leaves alone: a write of every row asks.
  await fixture.admin("insert into authors (id, name) values (3, 'Third')");
  const wrote = await callTool(server, "execute_query", {
    connection_id: saved.id,
    query: "update authors set name = name where id < 3 returning id, name",
  }, { authorization });
  assertEquals(wrote.json.result?.structuredContent?.row_count, 2, wrote.text);
  const read = await callTool(server, "execute_query", {
    connection_id: saved.id,
    query: "select 1",
  }, { authorization });
  assertMatch(toolErrorText(read), /spent its 2 rows read an hour/);
});
