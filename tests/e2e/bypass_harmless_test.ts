/**
 * Every corpus statement (bypass attempts included) sent through
 * `execute_query` to a `readOnly` connection on the real engines, with the
 * most powerful token there is: whatever the classifier lets through reaches
 * the engine in its read-only mode, and the database is proven unchanged
 * after each one.
 */

import { assert, assertEquals } from "@std/assert";
import { savedConnection, serverWith } from "../_connections.ts";
import { ENGINES, type Fixture, needs, openFixture } from "../_db.ts";
import { modernRequest, postModern } from "../_server.ts";
import { CORPUS } from "../db/_classifier_corpus.ts";

/** What must not change: row counts, the tables, sequences, large objects. */
async function fingerprint(fixture: Fixture): Promise<string> {
  const queries: Record<Fixture["engine"], string[]> = {
    postgres: [
      `select (select count(*) from ${fixture.schema}.authors) as a,
              (select count(*) from ${fixture.schema}.books) as b,
              (select count(*) from ${fixture.schema}.kinds) as k,
              (select string_agg(table_name, ',' order by table_name)
                 from information_schema.tables where table_schema = '${fixture.schema}') as t,
              (select last_value from ${fixture.schema}.books_id_seq) as s,
              (select count(*) from pg_largeobject_metadata) as lo`,
    ],
    mysql: [
      `select (select count(*) from authors) as a, (select count(*) from books) as b,
              (select count(*) from kinds) as k,
              (select group_concat(table_name order by table_name) from information_schema.tables
                 where table_schema = database()) as t`,
    ],
    sqlite: [
      `select (select count(*) from authors) as a, (select count(*) from books) as b,
              (select count(*) from kinds) as k,
              (select group_concat(name) from (select name from sqlite_schema order by name)) as t`,
    ],
  };
  const rows = [];
  for (const query of queries[fixture.engine]) {
    rows.push(...await fixture.admin(query));
  }
  return JSON.stringify(rows, (_, v) => typeof v === "bigint" ? String(v) : v);
}

for (const engine of ENGINES) {
  Deno.test(
    `${engine}: every corpus statement on a readOnly connection leaves the database unchanged`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      // Unqualified names in the corpus resolve to the fixture's schema.
      const url = engine === "postgres"
        ? `${fixture.url}?search_path=${fixture.schema}`
        : fixture.url;
      const saved = savedConnection({ engine, url }, "Fenced", {
        externalAccess: "readOnly",
        safeMode: "silent",
      });
      await using server = await serverWith([saved], { hostDialog: "deny" });
      const admin = await server.mint("fullAccess");
      const before = await fingerprint(fixture);
      let reached = 0;
      for (const { sql } of CORPUS.filter((c) => c.dialect === engine)) {
        if (sql.trim() === "" || /^[\s;]*$|^\s*(--|#)[^\n]*\n?$/.test(sql)) {
          continue; // blank text is refused by argument checks
        }
        const answer = await postModern(
          server.url,
          modernRequest("tools/call", {
            name: "execute_query",
            arguments: {
              connection_id: saved.id,
              query: sql,
              timeout_seconds: 5,
            },
          }, crypto.randomUUID()),
          { authorization: `Bearer ${admin.plaintext}` },
        );
        assertEquals(answer.status, 200, `${sql}: ${answer.text}`);
        const result = answer.json.result;
        const text: string = result.isError ? result.content[0].text : "";
        const stoppedBefore =
          /^(invalid_argument|denied): (query holds|this connection is read only|this statement drops|the statement reaches)/
            .test(text);
        if (!stoppedBefore) {
          reached++;
          // Reaching the engine: a read, a failed query, or the engine's refusal.
          assert(
            !result.isError || /^(query_failed|denied): /.test(text),
            `${sql}: ${text}`,
          );
        }
        assertEquals(
          await fingerprint(fixture),
          before,
          `the database changed after ${JSON.stringify(sql)}`,
        );
      }
      assert(reached >= 10, `only ${reached} statements reached ${engine}`);
    },
  );
}
