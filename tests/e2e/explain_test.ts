/**
 * explain_query on real PostgreSQL, MariaDB and SQLite: the plan and its
 * summary with and without analyze, and its refusals; and the answer budget
 * of execute_query cutting exactly as documented, with the statement stopped
 * on the server (docs/wire.md "Tools", docs/security.md "Bounded answers").
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import type { Engine } from "../../lib/db/types.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture } from "../_db.ts";
import { waitUntil } from "../_wait.ts";
import { callTool, toolErrorText } from "../_tool_call.ts";

const ENGINES_HERE: readonly Engine[] = ["postgres", "mysql", "sqlite"];

for (const engine of ENGINES_HERE) {
  Deno.test(
    `${engine}: explain_query plans a read, analyzes it, and refuses what it must`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      const saved = savedConnection(fixture, `Explain ${engine}`);
      await using server = await serverWith([saved]);
      const args = { connection_id: saved.id };
      const authors = engine === "postgres"
        ? `${fixture.schema}.authors`
        : "authors";

      const plain = await callTool(server, "explain_query", {
        ...args,
        query: `select * from ${authors} where name like '%a%'`,
      });
      const planned = plain.json.result.structuredContent;
      assert(planned !== undefined, JSON.stringify(plain.json));
      assertEquals(planned.analyzed, false);
      assertEquals(planned.is_truncated, false);
      assertMatch(planned.statement, /^EXPLAIN/);
      assertEquals(planned.summary.actual_rows, null);
      assertEquals(
        planned.summary.full_scans.map((s: { table: string }) => s.table),
        ["authors"],
      );
      if (engine !== "sqlite") {
        assert(typeof planned.summary.estimated_rows === "number");
      }
      // MariaDB before 11 gives no cost in its JSON plan.
      if (engine === "postgres") {
        assert(typeof planned.summary.estimated_cost === "number");
      }
      if (engine === "postgres") {
        assertEquals(planned.summary.top_node, "Seq Scan");
        assert(Array.isArray(planned.plan));
      }

      const analyzed = await callTool(server, "explain_query", {
        ...args,
        query: `select * from ${authors}`,
        analyze: true,
      });
      const measured = analyzed.json.result.structuredContent;
      assert(measured !== undefined, JSON.stringify(analyzed.json));
      assertEquals(measured.analyzed, true);
      assertEquals(measured.summary.actual_rows, 2);
      assert(typeof measured.summary.actual_time_ms === "number");

      const refusals: [Record<string, unknown>, RegExp][] = [
        [
          { query: "EXPLAIN select 1" },
          /^invalid_argument: send the statement itself/,
        ],
        [{ query: "select 1; select 2" }, /^invalid_argument: /],
        [
          { query: `delete from ${authors}`, analyze: true },
          /^denied: analyze runs the statement, and this one writes/,
        ],
        [{ query: "   " }, /^invalid_argument: query must not be blank/],
      ];
      for (const [extra, expected] of refusals) {
        const refused = await callTool(server, "explain_query", {
          ...args,
          ...extra,
        });
        assertMatch(toolErrorText(refused), expected, JSON.stringify(extra));
      }
      // The plan of a write is shown, and nothing runs (MariaDB plans no
      // write in a read-only transaction: unsupported, said as such).
      const write = await callTool(server, "explain_query", {
        ...args,
        query: `delete from ${authors}`,
      });
      if (engine === "mysql") {
        assertMatch(
          toolErrorText(write),
          /^unsupported: MySQL\/MariaDB will not plan a write/,
        );
      } else {
        assertEquals(write.json.result.isError, undefined, write.text);
      }
      const [row] = await fixture.admin(
        `select count(*) as n from ${authors}`,
      ) as { n: number }[];
      assertEquals(Number(row?.n), 2);
    },
  );
}

const FIVE_BIG: Record<Engine, string> = {
  postgres:
    "SELECT repeat('x', 3000000) AS big, g FROM generate_series(1, 5) g",
  mysql: "SELECT REPEAT('x', 3000000) AS big, seq AS g FROM seq_1_to_5",
  sqlite:
    "WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < 5) SELECT printf('%.*c', 3000000, 'x') AS big, g FROM s",
};

for (const engine of ENGINES_HERE) {
  Deno.test(
    `${engine}: five 3 MB cells are cut at the cell cap with the exact marker`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      const saved = savedConnection(fixture, `Cells ${engine}`);
      // The cell cap at work: an answer budget as large as the byte budget.
      await using server = await serverWith([saved], {
        maxAnswerChars: 1_000_000,
      });
      const answer = await callTool(server, "execute_query", {
        connection_id: saved.id,
        query: FIVE_BIG[engine],
      });
      const result = answer.json.result.structuredContent;
      assert(result !== undefined, answer.text.slice(0, 500));
      assertEquals(result.rows.length, 5);
      for (const [big] of result.rows) {
        assertEquals(
          big,
          `${"x".repeat(20_000)}…[cut: 2,980,000 more characters]`,
        );
      }
      // Characters were left out: the answer says it is cut.
      assertEquals(result.is_truncated, true);
      assertEquals(result.truncation.reasons, ["cells"]);
      assertEquals(result.truncation.cut_cells, 5);
      assertMatch(result.truncation.message, /substr\(/);
      assert(answer.text.length < 250_000, `${answer.text.length} bytes`);
    },
  );
}

const MULTIBYTE: Record<Engine, string> = {
  postgres:
    "SELECT repeat('é', 30000) AS a, 'x' || repeat('😀', 15000) AS b, repeat('日', 20000) AS c",
  mysql:
    "SELECT REPEAT('é', 30000) AS a, CONCAT('x', REPEAT('😀', 15000)) AS b, REPEAT('日', 20000) AS c",
  sqlite:
    "SELECT replace(printf('%.*c', 30000, 'x'), 'x', 'é') AS a, 'x' || replace(printf('%.*c', 15000, 'x'), 'x', '😀') AS b, replace(printf('%.*c', 20000, 'x'), 'x', '日') AS c",
};

for (const engine of ENGINES_HERE) {
  Deno.test(
    `${engine}: multibyte cells are cut at the cell cap in characters, never inside a pair`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      const saved = savedConnection(fixture, `Multibyte ${engine}`);
      await using server = await serverWith([saved], {
        maxAnswerChars: 1_000_000,
      });
      const answer = await callTool(server, "execute_query", {
        connection_id: saved.id,
        query: MULTIBYTE[engine],
      });
      const result = answer.json.result.structuredContent;
      assert(result !== undefined, answer.text.slice(0, 500));
      assertEquals(result.rows, [[
        `${"é".repeat(20_000)}…[cut: 10,000 more characters]`,
        // 20,000 units end inside a pair: the cut keeps 19,999.
        `x${"😀".repeat(9_999)}…[cut: 10,002 more characters]`,
        // Exactly at the cap: kept whole.
        "日".repeat(20_000),
      ]]);
      assertEquals(result.truncation.cut_cells, 2);
    },
  );
}

Deno.test(
  "postgres: a read cut at the byte budget is stopped on the server",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const saved = savedConnection(fixture, "Budget");
    await using server = await serverWith([saved], {
      maxAnswerChars: 1_000_000,
    });
    const marker = `budget_${crypto.randomUUID().slice(0, 8)}`;
    const answer = await callTool(server, "execute_query", {
      connection_id: saved.id,
      // generate_series() in the select list streams (ProjectSet); in FROM
      // it would be materialized whole before the first row.
      query:
        `SELECT repeat('y', 10000) AS ${marker}, generate_series(1, 100000000) AS g`,
      max_rows: 10_000,
    });
    const result = answer.json.result.structuredContent;
    assert(result !== undefined, answer.text.slice(0, 500));
    assertEquals(result.is_truncated, true);
    assertEquals(result.truncation.reasons, ["bytes"]);
    assert(result.rows.length > 50 && result.rows.length < 110);
    // An idle session shows its last statement: a lean read (pg_wired.ts
    // leanRead) has no ROLLBACK after it, so only a running one counts.
    await waitUntil("the read to be gone from pg_stat_activity", async () => {
      const rows = await fixture.admin(
        `select count(*)::int as n from pg_stat_activity
          where query like '%${marker}%' and state <> 'idle'
            and pid <> pg_backend_pid()`,
      ) as { n: number }[];
      return rows[0]?.n === 0;
    });
  },
);

Deno.test(
  "postgres: a read cut at max_rows says so in truncation",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const saved = savedConnection(fixture, "Rows");
    await using server = await serverWith([saved]);
    const answer = await callTool(server, "execute_query", {
      connection_id: saved.id,
      query: "SELECT g FROM generate_series(1, 50) g",
      max_rows: 10,
    });
    const result = answer.json.result.structuredContent;
    assertEquals(result.rows.length, 10);
    assertEquals(result.is_truncated, true);
    assertEquals(result.truncation.reasons, ["max_rows"]);
    assertEquals(result.truncation.cut_cells, 0);
  },
);

Deno.test(
  "postgres: a write's RETURNING of 50,000 rows keeps max_rows of them and counts them all",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const many = `${fixture.schema}.many`;
    await fixture.admin(
      // Row 0 is left as it is: a write of every row asks the user.
      `create table ${many} as select g as id, 0 as v from generate_series(0, 50000) g`,
    );
    const saved = savedConnection(fixture, "Returning", {
      externalAccess: "readWrite",
      safeMode: "silent",
    });
    await using server = await serverWith([saved]);
    const token = await server.mint("readWrite");
    const answer = await callTool(server, "execute_query", {
      connection_id: saved.id,
      query: `UPDATE ${many} SET v = v + 1 WHERE id > 0 RETURNING id, v`,
      max_rows: 10,
    }, { authorization: `Bearer ${token.plaintext}` });
    const result = answer.json.result.structuredContent;
    assert(result !== undefined, answer.text.slice(0, 500));
    assertEquals(result.rows_affected, 50_000);
    assertEquals(result.rows.length, 10);
    assertEquals(result.truncation.reasons, ["max_rows"]);
    const [row] = await fixture.admin(
      `select sum(v)::int as n from ${many}`,
    ) as { n: number }[];
    assertEquals(row?.n, 50_000);
  },
);
