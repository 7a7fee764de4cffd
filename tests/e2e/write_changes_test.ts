/**
 * What a write's preview and hold compare (issue 32, docs/security.md "What
 * the hold compares"), on real PostgreSQL, MariaDB and SQLite: every table
 * the transaction changes — data-modifying CTEs, rules and triggers
 * included — with its count, the primary keys of the rows it changes, and
 * the approval saying when the row choice may differ from run to run. A
 * write whose tables, counts or rows differ from the approved preview is
 * rolled back before COMMIT. Each world lives in the fixture's own schema,
 * database or file.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import type { SavedConnection } from "../../lib/app/connections.ts";
import type { Engine } from "../../lib/db/types.ts";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { type Fixture, needs, openFixture } from "../_db.ts";
import { changingDialog, recordingDialog } from "../_dialog.ts";
import type { TestServer } from "../_server.ts";
import { callTool, toolErrorText } from "../_tool_call.ts";

interface World extends AsyncDisposable {
  engine: Engine;
  fixture: Fixture;
  server: TestServer;
  saved: SavedConnection;
  /** A table as statements name it (PostgreSQL: schema-qualified). */
  q(name: string): string;
  /** Run a statement as a readWrite client; the tool's answer. */
  // deno-lint-ignore no-explicit-any
  write(query: string): Promise<{ json: any }>;
  /** Admin SQL, outside dbport. */
  admin(sql: string): Promise<unknown[]>;
  count(table: string, where?: string): Promise<number>;
}

const TEXT: Record<Engine, string> = {
  postgres: "text",
  mysql: "varchar(100)",
  sqlite: "text",
};

/**
 * w (id 1..10, v 'a'), log (8 rows), cfg (pick 5, noisy false), and the
 * host dialog `dialog`: a recording one, or one that runs `sql` as another
 * session and approves.
 */
async function world(
  engine: Engine,
  dialog: JsonObject | string | ((fixture: Fixture) => JsonObject),
  more: string[] | ((fixture: Fixture) => string[]) = [],
  policy: Partial<SavedConnection> = {},
): Promise<World> {
  const fixture = await openFixture(engine);
  const extra = typeof more === "function" ? more(fixture) : more;
  const serial = engine === "postgres"
    ? "serial primary key"
    : engine === "mysql"
    ? "int auto_increment primary key"
    : "integer primary key";
  for (
    const sql of [
      `create table w (id int primary key, v ${TEXT[engine]})`,
      `insert into w (id, v) values ${
        Array.from({ length: 10 }, (_, i) => `(${i + 1}, 'a')`).join(", ")
      }`,
      `create table log (id ${serial}, m ${TEXT[engine]})`,
      `insert into log (m) values ${Array(8).fill("('x')").join(", ")}`,
      `create table cfg (pick int, noisy int)`,
      `insert into cfg (pick, noisy) values (5, 0)`,
      ...extra,
    ]
  ) await fixture.admin(sql);
  const saved = savedConnection(fixture, "Shop", {
    externalAccess: "readWrite",
    safeMode: "alert",
    ...policy,
  });
  const server = await serverWith([saved], {
    hostDialog: typeof dialog === "function" ? dialog(fixture) : dialog,
  });
  const token = await server.mint("readWrite");
  const q = (name: string) =>
    engine === "postgres" ? `${fixture.schema}.${name}` : name;
  return {
    engine,
    fixture,
    server,
    saved,
    q,
    write: (query) =>
      callTool(server, "execute_query", { connection_id: saved.id, query }, {
        authorization: `Bearer ${token.plaintext}`,
      }),
    admin: (sql) => fixture.admin(sql),
    async count(table, where = "true") {
      const [row] = await fixture.admin(
        `select count(*) as n from ${table} where ${
          engine === "postgres" ? where : where.replace("true", "1 = 1")
        }`,
      ) as Record<string, unknown>[];
      return Number(Object.values(row ?? {})[0]);
    },
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await fixture[Symbol.asyncDispose]();
    },
  };
}

/** A host dialog that runs `sql` on the fixture as another session, then approves. */
function changing(engine: Engine, sql: (fixture: Fixture) => string) {
  return (fixture: Fixture): JsonObject =>
    changingDialog(engine, fixture.url, sql(fixture));
}

/**
 * A world whose (denying) recording dialog was asked about `statement`:
 * the preview line and JSON it was shown.
 */
async function previewed(
  engine: Engine,
  statement: (t: World) => string,
  more: string[] | ((fixture: Fixture) => string[]) = [],
): Promise<World & { line: string; preview: JsonObject }> {
  const dialog = await recordingDialog(1);
  const t = await world(engine, dialog.setting, more).catch(async (error) => {
    await dialog[Symbol.asyncDispose]();
    throw error;
  });
  try {
    await t.write(statement(t));
    return {
      ...t,
      ...await shown(dialog),
      async [Symbol.asyncDispose]() {
        await t[Symbol.asyncDispose]();
        await dialog[Symbol.asyncDispose]();
      },
    };
  } catch (error) {
    await t[Symbol.asyncDispose]();
    await dialog[Symbol.asyncDispose]();
    throw error;
  }
}

/** The preview the (denying) recording dialog was shown. */
async function shown(
  dialog: { asked(): Promise<JsonObject[]> },
): Promise<{ line: string; preview: JsonObject }> {
  const [asked] = await dialog.asked();
  assert(asked !== undefined, "the dialog was never asked");
  return {
    line: String(asked.previewLine),
    preview: asked.preview as JsonObject,
  };
}

/** PostgreSQL names a table of the fixture's schema schema-qualified. */
function pgName(fixture: Fixture, table: string): string {
  return `${fixture.schema}.${table}`;
}

const DENIED_CHANGED = /^denied: the statement would now change /;

// --- Data-modifying CTEs (PostgreSQL) --------------------------------------

Deno.test(
  "postgres: issue 32 — a CTE's DELETE is previewed with every table it empties, and the denied write leaves log whole",
  needs("postgres"),
  async () => {
    await using dialog = await recordingDialog(1);
    await using t = await world("postgres", dialog.setting);
    const answer = await t.write(
      `WITH d AS (DELETE FROM ${t.q("log")} RETURNING 1) UPDATE ${
        t.q("w")
      } SET v = 'cte' WHERE id = 1`,
    );
    assertMatch(toolErrorText(answer), /^denied: the user did not approve/);
    const { line, preview } = await shown(dialog);
    assertMatch(
      line,
      new RegExp(
        `^Changes 8 rows of ${pgName(t.fixture, "log")} and 1 row of ${
          pgName(t.fixture, "w")
        } \\(`,
      ),
    );
    assertEquals(preview.changes, [
      { table: pgName(t.fixture, "log"), rows: 8 },
      { table: pgName(t.fixture, "w"), rows: 1 },
    ]);
    assertEquals(await t.count("log"), 8);
  },
);

Deno.test(
  "postgres: issue 32 — an approved CTE DELETE whose other table changed before COMMIT is rolled back, log kept",
  needs("postgres"),
  async () => {
    await using t = await world(
      "postgres",
      changing(
        "postgres",
        (f) => `insert into ${f.schema}.log (m) values ('late')`,
      ),
    );
    const answer = await t.write(
      `WITH d AS (DELETE FROM ${t.q("log")} RETURNING 1) UPDATE ${
        t.q("w")
      } SET v = 'cte' WHERE id = 1`,
    );
    assertEquals(
      toolErrorText(answer),
      `denied: the statement would now change 9 rows of ${
        pgName(t.fixture, "log")
      } and 1 row of ${pgName(t.fixture, "w")}, not the 8 rows of ${
        pgName(t.fixture, "log")
      } and 1 row of ${
        pgName(t.fixture, "w")
      } that were approved; nothing was written; ask again`,
    );
    assertEquals(await t.count("log"), 9);
    assertEquals(await t.count("w", "v = 'cte'"), 0);
  },
);

Deno.test(
  "postgres: several data-modifying CTEs are each counted on their table",
  needs("postgres"),
  async () => {
    await using t = await previewed(
      "postgres",
      (t) =>
        `WITH a AS (INSERT INTO ${t.q("log")} (m) VALUES ('y') RETURNING 1),
            b AS (UPDATE ${t.q("w")} SET v = 'b' WHERE id <= 3 RETURNING 1)
       DELETE FROM ${t.q("w")} WHERE id = 10`,
    );
    const { preview } = t;
    assertEquals(preview.changes, [
      { table: pgName(t.fixture, "log"), rows: 1 },
      { table: pgName(t.fixture, "w"), rows: 4 },
    ]);
    assertEquals(await t.count("w"), 10);
    assertEquals(await t.count("log"), 8);
  },
);

Deno.test(
  "postgres: an approved CTE write whose tables did not change commits both",
  needs("postgres"),
  async () => {
    await using dialog = await recordingDialog(0);
    await using t = await world("postgres", dialog.setting);
    const answer = await t.write(
      `WITH a AS (INSERT INTO ${
        t.q("log")
      } (m) VALUES ('cte') RETURNING 1) UPDATE ${
        t.q("w")
      } SET v = 'c' WHERE id IN (1, 2)`,
    );
    assertEquals(
      answer.json.result?.isError,
      undefined,
      JSON.stringify(answer.json),
    );
    const result = (answer.json.result as JsonObject)
      .structuredContent as JsonObject;
    assertEquals(result.rows_affected, 2);
    assertEquals(await t.count("log", "m = 'cte'"), 1);
    assertEquals(await t.count("w", "v = 'c'"), 2);
  },
);

Deno.test(
  "postgres: a CTE that changes a primary key is counted on both tables and said to be bound by counts",
  needs("postgres"),
  async () => {
    await using t = await previewed(
      "postgres",
      (t) =>
        `WITH u AS (UPDATE ${
          t.q("w")
        } SET id = id + 100 WHERE id = 1 RETURNING 1) DELETE FROM ${
          t.q("log")
        } WHERE id = 1`,
    );
    const { line, preview } = t;
    assertEquals(preview.keys_bound, false);
    assertMatch(line, /data-modifying WITH returns no keys/);
    assertEquals(preview.changes, [
      { table: pgName(t.fixture, "log"), rows: 1 },
      { table: pgName(t.fixture, "w"), rows: 1 },
    ]);
  },
);

Deno.test(
  "postgres: a rule's DO ALSO write gets no dry run (a rule turns the write into other statements), and nothing ran",
  needs("postgres"),
  async () => {
    await using t = await previewed(
      "postgres",
      (t) => `UPDATE ${t.q("w")} SET v = 'r' WHERE id <= 2`,
      [
        `create rule w_log as on update to w do also insert into log (m) values (new.v)`,
      ],
    );
    assertMatch(
      t.line,
      new RegExp(
        `^No dry run of ${
          pgName(t.fixture, "w").replace(".", "\\.")
        }: .*has rules that turn a write into other statements`,
      ),
    );
    assertEquals(await t.count("log"), 8);
  },
);

Deno.test(
  "postgres: a table whose trigger runs plpgsql gets no dry run, the approval names the function, and the trigger ran nothing",
  needs("postgres"),
  async () => {
    await using t = await previewed(
      "postgres",
      (t) => `UPDATE ${t.q("w")} SET v = 't' WHERE id <= 3`,
      loggingTrigger("postgres"),
    );
    assertMatch(t.line, /^No dry run of .*w_logged\(\) is written in plpgsql/);
    assertEquals(await t.count("log"), 8);
    assertEquals(await t.count("w", "v = 't'"), 0);
  },
);

// --- Trigger writes to other tables ----------------------------------------

/** A trigger on w that logs each updated row when cfg.noisy is 0. */
function loggingTrigger(engine: Engine) {
  return (fixture: Fixture) => triggerSql(engine, fixture.schema);
}

function triggerSql(engine: Engine, schema: string): string[] {
  if (engine === "postgres") {
    // The trigger runs with the writer's search_path: its tables by schema.
    return [
      `create function w_logged() returns trigger language plpgsql as $$
       begin
         if (select noisy from ${schema}.cfg) = 0 then
           insert into ${schema}.log (m) values (new.v);
         end if;
         return new;
       end $$`,
      `create trigger w_logged after update on w for each row execute function w_logged()`,
    ];
  }
  if (engine === "mysql") {
    return [
      `create trigger w_logged after update on w for each row
       insert into log (m) select new.v from cfg where noisy = 0`,
    ];
  }
  return [
    `create trigger w_logged after update on w for each row
     begin insert into log (m) select new.v from cfg where noisy = 0; end`,
  ];
}

// PostgreSQL trigger functions are never SQL (they return `trigger`), so a
// table with triggers gets no dry run there (above); SQLite's are SQL.
{
  const engine = "sqlite";
  const other = () => "other tables (by its triggers or foreign keys)";

  Deno.test(
    `${engine}: a trigger's writes to another table are in the preview`,
    needs(engine),
    async () => {
      await using t = await previewed(
        engine,
        (t) => `UPDATE ${t.q("w")} SET v = 't' WHERE id <= 3`,
        loggingTrigger(engine),
      );
      assertEquals(t.line, `Changes 3 rows of w and 3 rows of ${other()}`);
      assertEquals(await t.count("log"), 8);
    },
  );

  Deno.test(
    `${engine}: an approved write whose trigger now writes other rows is rolled back`,
    needs(engine),
    async () => {
      // The preview logs nothing (noisy = 1); by the approval it logs each row.
      await using t = await world(
        engine,
        changing(engine, () => `update cfg set noisy = 0`),
        (f) => [...triggerSql(engine, f.schema), `update cfg set noisy = 1`],
      );
      const answer = await t.write(
        `UPDATE ${t.q("w")} SET v = 't' WHERE id <= 3`,
      );
      const text = toolErrorText(answer);
      assertMatch(text, DENIED_CHANGED);
      assertMatch(
        text,
        /3 rows of .*, not the 3 rows of .* that were approved/,
      );
      assertEquals(await t.count("w", "v = 't'"), 0);
      assertEquals(await t.count("log"), 8);
    },
  );
}

Deno.test(
  "mysql: a table with triggers gets no dry run, and the approval says why",
  needs("mysql"),
  async () => {
    await using t = await previewed(
      "mysql",
      () => `UPDATE w SET v = 't' WHERE id <= 3`,
      loggingTrigger("mysql"),
    );
    const { line, preview } = t;
    assertEquals(preview.exact, false);
    assertMatch(line, /no dry run: w has triggers, and MariaDB does not count/);
    assertEquals(await t.count("log"), 8);
    assertEquals(await t.count("w", "v = 't'"), 0);
  },
);

Deno.test(
  "mysql: a DELETE that cascades to another table gets no dry run, and the approval says why",
  needs("mysql"),
  async () => {
    await using t = await previewed(
      "mysql",
      () => `DELETE FROM w WHERE id = 1`,
      [
        `create table child (id int primary key, w_id int,
         foreign key (w_id) references w(id) on delete cascade)`,
        `insert into child values (1, 1), (2, 1)`,
      ],
    );
    const { line, preview } = t;
    assertEquals(preview.exact, false);
    assertMatch(line, /no dry run: foreign keys of other tables cascade/);
    assertEquals(await t.count("child"), 2);
  },
);

Deno.test(
  "mysql: a multi-table UPDATE gets no dry run, and the approval says why",
  needs("mysql"),
  async () => {
    await using t = await previewed(
      "mysql",
      () => `UPDATE w JOIN log ON log.id = w.id SET w.v = 'j', log.m = 'j'`,
    );
    const { line, preview } = t;
    assertEquals(preview.exact, false);
    assertMatch(line, /no dry run: it changes several tables at once/);
  },
);

// --- Rows bound by their keys ----------------------------------------------

for (const engine of ["postgres", "mysql", "sqlite"] as const) {
  // MariaDB's UPDATE returns no rows: its DELETE is bound by keys.
  const verb = engine === "mysql" ? "DELETE FROM w" : "UPDATE w SET v = 'x'";
  Deno.test(
    `${engine}: issue 32 — an approved write that would now change another row than previewed is rolled back`,
    needs(engine),
    async () => {
      await using t = await world(
        engine,
        changing(
          engine,
          (f) =>
            `update ${
              engine === "postgres" ? `${f.schema}.` : ""
            }cfg set pick = 6`,
        ),
      );
      const statement = verb.replace("w", t.q("w")) +
        ` WHERE id = (SELECT pick FROM ${t.q("cfg")})`;
      const answer = await t.write(statement);
      assertMatch(
        toolErrorText(answer),
        /^denied: the statement would now change other rows of .*w than the ones that were approved \(their primary keys differ\); nothing was written; ask again$/,
      );
      assertEquals(await t.count("w", "v = 'x'"), 0);
      assertEquals(await t.count("w"), 10);
    },
  );
}

Deno.test(
  "postgres: issue 32 — a random() row choice is said in the approval, and its preview binds the row's key",
  needs("postgres"),
  async () => {
    await using t = await previewed(
      "postgres",
      (t) =>
        `UPDATE ${
          t.q("w")
        } SET v = 'x' WHERE id = (SELECT 1 + floor(random()*10)::int)`,
    );
    const { line, preview } = t;
    assertEquals(
      line,
      `Changes 1 row of ${
        pgName(t.fixture, "w")
      } (which rows it changes may differ from run to run (random()))`,
    );
    assertEquals(preview.keys_bound, true);
    assertEquals(
      preview.row_choice,
      "which rows it changes may differ from run to run (random())",
    );
  },
);

Deno.test(
  "postgres: the random() UPDATE approved ten times commits only when it hits the previewed row",
  needs("postgres"),
  async () => {
    await using dialog = await recordingDialog(0);
    await using t = await world("postgres", dialog.setting);
    let committed = 0;
    let refused = 0;
    for (let i = 0; i < 10; i++) {
      await t.admin(`update w set v = 'a'`);
      const answer = await t.write(
        `UPDATE ${
          t.q("w")
        } SET v = 'x' WHERE id = (SELECT 1 + floor(random()*10)::int)`,
      );
      if (answer.json.result?.isError === true) {
        assertMatch(toolErrorText(answer), /primary keys differ/);
        assertEquals(await t.count("w", "v = 'x'"), 0);
        refused++;
      } else {
        assertEquals(await t.count("w", "v = 'x'"), 1);
        committed++;
      }
    }
    assertEquals(committed + refused, 10);
    // One chance in ten each time: ten commits in a row is 1 in 10^10.
    assert(refused > 0, "every run hit the previewed row");
  },
);

for (
  const [engine, statement, note] of [
    ["mysql", "DELETE FROM w WHERE id = FLOOR(1 + RAND() * 10)", "rand"],
    [
      "sqlite",
      "UPDATE w SET v = 'x' WHERE id = abs(random()) % 10 + 1",
      "random",
    ],
    [
      "sqlite",
      "DELETE FROM w WHERE id IN (SELECT id FROM w LIMIT 2)",
      "LIMIT without ORDER BY",
    ],
    [
      "mysql",
      "DELETE FROM w WHERE id < UNIX_TIMESTAMP(NOW()) LIMIT 2",
      "unix_timestamp, now, LIMIT without ORDER BY",
    ],
  ] as const
) {
  Deno.test(
    `${engine}: the approval says a row choice by ${note} may differ from run to run`,
    needs(engine),
    async () => {
      await using t = await previewed(engine, () => statement);
      const { line } = t;
      assertMatch(
        line,
        new RegExp(
          `\\(which rows it changes may differ from run to run \\(${
            note.replace(/[()]/g, "\\$&")
          }\\)`,
        ),
      );
      assertEquals(await t.count("w"), 10);
    },
  );
}

// --- As an outsider would ---------------------------------------------------

Deno.test(
  "postgres: a composite primary key binds the rows; another row under the same count is refused",
  needs("postgres"),
  async () => {
    await using t = await world(
      "postgres",
      changing("postgres", (f) => `update ${f.schema}.cfg set pick = 2`),
      [
        `create table pair (a int, b int, v text, primary key (a, b))`,
        `insert into pair values (1, 1, 'a'), (1, 2, 'a'), (2, 1, 'a')`,
        `update cfg set pick = 1`,
      ],
    );
    const answer = await t.write(
      `UPDATE ${t.q("pair")} SET v = 'x' WHERE b = (SELECT pick FROM ${
        t.q("cfg")
      }) AND a = 1`,
    );
    assertMatch(toolErrorText(answer), /primary keys differ/);
    assertEquals(await t.count("pair", "v = 'x'"), 0);
  },
);

Deno.test(
  "postgres: an UPDATE that changes the primary key is bound to the keys it leaves",
  needs("postgres"),
  async () => {
    await using t = await world(
      "postgres",
      changing("postgres", (f) => `update ${f.schema}.cfg set pick = 6`),
    );
    const answer = await t.write(
      `UPDATE ${t.q("w")} SET id = id + 100 WHERE id = (SELECT pick FROM ${
        t.q("cfg")
      })`,
    );
    assertMatch(toolErrorText(answer), /primary keys differ/);
    assertEquals(await t.count("w", "id > 100"), 0);
  },
);

for (const engine of ["postgres", "sqlite"] as const) {
  Deno.test(
    `${engine}: a table without a primary key is held to its count, and the approval says so`,
    needs(engine),
    async () => {
      await using t = await previewed(
        engine,
        (t) => `DELETE FROM ${t.q("bare")} WHERE n < 3`,
        [
          `create table bare (n int)`,
          `insert into bare values (1), (2), (3)`,
        ],
      );
      const { line, preview } = t;
      assertEquals(preview.keys_bound, false);
      assertMatch(
        line,
        /^Changes 2 rows of .*bare \(the table has no primary key, so only its counts are bound\)$/,
      );
      assertEquals(await t.count("bare"), 3);
    },
  );
}

Deno.test(
  "postgres: past 10,000 changed rows the approval says only the counts are bound",
  needs("postgres"),
  async () => {
    await using t = await previewed(
      "postgres",
      (t) => `UPDATE ${t.q("big")} SET v = 1 WHERE id > 0`,
      [
        `create table big (id int primary key, v int)`,
        `insert into big select g, 0 from generate_series(1, 10001) g`,
      ],
    );
    const { line, preview } = t;
    assertEquals(
      line,
      `Changes 10,001 rows of ${
        pgName(t.fixture, "big")
      } (past 10,000 rows only the counts are bound)`,
    );
    assertEquals(preview.keys_bound, false);
  },
);

Deno.test(
  "postgres: exactly 10,000 changed rows are still bound by their keys",
  needs("postgres"),
  async () => {
    await using t = await previewed(
      "postgres",
      (t) => `UPDATE ${t.q("big")} SET v = 1 WHERE id > 1`,
      [
        `create table big (id int primary key, v int)`,
        `insert into big select g, 0 from generate_series(1, 10001) g`,
      ],
    );
    const { line, preview } = t;
    assertEquals(line, `Changes 10,000 rows of ${pgName(t.fixture, "big")}`);
    assertEquals(preview.keys_bound, true);
  },
);

Deno.test(
  "postgres: INSERT … ON CONFLICT DO UPDATE says its updated rows are bound by count",
  needs("postgres"),
  async () => {
    await using t = await previewed(
      "postgres",
      (t) =>
        `INSERT INTO ${
          t.q("w")
        } (id, v) VALUES (1, 'u'), (11, 'n') ON CONFLICT (id) DO UPDATE SET v = excluded.v`,
    );
    const { line } = t;
    assertEquals(
      line,
      `Changes 2 rows of ${
        pgName(t.fixture, "w")
      } (the existing rows an upsert or REPLACE changes are bound by their count only)`,
    );
  },
);

Deno.test(
  "postgres: MERGE is counted per table, and an approved MERGE whose source grew is rolled back",
  needs("postgres"),
  async () => {
    await using t = await world(
      "postgres",
      changing(
        "postgres",
        (f) => `insert into ${f.schema}.src values (3, 'm')`,
      ),
      [
        `create table src (id int, v text)`,
        `insert into src values (1, 'm'), (20, 'm')`,
      ],
    );
    const answer = await t.write(
      `MERGE INTO ${t.q("w")} t USING ${t.q("src")} s ON t.id = s.id
       WHEN MATCHED THEN UPDATE SET v = s.v
       WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)`,
    );
    assertEquals(
      toolErrorText(answer),
      `denied: the statement would now change 3 rows of ${
        pgName(t.fixture, "w")
      }, not the 2 rows of ${
        pgName(t.fixture, "w")
      } that were approved; nothing was written; ask again`,
    );
    assertEquals(await t.count("w", "v = 'm'"), 0);
  },
);

Deno.test(
  "mysql: REPLACE says its replaced rows are bound by count",
  needs("mysql"),
  async () => {
    await using t = await previewed(
      "mysql",
      () => `REPLACE INTO w (id, v) VALUES (1, 'r')`,
    );
    const { line, preview } = t;
    assertEquals(preview.exact, true);
    assertMatch(
      line,
      /the existing rows an upsert or REPLACE changes are bound by their count only/,
    );
    assertEquals(await t.count("w", "v = 'r'"), 0);
  },
);

for (const engine of ["postgres", "sqlite"] as const) {
  Deno.test(
    `${engine}: an UPDATE that sets its key from random() is held to its count, not refused at every approval`,
    needs(engine),
    async () => {
      await using dialog = await recordingDialog(0);
      await using t = await world(engine, dialog.setting);
      const answer = await t.write(
        `UPDATE ${t.q("w")} SET id = 100 + ${
          engine === "postgres"
            ? "(random() * 1000)::int"
            : "abs(random()) % 1000"
        } WHERE id = 1`,
      );
      assertEquals(
        answer.json.result?.isError,
        undefined,
        JSON.stringify(answer.json),
      );
      assertEquals(await t.count("w", "id >= 100"), 1);
    },
  );
}

Deno.test(
  "mysql: a write through a view gets no dry run (its base table's triggers would go uncounted)",
  needs("mysql"),
  async () => {
    await using t = await previewed(
      "mysql",
      () => `UPDATE wv SET v = 't' WHERE id <= 3`,
      (f) => [
        ...loggingTrigger("mysql")(f),
        `create view wv as select id, v from w`,
      ],
    );
    assertEquals(t.preview.exact, false);
    assertMatch(t.line, /no dry run: wv is a view/);
    assertEquals(await t.count("log"), 8);
  },
);

Deno.test(
  "postgres: a WITH … UPDATE run without a preview answers its own count, not 0",
  needs("postgres"),
  async () => {
    await using t = await world("postgres", "deny", [], { safeMode: "silent" });
    const answer = await t.write(
      `WITH d AS (DELETE FROM ${t.q("log")} WHERE id <= 2 RETURNING 1) UPDATE ${
        t.q("w")
      } SET v = 'n' WHERE id IN (1, 2, 3)`,
    );
    const result = answer.json.result.structuredContent as JsonObject;
    assertEquals(result.rows_affected, 3);
    assertEquals(await t.count("log"), 6);
  },
);
