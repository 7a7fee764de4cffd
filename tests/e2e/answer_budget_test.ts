/**
 * Answers sized for a model's context, on every engine: a 100,000-row read
 * and a max_rows 10,000 read answer within maxAnswerChars (40,000 by
 * default) with is_truncated, the total (or has_more) and the way to the
 * rest; a cut cell sets is_truncated.
 */

import { assert, assertEquals } from "@std/assert";
import { savedConnection, serverWith } from "../_connections.ts";
import { ENGINES, type Fixture, needs, openFixture } from "../_db.ts";
import { callTool } from "../_tool_call.ts";

const ROWS = 100_000;

/** A table of `ROWS` rows (id, a 32-character text), named for this run. */
async function bigTable(fixture: Fixture): Promise<string> {
  const name = `big_${crypto.randomUUID().slice(0, 8)}`;
  const fill = {
    postgres:
      `create table ${name} as select g as id, md5(g::text) as v from generate_series(1, ${ROWS}) g`,
    // MariaDB's Sequence engine: a recursive CTE takes a minute here.
    mysql:
      `create table ${name} as select seq as id, md5(seq) as v from seq_1_to_${ROWS}`,
    sqlite:
      `create table ${name} as with recursive s(n) as (select 1 union all select n + 1 from s where n < ${ROWS}) select n as id, hex(randomblob(16)) as v from s`,
  }[fixture.engine];
  await fixture.admin(fill);
  return fixture.engine === "postgres" ? `${fixture.schema}.${name}` : name;
}

for (const engine of ENGINES) {
  Deno.test(
    `${engine}: a 100,000-row read answers within 40,000 characters with its total and the way on`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      const table = await bigTable(fixture);
      const saved = savedConnection(fixture, `Big ${engine}`);
      await using server = await serverWith([saved]);

      for (const extra of [{}, { max_rows: 10_000 }]) {
        const answer = await callTool(server, "execute_query", {
          connection_id: saved.id,
          query: `select id, v from ${table} order by id`,
          ...extra,
        });
        const result = answer.json.result;
        assert(result.isError !== true, JSON.stringify(result));
        const text: string = result.content[0].text;
        assert(text.length <= 40_000, `${text.length} characters`);
        const content = result.structuredContent;
        assertEquals(content.is_truncated, true);
        assertEquals(content.truncation.rows_returned, content.row_count);
        assertEquals(content.truncation.total_rows, ROWS);
        assertEquals(content.truncation.has_more, true);
        assert(content.row_count > 0 && content.row_count < ROWS);
        assert(
          content.truncation.message.includes("export_query"),
          content.truncation.message,
        );
        assert(content.truncation.message.includes(`of ${ROWS} rows`));
        if ("max_rows" in extra) {
          // 10,000 rows do not fit: the budget cut them, not max_rows.
          assert(content.truncation.reasons.includes("bytes"));
          assert(content.row_count < 10_000);
        } else {
          assertEquals(content.row_count, 500);
          assertEquals(content.truncation.reasons, ["max_rows"]);
        }
      }
    },
  );

  Deno.test(
    `${engine}: a cut cell sets is_truncated, and a huge row still fits`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      const saved = savedConnection(fixture, `Cells ${engine}`);
      await using server = await serverWith([saved], { maxCellChars: 100 });
      const repeat = engine === "sqlite"
        ? (n: number) => `replace(hex(zeroblob(${n})), '00', 'ab')`
        : (n: number) => `repeat('ab', ${n})`;
      const one = await callTool(server, "execute_query", {
        connection_id: saved.id,
        query: `select ${repeat(500)} as long_text`,
      });
      const content = one.json.result.structuredContent;
      assertEquals(content.row_count, 1);
      assertEquals(content.is_truncated, true);
      assertEquals(content.truncation.reasons, ["cells"]);
      assertEquals(content.truncation.cut_cells, 1);
      assertEquals(content.truncation.has_more, false);
      assert(content.rows[0][0].includes("…[cut: 900 more characters]"));
    },
  );
}

Deno.test(
  "sqlite: one row wider than the answer budget has its cells cut to fit",
  async () => {
    await using fixture = await openFixture("sqlite");
    const saved = savedConnection(fixture, "Wide");
    await using server = await serverWith([saved]);
    const cells = Array.from(
      { length: 5 },
      (_, i) => `replace(hex(zeroblob(15000)), '00', 'x\\"') as c${i}`,
    );
    const answer = await callTool(server, "execute_query", {
      connection_id: saved.id,
      query: `select ${cells.join(", ")}`,
    });
    const text: string = answer.json.result.content[0].text;
    assert(text.length <= 40_000, `${text.length} characters`);
    const content = answer.json.result.structuredContent;
    assertEquals(content.row_count, 1);
    assertEquals(content.is_truncated, true);
    assertEquals(content.truncation.cut_cells, 5);
  },
);
