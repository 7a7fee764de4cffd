/**
 * An outsider's attacks on private columns (docs/security.md "Private
 * columns"), with `*.email` and `*.*ssn*` private and the AI login made.
 *
 * What broke, now fixed and kept here: PostgreSQL — an entry naming a
 * partitioned (or inheritance parent) table left its partitions readable,
 * one naming a partition left its parent readable; a partition added later
 * and a view replaced by one reading a private column under a clean
 * column's name did not move the schema fingerprint, so no re-sync ran (on
 * MariaDB too, for the replaced view); explain_query never re-synced.
 * MariaDB and SQLite — `JOIN … USING (col)` / `NATURAL JOIN` compare a
 * private column without the engine's column check (a recursive CTE of
 * every candidate returned each row's `ssn_last4`). SQLite — snippet(),
 * MATCH and the table-valued form read a full-text table's private column;
 * a user table named `pragma_*` (PostgreSQL: `sqlite_*`, schema `sys`) was
 * never matched. PostgreSQL and SQLite — a write's approval form, sent to
 * the client, carried a dry-run count or estimate answering a WHERE on a
 * private column before anyone approved. A view handing on a function's
 * reads (MariaDB: any DEFINER view calling a stored function; PostgreSQL: a
 * materialized view calling a function, a view calling a SECURITY DEFINER
 * one) was granted.
 *
 * What held: tables of reads each engine refuses.
 */

import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import mysql from "mysql2/promise";
import postgres from "postgres";
import { callTool, toolErrorText } from "../_tool_call.ts";
import {
  saveConnections,
  type SavedConnection,
} from "../../lib/app/connections.ts";
import {
  applyHarden,
  prepareHarden,
  saveHardened,
} from "../../lib/cli/harden.ts";
import { withLogin } from "../../lib/db/split_driver.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture, openPostgresDatabase } from "../_db.ts";
import type { TestServer } from "../_server.ts";
import { recordingDialog } from "../_dialog.ts";
import { sdkClient } from "../_sdk.ts";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";

const PRIVATE = ["*.email", "*.*ssn*"];

/** Harden `saved` in process (plan, apply, save), as `harden --apply` does. */
async function harden(
  saved: SavedConnection,
): Promise<SavedConnection> {
  const home = await Deno.makeTempDir({ prefix: "dbport-outsider-" });
  try {
    await saveConnections(`${home}/connections.json`, [saved]);
    const prepared = await prepareHarden(saved);
    assert(prepared !== null);
    const done = await applyHarden(prepared);
    await saveHardened(`${home}/connections.json`, done.connection);
    return done.connection;
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

/** An AI client's read: its rows, or its tool error's text. */
async function read(
  server: TestServer,
  connection: SavedConnection,
  query: string,
  tool = "execute_query",
  extra: Record<string, unknown> = {},
): Promise<{ rows?: unknown[][]; error?: string }> {
  const answer = await callTool(server, tool, {
    connection_id: connection.id,
    query,
    ...extra,
  });
  if (answer.json.result === undefined) {
    return { error: JSON.stringify(answer.json.error) };
  }
  return answer.json.result.isError
    ? { error: toolErrorText(answer) }
    : { rows: answer.json.result.structuredContent?.rows ?? [] };
}

/** Fails unless `query` is refused and none of `secrets` is in its answer. */
async function refusedTool(
  server: TestServer,
  connection: SavedConnection,
  query: string,
  secrets: string[],
  tool = "execute_query",
  extra: Record<string, unknown> = {},
): Promise<string> {
  const answer = await read(server, connection, query, tool, extra);
  assert(
    answer.error !== undefined,
    `${query}: answered ${JSON.stringify(answer.rows)}`,
  );
  for (const secret of secrets) {
    assert(!answer.error.includes(secret), `${query}: ${answer.error}`);
  }
  return answer.error;
}

/** Whether the engine refuses `sql` to a session of the AI login itself. */
async function engineRefuses(
  run: (sql: string) => Promise<unknown>,
  sql: string,
): Promise<void> {
  let rows: unknown;
  try {
    rows = await run(sql);
  } catch (error) {
    assert(
      /permission denied|command denied/i.test((error as Error).message),
      `${sql}: ${(error as Error).message}`,
    );
    return;
  }
  throw new Error(`${sql}: the AI login read ${JSON.stringify(rows)}`);
}

Deno.test(
  "postgres: an entry naming a partitioned or parent table holds on its partitions and children, and one naming a partition holds on its parent",
  needs("postgres"),
  async () => {
    await using fixture = await openPostgresDatabase();
    for (
      const sql of [
        "create table shop.orders (id int, name text, card text) partition by range (id)",
        "create table shop.orders_1 partition of shop.orders for values from (0) to (100)",
        "create table shop.orders_2 partition of shop.orders for values from (100) to (200)",
        "insert into shop.orders values (1, 'a', '4111-1'), (150, 'b', '4111-2')",
        "create table shop.people (id int, name text, phone text)",
        "create table shop.people_old () inherits (shop.people)",
        "insert into shop.people_old values (1, 'c', '555-0100')",
        "create table shop.events (id int, note text) partition by range (id)",
        "create table shop.events_1 partition of shop.events for values from (0) to (100)",
        "insert into shop.events values (1, 'secret-note')",
      ]
    ) await fixture.admin(sql);
    const connection = await harden(
      savedConnection(fixture, "Shop", {
        privateColumns: [
          "shop.orders.card",
          "shop.people.phone",
          "shop.events_1.note",
        ],
      }),
    );
    const ai = postgres(withLogin(fixture.url, connection.aiLogin!), {
      max: 1,
      onnotice: () => {},
    });
    try {
      const run = (sql: string) => ai.unsafe(sql);
      for (
        const sql of [
          "select card from shop.orders",
          "select card from shop.orders_1",
          "select * from shop.orders_2",
          "select phone from shop.people_old",
          "select p::text from shop.people_old p",
          "select note from shop.events",
          "select note from shop.events_1",
        ]
      ) await engineRefuses(run, sql);
      // Their other columns still read.
      assertEquals((await run("select id, name from shop.orders_2")).length, 1);
      assertEquals((await run("select id from shop.people_old")).length, 1);
      assertEquals((await run("select id from shop.events")).length, 1);
    } finally {
      await ai.end();
    }
  },
);

Deno.test(
  "postgres: a partition added later and a clean view replaced by one reading a private column are re-synced before dbport reads them",
  needs("postgres"),
  async () => {
    await using fixture = await openPostgresDatabase();
    for (
      const sql of [
        "create table shop.customers (id int, name text, email text) partition by range (id)",
        "create table shop.customers_1 partition of shop.customers for values from (0) to (100)",
        "insert into shop.customers values (1, 'Ada', 'ada@example.com')",
        "create view shop.names as select id, name from shop.customers",
      ]
    ) await fixture.admin(sql);
    const connection = await harden(
      savedConnection(fixture, "Shop", { privateColumns: PRIVATE }),
    );
    await using server = await serverWith([connection]);
    assertEquals(
      (await read(server, connection, "select * from shop.names")).rows,
      [[
        1,
        "Ada",
      ]],
    );
    await fixture.admin(
      "create table shop.customers_2 partition of shop.customers for values from (100) to (200)",
    );
    await fixture.admin(
      "insert into shop.customers values (150, 'Bob', 'bob@example.com')",
    );
    // Past the guard's once-a-second look at the fingerprint.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await refusedTool(
      server,
      connection,
      "select email from shop.customers_2",
      [
        "bob@example.com",
      ],
    );
    await fixture.admin(
      "create or replace view shop.names as select id, email as name from shop.customers",
    );
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    assertStringIncludes(
      await refusedTool(server, connection, "select * from shop.names", [
        "ada@example.com",
      ]),
      'the view "names" reads a private column',
    );
  },
);

/** Reads that compare a private column through USING/NATURAL, per engine. */
const BLIND_JOINS = {
  mysql: [
    "with recursive n(v) as (select 0 union all select v + 1 from n where v < 9999) select c.id, x.ssn_last4 from customers c join (select lpad(v, 4, '0') as ssn_last4 from n) x using (ssn_last4)",
    "select c.id from customers c natural join (select '0042' as ssn_last4) x",
    "select id from customers join (select 'ada@example.com' as email) x using (email)",
  ],
  sqlite: [
    "with recursive n(v) as (select 0 union all select v + 1 from n where v < 9999) select c.id, x.ssn_last4 from customers c join (select printf('%04d', v) as ssn_last4 from n) x using (ssn_last4)",
    "select c.id from customers c natural join (select '0042' as ssn_last4) x",
    "select id from customers join (select 'ada@example.com' as email) x using (email)",
  ],
};

for (const engine of ["mysql", "sqlite"] as const) {
  Deno.test(
    `${engine}: a JOIN … USING or NATURAL JOIN on a private column is refused (the engine's column check misses it)`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      for (
        const sql of [
          "create table customers (id int primary key, name text, email varchar(100), ssn_last4 char(4))",
          "insert into customers values (1, 'Ada', 'ada@example.com', '0042')",
        ]
      ) await fixture.admin(sql);
      const saved = savedConnection(fixture, "Shop", {
        privateColumns: PRIVATE,
      });
      const connection = engine === "mysql" ? await harden(saved) : saved;
      await using server = await serverWith([connection]);
      for (const query of BLIND_JOINS[engine]) {
        assertStringIncludes(
          await refusedTool(server, connection, query, ["0042"]),
          "write the join with ON",
        );
      }
      // Hidden from the lexer's words: executable comments are refused whole.
      if (engine === "mysql") {
        for (
          const query of [
            "select c.id from customers c /*! natural */ join (select '0042' as ssn_last4) x",
            "select c.id from customers c /*M!100000 natural */ join (select '0042' as ssn_last4) x",
          ]
        ) await refusedTool(server, connection, query, ["0042"]);
      }
      await refusedTool(
        server,
        connection,
        BLIND_JOINS[engine][1]!,
        ["0042"],
        "explain_query",
        { analyze: true },
      );
      // The same join written with ON is refused by the engine itself.
      await refusedTool(
        server,
        connection,
        "select c.id from customers c join (select '0042' as s) x on c.ssn_last4 = x.s",
        ["0042"],
      );
      // A join on clean columns still runs, USING too where nothing is private.
      assertEquals(
        (await read(
          server,
          connection,
          "select c.name from customers c join (select 1 as id) x on c.id = x.id",
        )).rows,
        [["Ada"]],
      );
    },
  );
}

/** PostgreSQL reads of a private column that the engine refused (held). */
const PG_HELD = [
  "select * from shop.customers",
  "table shop.customers",
  "select c::text from shop.customers c",
  "select row(c.*) from shop.customers c",
  "select json_agg(c) from shop.customers c",
  "select array_agg(c) from shop.customers c",
  "select string_agg(email, ',') from shop.customers",
  "select count(*) from shop.customers where email < 'm'",
  "select id from shop.customers order by email limit 1",
  "select count(*) from shop.customers group by email",
  "select distinct on (email) id from shop.customers",
  "select id, rank() over (order by ssn_last4) from shop.customers",
  "select id from shop.customers where lower(email) = 'ada@example.com'",
  "select email::int from shop.customers",
  "select id from shop.customers join (select 'ada@example.com' as email) x using (email)",
  "select id from shop.customers natural join (select 'ada@example.com' as email) x",
  "with names as (select * from shop.customers) select id from names",
  "explain (verbose) select email from shop.customers",
];

/** PostgreSQL catalog reads that answered no private value (held). */
const PG_EMPTY = [
  "select most_common_vals::text, histogram_bounds::text from pg_stats where schemaname = 'shop' and tablename like 'customers%' and attname not in ('id', 'name')",
  "select * from pg_stats_ext where schemaname = 'shop'",
  "select * from pg_stats_ext_exprs where schemaname = 'shop'",
];

Deno.test(
  "postgres: what held — whole rows, aggregates, predicates, casts, USING joins, EXPLAIN VERBOSE, pg_stats (even of an expression index)",
  needs("postgres"),
  async () => {
    await using fixture = await openPostgresDatabase();
    for (
      const sql of [
        "create table shop.customers (id int primary key, name text, email text, ssn_last4 text)",
        "insert into shop.customers select g, 'n' || g, 'user' || g || '@example.com', lpad(g::text, 4, '0') from generate_series(1, 300) g",
        "insert into shop.customers values (0, 'Ada', 'ada@example.com', '0042')",
        "create index on shop.customers (lower(email))",
        "create statistics shop.customers_stat on lower(email), ssn_last4 from shop.customers",
        "analyze shop.customers",
      ]
    ) await fixture.admin(sql);
    const connection = await harden(
      savedConnection(fixture, "Shop", { privateColumns: PRIVATE }),
    );
    const ai = postgres(withLogin(fixture.url, connection.aiLogin!), {
      max: 1,
      onnotice: () => {},
    });
    try {
      const run = (sql: string) => ai.unsafe(sql);
      for (const sql of PG_HELD) await engineRefuses(run, sql);
      for (const sql of PG_EMPTY) assertEquals([...await run(sql)], [], sql);
      await using server = await serverWith([connection]);
      for (const query of [...PG_HELD, "copy shop.customers to stdout"]) {
        await refusedTool(server, connection, query, ["@example.com", "0042"]);
      }
      for (const query of PG_EMPTY) {
        assertEquals((await read(server, connection, query)).rows, [], query);
      }
    } finally {
      await ai.end();
    }
  },
);

/** MariaDB reads of a private column the engine refused (held). */
const MYSQL_HELD = [
  "select * from customers",
  "select json_object('e', email) from customers",
  "select json_arrayagg(ssn_last4) from customers",
  "select count(*) from customers where email like 'a%'",
  "select id from customers order by email",
  "select id from customers group by email",
  "select count(distinct email) from customers",
  "select (select email from customers limit 1)",
  "select * from (select 1 as email) x right join customers on x.email = customers.email",
  "select * from mysql.column_stats",
  "select * from mysql.index_stats",
  "select cast(email as signed) from customers",
  "select * from contacts",
];

Deno.test(
  "mysql: what held — SELECT *, JSON, predicates, ORDER/GROUP BY, mysql.* statistics, a DEFINER view",
  needs("mysql"),
  async () => {
    await using fixture = await openFixture("mysql");
    for (
      const sql of [
        "create table customers (id int primary key, name text, email varchar(100) unique, ssn_last4 char(4))",
        "insert into customers values (1, 'Ada', 'ada@example.com', '0042')",
        "create sql security definer view contacts as select id, email as contact from customers",
        "analyze table customers persistent for all",
      ]
    ) await fixture.admin(sql);
    const connection = await harden(
      savedConnection(fixture, "Shop", { privateColumns: PRIVATE }),
    );
    const url = new URL(fixture.url);
    const ai = await mysql.createConnection({
      host: url.hostname,
      port: Number(url.port || 3306),
      user: connection.aiLogin!.user,
      password: connection.aiLogin!.password,
      database: fixture.schema,
    });
    try {
      for (const sql of MYSQL_HELD) {
        await engineRefuses((text) => ai.query(text), sql);
      }
    } finally {
      await ai.end();
    }
    await using server = await serverWith([connection]);
    for (
      const query of [
        ...MYSQL_HELD,
        "handler customers open",
        "select email into outfile '/tmp/dbport-outsider' from customers",
      ]
    ) await refusedTool(server, connection, query, ["@example.com", "0042"]);
  },
);

/** SQLite reads of a private column the authorizer refused (held). */
const SQLITE_HELD = [
  "select * from customers",
  "select json_object('e', email) from customers",
  "select * from json_each((select json_group_array(email) from customers))",
  "select group_concat(email) from customers",
  "select id from customers order by email",
  "select id, row_number() over (order by ssn_last4) from customers",
  "select rowid, email from customers indexed by customers_email",
  "with names as (select * from customers) select * from names",
  "select * from (select 1 as q) x natural right join customers",
  "select * from contacts",
  "select * from main.customers",
  "attach 'other.db' as other",
  "select * from sqlite_stat4",
];

Deno.test(
  "sqlite: what held — SELECT *, JSON, ORDER BY, windows, INDEXED BY, CTE named like a table, views, ATTACH",
  async () => {
    await using fixture = await openFixture("sqlite");
    for (
      const sql of [
        "create table customers (id integer primary key, name text, email text, ssn_last4 text)",
        "insert into customers values (1, 'Ada', 'ada@example.com', '0042')",
        "create index customers_email on customers (email)",
        "create view contacts as select name, email as contact from customers",
        "create view names as select id, name from customers",
        "analyze",
      ]
    ) await fixture.admin(sql);
    const connection = savedConnection(fixture, "Local", {
      privateColumns: PRIVATE,
    });
    await using server = await serverWith([connection]);
    for (const query of SQLITE_HELD) {
      await refusedTool(server, connection, query, ["@example.com", "0042"]);
    }
    // A CTE named like a clean view reads only what it is given.
    assertEquals(
      (await read(
        server,
        connection,
        "with names as (select id, name from customers) select * from names",
      )).rows,
      [[1, "Ada"]],
    );
  },
);

Deno.test(
  "mysql: a clean view replaced by one reading a private column under the same name and type is re-synced before dbport reads it",
  needs("mysql"),
  async () => {
    await using fixture = await openFixture("mysql");
    for (
      const sql of [
        "create table customers (id int primary key, name text, email text)",
        "insert into customers values (1, 'Ada', 'ada@example.com')",
        "create view names as select id, name from customers",
      ]
    ) await fixture.admin(sql);
    const connection = await harden(
      savedConnection(fixture, "Shop", { privateColumns: PRIVATE }),
    );
    await using server = await serverWith([connection]);
    assertEquals(
      (await read(server, connection, "select * from names")).rows,
      [[1, "Ada"]],
    );
    await fixture.admin(
      "create or replace view names as select id, email as name from customers",
    );
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await refusedTool(server, connection, "select * from names", [
      "ada@example.com",
    ]);
  },
);

Deno.test(
  "sqlite: a full-text table's private column is not read through MATCH, snippet(), highlight(), bm25(), rank or the table-valued form",
  async () => {
    await using fixture = await openFixture("sqlite");
    for (
      const sql of [
        "create table customers (id integer primary key, name text, email text)",
        "insert into customers values (1, 'Ada', 'ada@example.com')",
        "create virtual table notes using fts5(body, email)",
        "insert into notes values ('hello', 'ada@example.com')",
        "create virtual table mirror using fts5(email, content='customers', content_rowid='id')",
        "insert into mirror(mirror) values ('rebuild')",
        "create virtual table plain using fts5(body)",
        "insert into plain values ('ada was here')",
      ]
    ) await fixture.admin(sql);
    const connection = savedConnection(fixture, "Local", {
      privateColumns: PRIVATE,
    });
    await using server = await serverWith([connection]);
    for (
      const query of [
        "select snippet(notes, 1, '[', ']', '', 5) from notes where notes match 'ada'",
        "select highlight(notes, 1, '[', ']') from notes where notes match 'hello'",
        "select rowid from notes where notes match 'email:ada'",
        "select rowid from notes where notes = 'ada'",
        // Table-valued: SQLite builds this MATCH without the authorizer.
        "select count(*) from notes('ad*')",
        "select body from main.notes('ada')",
        "select count(*) from \"Notes\"('ada')",
        "select bm25(notes) from notes where notes match 'ada'",
        "select rank from notes where notes match 'ada'",
        "select rowid from mirror where mirror match 'ada'",
        "select * from notes",
      ]
    ) await refusedTool(server, connection, query, ["ada@example.com"]);
    assertStringIncludes(
      await refusedTool(
        server,
        connection,
        "select count(*) from notes('ada')",
        [],
      ),
      '"notes.email" is private',
    );
    // A full-text table with no private column still searches.
    assertEquals(
      (await read(
        server,
        connection,
        "select snippet(plain, 0, '[', ']', '', 5) from plain where plain match 'ada'",
      )).rows,
      [["[ada] was here"]],
    );
    assertEquals(
      (await read(server, connection, "select body from notes")).rows,
      [["hello"]],
    );
  },
);

Deno.test(
  "postgres: tables and schemas named like another engine's own (sqlite_*, pragma_*, sys, mysql) still have private columns",
  needs("postgres"),
  async () => {
    await using fixture = await openPostgresDatabase();
    for (
      const sql of [
        "create table shop.sqlite_export (id int, email text)",
        "create table shop.pragma_notes (id int, email text)",
        "create schema sys",
        "create table sys.users (id int, email text)",
        "create schema mysql",
        "create table mysql.users (id int, email text)",
        "insert into shop.sqlite_export values (1, 'ada@example.com')",
        "insert into shop.pragma_notes values (1, 'ada@example.com')",
        "insert into sys.users values (1, 'ada@example.com')",
        "insert into mysql.users values (1, 'ada@example.com')",
      ]
    ) await fixture.admin(sql);
    const connection = await harden(
      savedConnection(fixture, "Shop", { privateColumns: PRIVATE }),
    );
    const ai = postgres(withLogin(fixture.url, connection.aiLogin!), {
      max: 1,
      onnotice: () => {},
    });
    try {
      const run = (sql: string) => ai.unsafe(sql);
      for (
        const sql of [
          "select email from shop.sqlite_export",
          "select email from shop.pragma_notes",
          "select email from sys.users",
          "select email from mysql.users",
        ]
      ) await engineRefuses(run, sql);
      assertEquals((await run("select id from sys.users")).length, 1);
    } finally {
      await ai.end();
    }
  },
);

Deno.test(
  "sqlite: a table named pragma_* still has private columns",
  async () => {
    await using fixture = await openFixture("sqlite");
    for (
      const sql of [
        "create table pragma_users (id integer primary key, email text)",
        "insert into pragma_users values (1, 'ada@example.com')",
      ]
    ) await fixture.admin(sql);
    const connection = savedConnection(fixture, "Local", {
      privateColumns: PRIVATE,
    });
    await using server = await serverWith([connection]);
    await refusedTool(server, connection, "select email from pragma_users", [
      "ada@example.com",
    ]);
    assertEquals(
      (await read(
        server,
        connection,
        "select name from pragma_table_xinfo('pragma_users') order by cid",
      )).rows,
      [["id"], ["email"]],
    );
  },
);

Deno.test(
  "postgres: explain_query re-syncs first too, so a table added later cannot be probed through its plan's actual rows",
  needs("postgres"),
  async () => {
    await using fixture = await openPostgresDatabase();
    await fixture.admin(
      "create table shop.customers (id int, name text, email text)",
    );
    const connection = await harden(
      savedConnection(fixture, "Shop", { privateColumns: PRIVATE }),
    );
    await using server = await serverWith([connection]);
    assertEquals(
      (await read(server, connection, "select id from shop.customers")).rows,
      [],
    );
    for (
      const sql of [
        "create table shop.leads (id int, email text)",
        "insert into shop.leads values (1, 'ada@example.com')",
      ]
    ) await fixture.admin(sql);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    // Only explain_query is called: it must not plan the new table's
    // private column unsynced.
    await refusedTool(
      server,
      connection,
      "select id from shop.leads where email like 'ada%'",
      ["ada@example.com"],
      "explain_query",
      { analyze: true },
    );
  },
);

Deno.test(
  "postgres: what held — a write's preview never runs as the saved login before approval, so no cast error or count echoes a private value",
  needs("postgres"),
  async () => {
    await using fixture = await openPostgresDatabase();
    for (
      const sql of [
        "create table shop.customers (id int primary key, name text, email text)",
        "insert into shop.customers values (1, 'Ada', 'ada@example.com')",
      ]
    ) await fixture.admin(sql);
    const connection = await harden(
      savedConnection(fixture, "Shop", {
        privateColumns: PRIVATE,
        externalAccess: "readWrite",
        safeMode: "alert",
      }),
    );
    await using dialog = await recordingDialog(1);
    await using server = await serverWith([connection], {
      hostDialog: dialog.setting,
    });
    const token = await server.mint("readWrite");
    const writes = [
      "update shop.customers set name = name where email::int = 1",
      "update shop.customers set name = email::int::text where id = 1",
      "update shop.customers set name = name where email like 'a%'",
    ];
    for (const query of writes) {
      const answer = await callTool(server, "execute_query", {
        connection_id: connection.id,
        query,
      }, { authorization: `Bearer ${token.plaintext}` });
      assertEquals(
        toolErrorText(answer),
        'denied: the user did not approve a query on "Shop"',
      );
    }
    const asked = await dialog.asked();
    assertEquals(asked.length, writes.length);
    for (const question of asked) {
      assert(!JSON.stringify(question).includes("ada@example.com"));
      assertStringIncludes(
        String((question.preview as { note?: string }).note),
        "no dry run or estimate: this connection has private columns",
      );
    }
  },
);

/** The approval forms a client is shown for `writes` (each declined). */
async function approvalForms(
  server: TestServer,
  connection: SavedConnection,
  writes: string[],
): Promise<string[]> {
  const token = await server.mint("readWrite");
  const forms: string[] = [];
  const client = await sdkClient(server.url, token.plaintext, {
    name: "prober",
    elicit: (params: JsonObject) => {
      const schema = params.requestedSchema as {
        properties: { approved: { description: string } };
      };
      forms.push(schema.properties.approved.description);
      return { action: "decline" };
    },
  });
  try {
    for (const query of writes) {
      await client.callTool({
        name: "execute_query",
        arguments: { connection_id: connection.id, query },
      });
    }
  } finally {
    await client.close();
  }
  return forms;
}

for (const engine of ["postgres", "sqlite"] as const) {
  Deno.test(
    `${engine}: a write's approval form carries no dry-run count or estimate on a connection with private columns (they answered a WHERE on one before anyone approved)`,
    needs(engine),
    async () => {
      await using fixture = engine === "postgres"
        ? await openPostgresDatabase()
        : await openFixture("sqlite");
      const table = engine === "postgres" ? "shop.patients" : "patients";
      for (
        const sql of [
          `create table ${table} (id int primary key, name text, diagnosis_ssn text)`,
          `insert into ${table} select value, 'n', case when value % 10 = 0 then 'hiv' else 'flu' end from ${
            engine === "postgres"
              ? "generate_series(1, 1000) value"
              : "generate_series(1, 1000)"
          }`,
          engine === "postgres" ? `analyze ${table}` : "analyze",
        ]
      ) await fixture.admin(sql);
      const saved = savedConnection(fixture, "Shop", {
        privateColumns: PRIVATE,
        externalAccess: "readWrite",
        safeMode: "alert",
      });
      const connection = engine === "postgres" ? await harden(saved) : saved;
      await using server = await serverWith([connection]);
      const writes = ["hiv", "flu", "zzz"].map((value) =>
        `update ${table} set name = name where diagnosis_ssn = '${value}'`
      );
      const forms = await approvalForms(server, connection, writes);
      assertEquals(forms.length, writes.length);
      for (const [i, form] of forms.entries()) {
        assertEquals(
          form,
          `No preview of ${table}: no dry run or estimate: this connection has private columns, and either would read them as the saved login before anyone approves\n\n${
            writes[i]
          }`,
        );
      }
    },
  );
}

Deno.test(
  "sqlite: two connections on one file, one with private columns, read at once: each worker's authorizer keeps to its own list",
  async () => {
    await using fixture = await openFixture("sqlite");
    for (
      const sql of [
        "create table customers (id integer primary key, name text, email text)",
        "insert into customers values (1, 'Ada', 'ada@example.com')",
      ]
    ) await fixture.admin(sql);
    const guarded = savedConnection(fixture, "Guarded", {
      privateColumns: PRIVATE,
    });
    const open = savedConnection(fixture, "Open");
    await using server = await serverWith([guarded, open]);
    const rounds = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        read(
          server,
          i % 2 === 0 ? guarded : open,
          "select email from customers",
        )),
    );
    for (const [i, answer] of rounds.entries()) {
      if (i % 2 === 0) {
        assertStringIncludes(
          answer.error ?? "",
          '"customers.email" is private',
        );
      } else assertEquals(answer.rows, [["ada@example.com"]]);
    }
  },
);

Deno.test(
  "mysql: a DEFINER view calling a stored function that reads a private column is withheld",
  needs("mysql"),
  async () => {
    await using fixture = await openFixture("mysql");
    for (
      const sql of [
        "create table customers (id int primary key, name text, email text)",
        "insert into customers values (1, 'Ada', 'ada@example.com')",
        "create function contact_of(i int) returns text reads sql data return (select email from customers where id = i)",
        "create sql security definer view contacts as select id, contact_of(id) as contact from customers",
      ]
    ) await fixture.admin(sql);
    const connection = await harden(
      savedConnection(fixture, "Shop", { privateColumns: PRIVATE }),
    );
    await using server = await serverWith([connection]);
    assertStringIncludes(
      await refusedTool(server, connection, "select * from contacts", [
        "ada@example.com",
      ]),
      'the view "contacts" reads a private column',
    );
    assertEquals(
      (await read(server, connection, "select id, name from customers")).rows,
      [[1, "Ada"]],
    );
  },
);

Deno.test(
  "postgres: a materialized view filled through a function, or a view calling a SECURITY DEFINER one, that reads a private column is withheld",
  needs("postgres"),
  async () => {
    await using fixture = await openPostgresDatabase();
    for (
      const sql of [
        "create table shop.customers (id int primary key, name text, email text)",
        "insert into shop.customers values (1, 'Ada', 'ada@example.com')",
        "create function shop.contact_of(i int) returns text language sql stable as 'select email from shop.customers where id = i'",
        "create materialized view shop.contacts as select id, shop.contact_of(id) as contact from shop.customers",
        "create function shop.contact_def(i int) returns text language sql stable security definer as 'select email from shop.customers where id = i'",
        "create view shop.contacts_def as select id, shop.contact_def(id) as contact from shop.customers",
        "create view shop.contacts_inv as select id, shop.contact_of(id) as contact from shop.customers",
      ]
    ) await fixture.admin(sql);
    const connection = await harden(
      savedConnection(fixture, "Shop", { privateColumns: PRIVATE }),
    );
    await using server = await serverWith([connection]);
    assertStringIncludes(
      await refusedTool(server, connection, "select * from shop.contacts", [
        "ada@example.com",
      ]),
      'the view "contacts" reads a private column',
    );
    await refusedTool(server, connection, "select * from shop.contacts_def", [
      "ada@example.com",
    ]);
    // A view calling an invoker's function: the function is refused as it runs.
    await refusedTool(server, connection, "select * from shop.contacts_inv", [
      "ada@example.com",
    ]);
  },
);
