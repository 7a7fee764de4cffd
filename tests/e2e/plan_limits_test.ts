/**
 * Reads refused by their plan on real PostgreSQL, MariaDB and SQLite: over a
 * 1,000,000-row table with maxEstimatedRows 100,000 a full read is refused
 * before it runs, with its estimate and the limit; a narrow one and a
 * LIMITed one run (docs/security.md "Reads refused by their plan").
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import type { Engine } from "../../lib/db/types.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { type Fixture, needs, openFixture } from "../_db.ts";
import { callTool, toolErrorText } from "../_tool_call.ts";
import { waitUntil } from "../_wait.ts";

const ROWS = 1_000_000;

/** The 1,000,000-row table, in the fixture's own schema or database. */
const BIG: Record<Engine, string[]> = {
  postgres: [
    `create table b40_big as select g as id, md5(g::text) as w from generate_series(1, ${ROWS}) g`,
    `alter table b40_big add primary key (id)`,
    `analyze b40_big`,
  ],
  mysql: [
    `create table b40_big (id int primary key, w varchar(40))`,
    `insert into b40_big select seq, md5(seq) from seq_1_to_${ROWS}`,
    `analyze table b40_big`,
  ],
  sqlite: [
    `create table b40_big (id integer primary key, w text)`,
    `insert into b40_big with recursive s(g) as (select 1 union all select g + 1 from s where g < ${ROWS}) select g, hex(g) from s`,
  ],
};

/** Sequential scans of b40_big so far (PostgreSQL's statistics). */
async function seqScans(fixture: Fixture): Promise<number> {
  // This session's own counts first (PostgreSQL 15 flushes them lazily).
  await fixture.admin("select pg_stat_force_next_flush()");
  await fixture.admin("select pg_stat_clear_snapshot()");
  const [row] = await fixture.admin(
    `select seq_scan from pg_stat_user_tables where schemaname = '${fixture.schema}' and relname = 'b40_big'`,
  ) as { seq_scan: number | string }[];
  return Number(row?.seq_scan ?? 0);
}

for (const engine of ["postgres", "mysql", "sqlite"] as const) {
  Deno.test(
    `${engine}: a read over a 1,000,000-row table is refused by its plan before it runs; under the limit it runs`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      for (const statement of BIG[engine]) await fixture.admin(statement);
      const saved = savedConnection(fixture, `Plan ${engine}`, {
        maxEstimatedRows: 100_000,
      });
      await using server = await serverWith([saved]);
      const table = engine === "postgres"
        ? `${fixture.schema}.b40_big`
        : "b40_big";
      const args = { connection_id: saved.id };
      const before = engine === "postgres" ? await seqScans(fixture) : 0;

      // PostgreSQL: nothing of the read may show in pg_stat_activity (its
      // EXPLAIN may); polled while the call is under way.
      let seen = 0;
      let polling = engine === "postgres";
      const poller = (async () => {
        while (polling) {
          const rows = await fixture.admin(
            `select pid from pg_stat_activity where query like '%b40_marker%' and query not like 'EXPLAIN%' and pid <> pg_backend_pid()`,
          );
          seen += rows.length;
          // The sampling pace, not a wait: look again every 5 ms.
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      const refused = await callTool(server, "execute_query", {
        ...args,
        query: `select * /* b40_marker */ from ${table}`,
      });
      polling = false;
      await poller;
      const text = toolErrorText(refused);
      assertMatch(
        text,
        engine === "sqlite"
          ? /^denied: the plan of this read expects more than 100,000 rows \(the whole table b40_big, counted up to the limit\), over the limit of 100,000 rows \(maxEstimatedRows\)/
          : /^denied: the plan of this read expects about [\d,]+ rows \(.*\), over the limit of 100,000 rows \(maxEstimatedRows\) on "Plan \w+"; nothing was run\./,
      );
      assertMatch(text, /WHERE.*LIMIT.*export_query.*--max-estimated-rows N/);
      if (engine !== "sqlite") {
        const estimate = Number(
          /about ([\d,]+) rows/.exec(text)![1]!.replaceAll(",", ""),
        );
        assert(estimate > 500_000 && estimate < 2_000_000, text);
      }
      assertEquals(seen, 0, "the refused read showed in pg_stat_activity");
      // explain_query's analyze runs the read: held by the same limit; the
      // plan alone is not.
      const analyzed = await callTool(server, "explain_query", {
        ...args,
        query: `select * from ${table}`,
        analyze: true,
      });
      assertMatch(
        toolErrorText(analyzed),
        /^denied: the plan of this read expects/,
      );
      const planned = await callTool(server, "explain_query", {
        ...args,
        query: `select * from ${table}`,
      });
      assertEquals(planned.json.result?.isError, undefined, planned.text);

      for (
        const query of [
          `select * from ${table} where id < 100`,
          `select * from ${table} limit 10`,
        ]
      ) {
        const ran = await callTool(server, "execute_query", { ...args, query });
        const result = ran.json.result?.structuredContent;
        assert(result !== undefined, `${query}: ${ran.text}`);
        assert(result.row_count >= 10 && result.row_count <= 99, query);
      }

      // What dbport does not plan is refused; the server's metadata is read.
      const explain = await callTool(server, "execute_query", {
        ...args,
        query: `explain select * from ${table}`,
      });
      assertMatch(
        toolErrorText(explain),
        /^denied: "Plan \w+" refuses reads over a planned size, and dbport plans only SELECT, WITH, VALUES and TABLE statements, not EXPLAIN/,
      );
      const metadata = await callTool(server, "execute_query", {
        ...args,
        query: engine === "sqlite"
          ? "pragma table_info(b40_big)"
          : engine === "postgres"
          ? "show search_path"
          : "show tables",
      });
      assertEquals(metadata.json.result?.isError, undefined, metadata.text);

      if (engine === "postgres") {
        // The LIMITed read scanned once; the refused one never did.
        // The statistics collector reports the scan a moment later.
        const after = await waitUntil(
          "the LIMITed read's seq scan of b40_big to be counted",
          async () => {
            const scans = await seqScans(fixture);
            return scans >= before + 1 && { scans };
          },
          { timeoutMs: 20_000, intervalMs: 200 },
        );
        assertEquals(after.scans, before + 1, "seq scans of b40_big");
      }
      if (engine === "sqlite") {
        // The plan names an alias; it is traced to its table.
        const aliased = await callTool(server, "execute_query", {
          ...args,
          query: `select b.w from ${table} as b where b.w like '%F%'`,
        });
        assertMatch(toolErrorText(aliased), /the whole table b40_big/);
        // With ANALYZE's statistics the estimate is sqlite_stat1's.
        await fixture.admin("analyze");
        const stat = await callTool(server, "execute_query", {
          ...args,
          query: `select w from ${table} order by w`,
        });
        assertMatch(
          toolErrorText(stat),
          /expects about 1,000,000 rows \(the whole table b40_big, from sqlite_stat1\)/,
        );
      }
    },
  );
}

Deno.test(
  "postgres: maxEstimatedCost refuses an aggregate over the whole table",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    await fixture.admin(
      "create table b40_cost as select g as id from generate_series(1, 200000) g",
    );
    await fixture.admin("analyze b40_cost");
    const saved = savedConnection(fixture, "Cost pg", {
      maxEstimatedCost: 1_000,
    });
    await using server = await serverWith([saved]);
    const refused = await callTool(server, "execute_query", {
      connection_id: saved.id,
      query: `select count(*) from ${fixture.schema}.b40_cost`,
    });
    assertMatch(
      toolErrorText(refused),
      /^denied: the plan of this read expects a cost of [\d,]+, over the limit of 1,000 \(maxEstimatedCost\) on "Cost pg"; nothing was run\..*--max-estimated-cost N/,
    );
    const cheap = await callTool(server, "execute_query", {
      connection_id: saved.id,
      query: "select 1 as one",
    });
    assertEquals(cheap.json.result?.structuredContent?.rows, [[1]]);
  },
);

Deno.test(
  "mysql: maxEstimatedCost on a server whose plans give no cost refuses, saying so",
  needs("mysql"),
  async () => {
    await using fixture = await openFixture("mysql");
    const [version] = await fixture.admin("select version() as v") as {
      v: string;
    }[];
    const saved = savedConnection(fixture, "Cost maria", {
      maxEstimatedCost: 1_000,
    });
    await using server = await serverWith([saved]);
    const answer = await callTool(server, "execute_query", {
      connection_id: saved.id,
      query: "select * from authors",
    });
    if (/^10\./.test(version?.v ?? "")) {
      assertMatch(
        toolErrorText(answer),
        /^denied: "Cost maria" refuses reads over a planned cost \(maxEstimatedCost\), and this server's plan gives no cost/,
      );
    } else {
      assertEquals(answer.json.result?.isError, undefined, answer.text);
    }
  },
);
