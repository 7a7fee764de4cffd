/**
 * Private columns held by the engine (docs/security.md "Private columns"):
 * with `*.email` and `*.*ssn*` private and the AI login `harden` made,
 * PostgreSQL and MariaDB themselves refuse every read of them — `SELECT *`,
 * a whole-row value, a view, a SQL function — proven on a session of the AI
 * login opened directly, where nothing of dbport runs. A column or table
 * added later that matches a pattern is private after the re-sync.
 */

import {
  assert,
  assertEquals,
  assertRejects,
  assertStringIncludes,
} from "@std/assert";
import { callTool, toolErrorText } from "../_tool_call.ts";
import { modernRequest, postModern } from "../_server.ts";
import mysql from "mysql2/promise";
import postgres from "postgres";
import { driverSpec, type SavedConnection } from "../../lib/app/connections.ts";
import { openDriver } from "../../lib/db/open_driver.ts";
import {
  applyHarden,
  prepareHarden,
  saveHardened,
} from "../../lib/cli/harden.ts";
import { syncPrivateColumns } from "../../lib/app/private_sync.ts";
import { withLogin } from "../../lib/db/split_driver.ts";
import { saveConnections } from "../../lib/app/connections.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import {
  needs,
  openFixture,
  openPostgresDatabase,
  POSTGRES_URL,
  READ_OPTIONS,
} from "../_db.ts";

const PRIVATE = ["*.email", "*.*ssn*"];

/** Harden `saved` in process (plan, apply, save), as `harden --apply` does. */
async function harden(
  saved: SavedConnection,
  home: string,
): Promise<SavedConnection> {
  await saveConnections(`${home}/connections.json`, [saved]);
  const prepared = await prepareHarden(saved);
  assert(prepared !== null);
  const done = await applyHarden(prepared);
  await saveHardened(`${home}/connections.json`, done.connection);
  return done.connection;
}

/** Whether `sql` is refused by the engine as a permission error. */
async function refused(run: () => Promise<unknown>, sql: string) {
  const error = await assertRejects(run, Error);
  assert(
    /permission denied|command denied/i.test(error.message),
    `${sql}: ${error.message}`,
  );
}

Deno.test(
  "postgres: private columns are refused by the engine to the AI login itself: SELECT *, t::text, row_to_json(t), a view, a SQL function",
  needs("postgres"),
  async () => {
    const fixture = await openPostgresDatabase();
    const home = await Deno.makeTempDir({ prefix: "dbport-private-" });
    let user = "";
    let ai: ReturnType<typeof postgres> | null = null;
    try {
      for (
        const sql of [
          "create table shop.customers (id int primary key, name text, email text, ssn_last4 text)",
          "insert into shop.customers values (1, 'Ada', 'ada@example.com', '1234')",
          "create view shop.contacts as select name, email as contact from shop.customers",
          "create view shop.rows as select row_to_json(c) as r from shop.customers c",
          "create view shop.contacts2 as select * from shop.contacts",
          "create view shop.names as select id, name from shop.customers",
          "create function shop.emails() returns setof text language sql as 'select email from shop.customers'",
        ]
      ) await fixture.admin(sql);
      const connection = await harden(
        savedConnection(fixture, "Shop", { privateColumns: PRIVATE }),
        home,
      );
      user = connection.aiLogin!.user;
      ai = postgres(withLogin(fixture.url, connection.aiLogin!), {
        max: 1,
        onnotice: () => {},
      });
      const db = ai;
      // What is not private reads as before.
      assertEquals(
        [...await db.unsafe("select id, name from shop.customers")],
        [{ id: 1, name: "Ada" }],
      );
      assertEquals((await db.unsafe("select * from shop.names")).length, 1);
      assertEquals((await db.unsafe("select * from shop.authors")).length, 2);
      for (
        const sql of [
          "select * from shop.customers",
          "select email from shop.customers",
          "select ssn_last4 from shop.customers",
          "select c::text from shop.customers c",
          "select row_to_json(c) from shop.customers c",
          "select to_jsonb(c) from shop.customers c",
          "select count(*) from shop.customers where email like 'a%'",
          "select * from shop.contacts",
          "select * from shop.contacts2",
          "select * from shop.rows",
          "select shop.emails()",
          "select * from shop.emails()",
        ]
      ) await refused(() => db.unsafe(sql), sql);
      // Through the tools: the refusal names the columns, describe_table
      // and search_schema mark them, and nothing else changes.
      {
        await using server = await serverWith([connection]);
        const run = (query: string) =>
          callTool(server, "execute_query", {
            connection_id: connection.id,
            query,
          });
        for (
          const query of [
            "select * from shop.customers",
            "select row_to_json(c) from shop.customers c",
          ]
        ) {
          assertEquals(
            toolErrorText(await run(query)),
            'denied: "customers.email", "customers.ssn_last4" are private on "Shop"; name the columns you need (describe_table marks private ones `private: true`) and leave these out; the database itself refuses them to AI clients, so only the user can read them',
          );
        }
        assertStringIncludes(
          toolErrorText(await run("select * from shop.contacts")),
          'denied: the view "contacts" reads a private column on "Shop"',
        );
        const explained = await callTool(server, "explain_query", {
          connection_id: connection.id,
          query: "select email from shop.customers",
        });
        assertStringIncludes(
          toolErrorText(explained),
          'denied: "customers.email", "customers.ssn_last4" are private on "Shop"',
        );
        const read = await run("select id, name from shop.customers");
        assertEquals(read.json.result.structuredContent.rows, [[1, "Ada"]]);
        const described = await callTool(server, "describe_table", {
          connection_id: connection.id,
          table: "customers",
          schema: "shop",
        });
        assertEquals(
          described.json.result.structuredContent.columns.map((
            c: { name: string; private?: true },
          ) => [c.name, c.private ?? false]),
          [["id", false], ["name", false], ["email", true], [
            "ssn_last4",
            true,
          ]],
        );
        const listed = await callTool(server, "list_tables", {
          connection_id: connection.id,
          schema: "shop",
        });
        assertEquals(
          listed.json.result.structuredContent.private_columns,
          PRIVATE,
        );
        const schema = await postModern(
          server.url,
          modernRequest("resources/read", {
            uri: `dbport://connections/${connection.id}/schema?schema=shop`,
          }, 9_001),
        );
        const customers = JSON.parse(schema.json.result.contents[0].text)
          .tables.find((t: { name: string }) => t.name === "customers");
        assertEquals(
          customers.columns.filter((c: { private?: true }) => c.private)
            .map((c: { name: string }) => c.name),
          ["email", "ssn_last4"],
        );
        const prompt = await postModern(
          server.url,
          modernRequest("prompts/get", {
            name: "explain_table",
            arguments: {
              connection: "Shop",
              table: "customers",
              schema: "shop",
            },
          }, 9_002),
        );
        assertStringIncludes(
          prompt.json.result.messages[0].content.text,
          "| email | text | yes |  | private: true (the database refuses it) |",
        );
        const found = await callTool(server, "search_schema", {
          connection_id: connection.id,
          query: "email",
        });
        assert(
          found.json.result.structuredContent.matches.some((
            m: { column?: string; private?: true },
          ) => m.column === "email" && m.private === true),
          JSON.stringify(found.json.result),
        );
      }
      // A column and a table added later: private after the re-sync.
      await fixture.admin(
        "alter table shop.customers add column ssn_full text",
      );
      await fixture.admin(
        "create table shop.leads (id int, email text, note text)",
      );
      await fixture.admin(
        "insert into shop.leads values (1, 'x@example.com', 'n')",
      );
      const synced = await syncPrivateColumns(connection);
      assertEquals(synced.problem, null);
      assert(
        synced.columns.includes("shop.leads.email"),
        synced.columns.join(),
      );
      assert(
        synced.columns.includes("shop.customers.ssn_full"),
        synced.columns.join(),
      );
      assertEquals(synced.views.sort(), [
        "shop.contacts",
        "shop.contacts2",
        "shop.rows",
      ]);
      for (
        const sql of [
          "select email from shop.leads",
          "select * from shop.leads",
          "select ssn_full from shop.customers",
        ]
      ) await refused(() => db.unsafe(sql), sql);
      assertEquals(
        [...await db.unsafe("select id, note from shop.leads")],
        [{ id: 1, note: "n" }],
      );
      // The list emptied: the login reads everything again.
      const cleared = await syncPrivateColumns({
        ...connection,
        privateColumns: [],
      });
      assertEquals(cleared.problem, null);
      assertEquals((await db.unsafe("select * from shop.contacts")).length, 1);
    } finally {
      await ai?.end();
      await fixture[Symbol.asyncDispose]();
      if (user !== "") {
        const sql = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
        await sql.unsafe(`drop role if exists "${user}"`).finally(() =>
          sql.end()
        );
      }
      await Deno.remove(home, { recursive: true });
    }
  },
);

Deno.test(
  "mysql: private columns are refused by the engine to the AI login itself: SELECT *, a view, a stored function",
  needs("mysql"),
  async () => {
    await using fixture = await openFixture("mysql");
    const home = await Deno.makeTempDir({ prefix: "dbport-private-" });
    let user = "";
    let ai: mysql.Connection | null = null;
    try {
      for (
        const sql of [
          "create table customers (id int primary key, name text, email text, ssn_last4 text)",
          "insert into customers values (1, 'Ada', 'ada@example.com', '1234')",
          "create view contacts as select name, email as contact from customers",
          "create view contacts2 as select * from contacts",
          "create view names as select id, name from customers",
          "create function emails() returns text reads sql data return (select group_concat(email) from customers)",
        ]
      ) await fixture.admin(sql);
      const connection = await harden(
        savedConnection(fixture, "Shop", { privateColumns: PRIVATE }),
        home,
      );
      user = connection.aiLogin!.user;
      ai = await mysql.createConnection({
        uri: withLogin(fixture.url, connection.aiLogin!),
      });
      const db = ai;
      const rows = async (sql: string) => (await db.query(sql))[0] as unknown[];
      assertEquals(await rows("select id, name from customers"), [{
        id: 1,
        name: "Ada",
      }]);
      assertEquals((await rows("select * from names")).length, 1);
      assertEquals((await rows("select * from authors")).length, 2);
      for (
        const sql of [
          "select * from customers",
          "select email from customers",
          "select ssn_last4 from customers",
          "select count(*) from customers where email like 'a%'",
          "select * from contacts",
          "select * from contacts2",
          "select emails()",
        ]
      ) {
        const error = await assertRejects(() => db.query(sql), Error);
        assert(
          /denied/i.test(error.message),
          `${sql}: ${error.message}`,
        );
      }
      {
        await using server = await serverWith([connection]);
        const answer = await callTool(server, "execute_query", {
          connection_id: connection.id,
          query: "select * from customers",
        });
        assertStringIncludes(
          toolErrorText(answer),
          'denied: "customers" has private columns on "Shop" ("*.email", "*.*ssn*")',
        );
        assertStringIncludes(
          toolErrorText(
            await callTool(server, "execute_query", {
              connection_id: connection.id,
              query: "select email from customers",
            }),
          ),
          'denied: "customers.email" is private on "Shop"',
        );
        assertStringIncludes(
          toolErrorText(
            await callTool(server, "execute_query", {
              connection_id: connection.id,
              query: "select * from contacts",
            }),
          ),
          "denied: ",
        );
      }
      await fixture.admin("alter table customers add column ssn_full text");
      await fixture.admin("create table leads (id int, email text, note text)");
      const synced = await syncPrivateColumns(connection);
      assertEquals(synced.problem, null);
      assert(
        synced.columns.includes(`${fixture.schema}.leads.email`),
        synced.columns.join(),
      );
      for (
        const sql of [
          "select email from leads",
          "select ssn_full from customers",
        ]
      ) await assertRejects(() => db.query(sql), Error, "denied");
      assertEquals(await rows("select id, note from leads"), []);
      // A column made private later loses its column grant; an emptied
      // list gives the database-level SELECT back.
      const narrower = await syncPrivateColumns({
        ...connection,
        privateColumns: [...PRIVATE, "customers.name"],
      });
      assertEquals(narrower.problem, null);
      await assertRejects(
        () => db.query("select name from customers"),
        Error,
        "denied",
      );
      assertEquals(await rows("select id from customers"), [{ id: 1 }]);
      const cleared = await syncPrivateColumns({
        ...connection,
        privateColumns: [],
      });
      assertEquals(cleared.problem, null);
      // MariaDB applies a database-level grant at a session's next USE:
      // the re-sync ended the login's sessions, this one among them.
      await assertRejects(() => db.query("select 1"));
      await ai.end().catch(() => {});
      ai = await mysql.createConnection({
        uri: withLogin(fixture.url, connection.aiLogin!),
      });
      const again = ai;
      const rows2 = async (sql: string) =>
        (await again.query(sql))[0] as unknown[];
      assertEquals((await rows2("select * from customers")).length, 1);
      assertEquals((await rows2("select * from contacts")).length, 1);
    } finally {
      await ai?.end();
      const hosts = user === "" ? [] : await fixture.admin(
        `select host from mysql.user where user = '${user}'`,
      ) as { host: string }[];
      for (const { host } of hosts) {
        await fixture.admin(`drop user if exists '${user}'@'${host}'`);
      }
      await Deno.remove(home, { recursive: true });
    }
  },
);

Deno.test(
  "sqlite: the read handles' authorizer denies private columns: SELECT *, a view, a WHERE; the schema calls and approved writes still work",
  async () => {
    await using fixture = await openFixture("sqlite");
    for (
      const sql of [
        "create table customers (id integer primary key, name text, email text, ssn_last4 text)",
        "insert into customers values (1, 'Ada', 'ada@example.com', '1234')",
        "create view contacts as select name, email as contact from customers",
        "create view names as select id, name from customers",
        // Sampled index keys: the email itself, where STAT4 is built in.
        "create index customers_email on customers (email)",
        "analyze",
      ]
    ) await fixture.admin(sql);
    const stat4 = (await fixture.admin(
      "select name from sqlite_master where name = 'sqlite_stat4'",
    )).length > 0;
    const connection = savedConnection(fixture, "Local", {
      privateColumns: PRIVATE,
    });
    const driver = openDriver(driverSpec(connection));
    try {
      assertEquals(
        (await driver.query("select id, name from customers", READ_OPTIONS))
          .rows,
        [[1, "Ada"]],
      );
      assertEquals(
        (await driver.query("select * from names", READ_OPTIONS)).rows,
        [[1, "Ada"]],
      );
      for (
        const sql of [
          "select * from customers",
          "select email from customers",
          "select upper(ssn_last4) from customers",
          "select count(*) from customers where email like 'a%'",
          "select * from contacts",
          "select (select email from customers) as x",
          "with c as (select * from customers) select id from c",
          ...(stat4 ? ["select sample from sqlite_stat4"] : []),
        ]
      ) {
        const error = await assertRejects(
          () => driver.query(sql, READ_OPTIONS),
          Error,
        );
        assert(/prohibited/.test(error.message), `${sql}: ${error.message}`);
      }
      const detail = await driver.describeTable("customers", {
        signal: new AbortController().signal,
        timeoutMs: 10_000,
      });
      assertEquals(detail?.columns.map((c) => c.name), [
        "id",
        "name",
        "email",
        "ssn_last4",
      ]);
      {
        await using server = await serverWith([connection]);
        assertStringIncludes(
          toolErrorText(
            await callTool(server, "execute_query", {
              connection_id: connection.id,
              query: "select * from contacts",
            }),
          ),
          'denied: "customers.email" is private on "Local"',
        );
        const described = await callTool(server, "describe_table", {
          connection_id: connection.id,
          table: "customers",
        });
        assertEquals(
          described.json.result.structuredContent.columns.filter((
            c: { private?: true },
          ) => c.private).map((c: { name: string }) => c.name),
          ["email", "ssn_last4"],
        );
      }
      // An approved write runs on the write handle, as the saved file's owner.
      const written = await driver.query(
        "update customers set name = name || '' returning email",
        { ...READ_OPTIONS, mode: "write" },
      );
      assertEquals(written.rows, [["ada@example.com"]]);
    } finally {
      await driver.close();
    }
  },
);
