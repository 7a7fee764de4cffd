/**
 * Discovery at scale, over HTTP against real PostgreSQL, MariaDB and SQLite:
 * a schema of over 1,000 tables beside a second schema, a table of 1,000
 * columns, comments and enums. Every discovery answer stays under 64 KB by
 * default, paging walks a listing exactly once, search_schema ranks, and
 * explain_query plans with and without analyze (docs/wire.md "Tools").
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import type { Engine } from "../../lib/db/types.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { type Fixture, needs, openFixture } from "../_db.ts";
import { modernRequest, postModern } from "../_server.ts";
import { callTool, requestId, toolErrorText } from "../_tool_call.ts";

const ENGINES_HERE: readonly Engine[] = ["postgres", "mysql", "sqlite"];
const TABLES = 1_000;
const WIDE = 1_000;
const KB64 = 64 * 1024;

const name = (i: number) => `tbl_${String(i).padStart(4, "0")}`;

/** The big catalog on a fixture; returns its second schema (null on SQLite). */
async function bigCatalog(fixture: Fixture): Promise<string | null> {
  const s = fixture.schema;
  const wideColumns = Array.from({ length: WIDE }, (_, i) => `c${i} int`)
    .join(", ");
  if (fixture.engine === "postgres") {
    await fixture.admin(`do $$ begin for i in 0..${TABLES - 1} loop
        execute format('create table %I.%I (id int primary key, label text)',
          '${s}', 'tbl_' || lpad(i::text, 4, '0'));
      end loop; end $$`);
    await fixture.admin(
      `create type ${s}.mood as enum ('happy', 'sad', 'it''s complicated')`,
    );
    await fixture.admin(
      `create table ${s}.customer_accounts (id int primary key, email_address text, feeling ${s}.mood)`,
    );
    await fixture.admin(
      `comment on table ${s}.customer_accounts is 'People who buy things'`,
    );
    await fixture.admin(
      `comment on column ${s}.customer_accounts.email_address is 'where the invoices go'`,
    );
    await fixture.admin(`create table ${s}.wide (${wideColumns})`);
    await fixture.admin(`create schema ${s}_b`);
    await fixture.admin(`create table ${s}_b.elsewhere (id int)`);
    return `${s}_b`;
  }
  if (fixture.engine === "mysql") {
    for (let i = 0; i < TABLES; i++) {
      await fixture.admin(
        `create table ${name(i)} (id int primary key, label text) engine=Aria`,
      );
    }
    await fixture.admin(
      `create table customer_accounts (id int primary key,
         email_address text comment 'where the invoices go',
         feeling enum('happy', 'sad', 'it''s complicated'))
       comment 'People who buy things'`,
    );
    await fixture.admin(`create table wide (${wideColumns}) engine=Aria`);
    await fixture.admin(`create database ${s}_b`);
    await fixture.admin(`create table ${s}_b.elsewhere (id int)`);
    return `${s}_b`;
  }
  await fixture.admin("begin");
  for (let i = 0; i < TABLES; i++) {
    await fixture.admin(
      `create table ${name(i)} (id integer primary key, label text)`,
    );
  }
  await fixture.admin(
    "create table customer_accounts (id integer primary key, email_address text, feeling text)",
  );
  await fixture.admin(`create table wide (${wideColumns})`);
  await fixture.admin("commit");
  return null;
}

async function dropSecond(fixture: Fixture, second: string | null) {
  if (second === null) return;
  await fixture.admin(
    fixture.engine === "postgres"
      ? `drop schema ${second} cascade`
      : `drop database ${second}`,
  );
}

function size(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length;
}

for (const engine of ENGINES_HERE) {
  Deno.test(
    `${engine}: discovery on 1,000 tables stays under 64 KB, pages once through, searches and describes`,
    needs(engine),
    async (t) => {
      await using fixture = await openFixture(engine);
      const second = await bigCatalog(fixture);
      try {
        const saved = savedConnection(fixture, `Big ${engine}`);
        await using server = await serverWith([saved]);
        const id = saved.id;
        const ok = async (tool: string, args: Record<string, unknown>) => {
          const answer = await callTool(server, tool, {
            connection_id: id,
            ...args,
          });
          const result = answer.json.result;
          assert(result?.isError !== true, JSON.stringify(answer.json));
          const structured = result.structuredContent;
          assert(
            size(structured) < KB64,
            `${tool} answered ${size(structured)} bytes`,
          );
          return structured;
        };
        const s = fixture.schema;

        await t.step(
          "list_schemas names each schema with its counts",
          async () => {
            const answer = await ok("list_schemas", { pattern: s });
            const mine = answer.schemas.find((x: { name: string }) =>
              x.name === s
            );
            assertEquals(mine.tables, TABLES + 5); // + authors, books, kinds, customer_accounts, wide
            assertEquals(mine.views, 1);
            if (second !== null) {
              assert(
                answer.schemas.some((x: { name: string }) => x.name === second),
              );
            }
            assertEquals(
              answer.default_schema,
              { postgres: "public", mysql: s, sqlite: "main" }[engine],
            );
          },
        );

        await t.step(
          "list_tables without schema lists the default one and says so",
          async () => {
            const answer = await ok("list_tables", {});
            assertEquals(answer.schema_is_default, true);
            assertEquals(
              answer.schema,
              { postgres: "public", mysql: s, sqlite: "main" }[engine],
            );
            assert(answer.tables.length <= 200);
            if (engine === "postgres") {
              // The fixture's schema is one of the others, with its count.
              const total = answer.other_schemas.length;
              assert(total > 0);
            }
            if (engine !== "postgres") {
              assertEquals(answer.tables.length, 200);
              assertEquals(answer.total, TABLES + 6);
              assertEquals(answer.is_truncated, true);
            }
          },
        );

        await t.step(
          "list_tables pages through every table exactly once",
          async () => {
            const seen: string[] = [];
            let cursor: string | undefined;
            let pages = 0;
            do {
              const answer: {
                tables: { name: string }[];
                next_cursor?: string;
                total: number;
              } = await ok("list_tables", {
                schema: s,
                limit: 1000,
                ...(cursor === undefined ? {} : { cursor }),
              });
              assertEquals(answer.total, TABLES + 6);
              seen.push(...answer.tables.map((x) => x.name));
              cursor = answer.next_cursor;
              pages++;
            } while (cursor !== undefined && pages < 50);
            assertEquals(seen.length, TABLES + 6);
            assertEquals(new Set(seen).size, seen.length);
            assert(pages >= 2, "limit 1000 of ~45 bytes a table fits no 64 KB");
            for (let i = 0; i < TABLES; i++) assert(seen.includes(name(i)));
          },
        );

        await t.step(
          "pattern is a case-insensitive substring, and a cursor belongs to its listing",
          async () => {
            const answer = await ok("list_tables", {
              schema: s,
              pattern: "TBL_09",
              limit: 60,
            });
            assertEquals(answer.total, 100);
            assertEquals(answer.tables.length, 60);
            assertEquals(answer.tables[0].name, "tbl_0900");
            const rest = await ok("list_tables", {
              schema: s,
              pattern: "TBL_09",
              limit: 60,
              cursor: answer.next_cursor,
            });
            assertEquals(rest.tables.length, 40);
            assertEquals(rest.tables[0].name, "tbl_0960");
            assertEquals(rest.next_cursor, undefined);
            const other = await callTool(server, "list_tables", {
              connection_id: id,
              schema: s,
              pattern: "tbl_08",
              cursor: answer.next_cursor,
            });
            assertMatch(
              toolErrorText(other),
              /^invalid_argument: cursor continues another listing/,
            );
            const forged = await callTool(server, "list_tables", {
              connection_id: id,
              cursor: "not-a-cursor",
            });
            assertMatch(
              toolErrorText(forged),
              /^invalid_argument: cursor is not/,
            );
            const missing = await callTool(server, "list_tables", {
              connection_id: id,
              schema: "no_such_schema",
            });
            assertMatch(
              toolErrorText(missing),
              /^not_found: .*no schema "no_such_schema"/,
            );
            const tooMany = await callTool(server, "list_tables", {
              connection_id: id,
              limit: 1001,
            });
            assertMatch(
              toolErrorText(tooMany),
              /^invalid_argument: limit must be from 1 to 1000/,
            );
          },
        );

        await t.step(
          "search_schema finds a column by a word of its name, and of its comment",
          async () => {
            // In this test's schema: other tests beside it (the e2e tiers
            // run at once) make tables of their own, and an `email` column
            // of theirs is an exact match (seen in CI).
            const byName = await ok("search_schema", {
              query: "email",
              schema: s,
            });
            assertEquals(byName.matches[0], {
              schema: s,
              table: "customer_accounts",
              column: "email_address",
              kind: "column",
              data_type: byName.matches[0].data_type,
              ...(engine === "sqlite"
                ? {}
                : { comment: "where the invoices go" }),
            });
            assert(/text/i.test(byName.matches[0].data_type));
            if (engine !== "sqlite") {
              const byComment = await ok("search_schema", {
                query: "INVOICES",
                kinds: ["column"],
                schema: s,
              });
              assertEquals(byComment.matches[0].column, "email_address");
            }
            // More words matched first: the table named by one word, with the
            // column named by the other.
            const both = await ok("search_schema", {
              query: "customer email",
              schema: s,
            });
            assertEquals(both.matches[0].column, "email_address");
            // Tables before columns, exact names before prefixes.
            const exact = await ok("search_schema", {
              query: "tbl_0042",
              schema: s,
            });
            assertEquals(exact.matches[0], {
              schema: s,
              table: "tbl_0042",
              kind: "table",
            });
            const many = await ok("search_schema", { query: "tbl", schema: s });
            assertEquals(many.matches.length, 50);
            assertEquals(many.is_truncated, true);
            assertEquals(many.total, TABLES);
            const blank = await callTool(server, "search_schema", {
              connection_id: id,
              query: "  ",
            });
            assertMatch(
              toolErrorText(blank),
              /^invalid_argument: query must not be blank/,
            );
          },
        );

        await t.step(
          "describe_table gives comments and enum values, the DDL only when asked",
          async () => {
            const plain = await ok("describe_table", {
              table: "customer_accounts",
              schema: s,
            });
            assertEquals(plain.ddl, undefined);
            assertEquals(plain.total_columns, 3);
            assertEquals(plain.is_truncated, false);
            if (engine !== "sqlite") {
              assertEquals(plain.comment, "People who buy things");
              assertEquals(plain.columns[1].comment, "where the invoices go");
              assertEquals(plain.columns[2].enum_values, [
                "happy",
                "sad",
                "it's complicated",
              ]);
            }
            const withDdl = await ok("describe_table", {
              table: "customer_accounts",
              schema: s,
              include_ddl: true,
            });
            assertMatch(withDdl.ddl, /CREATE TABLE/i);
          },
        );

        await t.step(
          "describe_table of 1,000 columns answers within the budget and reads on",
          async () => {
            const names: string[] = [];
            let offset = 0;
            for (let guard = 0; guard < 50; guard++) {
              const answer = await ok("describe_table", {
                table: "wide",
                schema: s,
                ...(offset === 0 ? {} : { column_offset: offset }),
              });
              assertEquals(answer.total_columns, WIDE);
              names.push(
                ...answer.columns.map((c: { name: string }) => c.name),
              );
              offset += answer.columns.length;
              if (!answer.is_truncated) break;
            }
            assertEquals(
              names,
              Array.from({ length: WIDE }, (_, i) => `c${i}`),
            );
          },
        );

        await t.step(
          "the schema resource takes ?schema= and stays within the budget",
          async () => {
            const uri = `dbport://connections/${id}/schema?schema=${s}`;
            const read = await postModern(
              server.url,
              modernRequest("resources/read", { uri }, requestId()),
            );
            const text = read.json.result.contents[0].text;
            assert(text.length < KB64, `${text.length} bytes`);
            const payload = JSON.parse(text);
            assertEquals(payload.schema, s);
            assertEquals(payload.total_tables, TABLES + 6);
            assertEquals(payload.truncated, true);
            assert(payload.tables.length > 0);
          },
        );
      } finally {
        await dropSecond(fixture, second);
      }
    },
  );
}
