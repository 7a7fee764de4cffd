/**
 * `execute_query`'s `params` on every engine: values bound by the engine's
 * protocol (NULL, numbers, booleans, text; a 64-bit integer past 2^53 as a
 * string), a value that looks like SQL stored verbatim, a placeholder count
 * mismatch refused as `invalid_argument`, a `?`/`$1` inside a string not
 * counted, and a write with bound values shown to the user with them.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import type { Engine } from "../../lib/db/types.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { recordingDialog } from "../_dialog.ts";
import { ENGINES, needs, openFixture } from "../_db.ts";
import { callTool, toolErrorText } from "../_tool_call.ts";

/** The engine's placeholder for the n-th value (1-based). */
const p = (engine: Engine, n: number) => engine === "postgres" ? `$${n}` : "?";

const INJECTION = "'; DROP TABLE notes; --";

for (const engine of ENGINES) {
  Deno.test({
    name:
      `params on ${engine}: NULL, numbers, text, > 2^53 as text, injection stored verbatim, count mismatch`,
    ...needs(engine),
    async fn() {
      await using fixture = await openFixture(engine);
      const text = engine === "mysql" ? "varchar(200)" : "text";
      // PostgreSQL's fixture is a schema of its own, not on the search path.
      const notes = engine === "postgres" ? `${fixture.schema}.notes` : "notes";
      await fixture.admin(
        `create table notes (id int primary key, body ${text}, big bigint, flag boolean)`,
      );
      const saved = savedConnection(fixture, "Shop", {
        externalAccess: "readWrite",
        safeMode: "silent",
      });
      await using server = await serverWith([saved]);
      const token = await server.mint("readWrite");
      const auth = { authorization: `Bearer ${token.plaintext}` };
      const run = (query: string, params?: unknown[]) =>
        callTool(
          server,
          "execute_query",
          {
            connection_id: saved.id,
            query: query.replaceAll(" notes", ` ${notes}`),
            ...(params === undefined ? {} : { params }),
          } as never,
          auth,
        );

      // A write with bound values, one of them SQL that would drop a table.
      const insert = await run(
        `insert into notes (id, body, big, flag) values (${p(engine, 1)}, ${
          p(engine, 2)
        }, ${p(engine, 3)}, ${p(engine, 4)})`,
        [1, INJECTION, "9007199254740993", true],
      );
      assertEquals(insert.json.result.isError, undefined, insert.text);
      assertEquals(insert.json.result.structuredContent.rows_affected, 1);
      const nulls = await run(
        `insert into notes (id, body, big, flag) values (${p(engine, 1)}, ${
          p(engine, 2)
        }, ${p(engine, 3)}, ${p(engine, 4)})`,
        [2, null, null, null],
      );
      assertEquals(nulls.json.result.isError, undefined, nulls.text);

      // Stored verbatim, the table still there, the big integer exact.
      const stored = await fixture.admin(
        `select body, ${
          engine === "postgres" ? "big::text" : "cast(big as char)"
        } as big from notes where id = 1`,
      ) as Record<string, unknown>[];
      assertEquals(stored[0]?.body, INJECTION);
      assertEquals(String(stored[0]?.big), "9007199254740993");

      // A read binding a value that matches, NULL that matches nothing.
      const read = await run(
        `select id, body, big from notes where body = ${
          p(engine, 1)
        } and id = ${p(engine, 2)}`,
        [INJECTION, 1],
      );
      assertEquals(read.json.result.structuredContent.rows, [
        [1, INJECTION, "9007199254740993"],
      ]);
      const none = await run(
        `select id from notes where body = ${p(engine, 1)}`,
        [null],
      );
      assertEquals(none.json.result.structuredContent.rows, []);
      const isNull = await run(
        `select ${p(engine, 1)} as v, id from notes where body is null`,
        [null],
      );
      assertEquals(isNull.json.result.structuredContent.rows, [[null, 2]]);

      // A ? or $1 inside a string is text, not a placeholder.
      const literal = await run(
        `select '?' as q, '$1' as d, id from notes where id = ${p(engine, 1)}`,
        [2],
      );
      assertEquals(literal.json.result.structuredContent.rows, [[
        "?",
        "$1",
        2,
      ]]);

      // A cut read counts its whole result with the same values bound.
      const cut = await callTool(server, "execute_query", {
        connection_id: saved.id,
        query: `select id from ${notes} where id >= ${p(engine, 1)}`,
        params: [1],
        max_rows: 1,
      }, auth);
      const cutAnswer = cut.json.result.structuredContent;
      assertEquals(cutAnswer.rows.length, 1);
      assertEquals(cutAnswer.is_truncated, true);
      assertEquals(cutAnswer.truncation.total_rows, 2);

      // A placeholder as a function's argument, and where a read stays a
      // read: vetting sees the placeholder, never the value.
      const fn = await run(`select upper(${p(engine, 1)}) as u`, [
        "delete from notes",
      ]);
      assertEquals(fn.json.result.structuredContent.rows, [[
        "DELETE FROM NOTES",
      ]]);

      // Count mismatches: too few (none), too many.
      for (
        const [query, params] of [
          [`select id from notes where id = ${p(engine, 1)}`, []],
          [`select id from notes where id = ${p(engine, 1)}`, [1, 2]],
          ["select 1 as one", [1]],
        ] as const
      ) {
        const answer = await run(query, [...params]);
        assertMatch(
          toolErrorText(answer),
          /^invalid_argument: the statement has \d placeholders? .* params has \d values?/,
        );
      }

      // A JSON number past 2^53 has lost digits already: refused.
      const lossy = await run(
        `select id from notes where big = ${p(engine, 1)}`,
        [9007199254740993],
      );
      assertMatch(
        toolErrorText(lossy),
        /^invalid_argument: params\[0\].*2\^53/,
      );

      // A wrong type of value is the schema's -32602.
      const wrong = await run(
        `select id from notes where id = ${p(engine, 1)}`,
        [
          { a: 1 },
        ],
      );
      assertEquals(wrong.json.error.code, -32602);

      // The table is still there, with both rows.
      const [count] = await fixture.admin(
        "select count(*) as n from notes",
      ) as Record<string, unknown>[];
      assertEquals(Number(count?.n), 2);
    },
  });

  Deno.test({
    name:
      `params on ${engine}: an approved write's question shows the bound values`,
    ...needs(engine),
    async fn() {
      await using fixture = await openFixture(engine);
      await using dialog = await recordingDialog(1);
      const saved = savedConnection(fixture, "Shop", {
        externalAccess: "readWrite",
        safeMode: "alert",
      });
      await using server = await serverWith([saved], {
        hostDialog: dialog.setting,
      });
      const token = await server.mint("readWrite");
      const answer = await callTool(server, "execute_query", {
        connection_id: saved.id,
        query: `update ${
          engine === "postgres" ? `${fixture.schema}.` : ""
        }authors set name = ${p(engine, 1)} where id = ${p(engine, 2)}`,
        params: ["O'Brien", 1],
      }, { authorization: `Bearer ${token.plaintext}` });
      assertMatch(toolErrorText(answer), /^denied: the user did not approve/);
      const asked = JSON.stringify(await dialog.asked());
      assert(asked.includes("O'Brien"), asked);
      const [row] = await fixture.admin(
        "select name from authors where id = 1",
      ) as Record<string, unknown>[];
      assertEquals(row?.name, "Ada");
    },
  });
}
