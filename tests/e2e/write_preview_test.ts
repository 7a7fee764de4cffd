/**
 * Write previews on real PostgreSQL, MariaDB and SQLite (docs/security.md
 * "Write previews"): every approval of a write says what it changes,
 * measured by a dry run that leaves no trace; a failing write asks no one;
 * MariaDB DDL gets no dry run; and a write whose rows changed since the
 * user approved is denied with nothing written.
 */

import type { Client } from "@modelcontextprotocol/client";
import postgres from "postgres";
import { assert, assertEquals, assertMatch } from "@std/assert";
import type { SavedConnection } from "../../lib/app/connections.ts";
import type { Engine } from "../../lib/db/types.ts";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { ENGINES, type Fixture, needs, openFixture } from "../_db.ts";
import { changingDialog, recordingDialog } from "../_dialog.ts";
import { sdkClient } from "../_sdk.ts";
import type { TestServer } from "../_server.ts";
import { callTool, toolErrorText } from "../_tool_call.ts";

interface Setup extends AsyncDisposable {
  fixture: Fixture;
  server: TestServer;
  saved: SavedConnection;
  /** A table name as the engine's tools reach it. */
  table(name: string): string;
}

async function setup(
  engine: Engine,
  settings: JsonObject | ((fixture: Fixture) => JsonObject),
  policy: Partial<SavedConnection> = {},
): Promise<Setup> {
  const fixture = await openFixture(engine);
  const saved = savedConnection(fixture, "Shop", {
    externalAccess: "readWrite",
    safeMode: "alert",
    ...policy,
  });
  const server = await serverWith(
    [saved],
    typeof settings === "function" ? settings(fixture) : settings,
  );
  return {
    fixture,
    server,
    saved,
    table: (name) => engine === "postgres" ? `${fixture.schema}.${name}` : name,
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await fixture[Symbol.asyncDispose]();
    },
  };
}

async function names(t: Setup): Promise<string[]> {
  const rows = await t.fixture.admin(
    `select name from ${t.table("authors")} order by id`,
  ) as { name: string }[];
  return rows.map((row) => row.name);
}

function auth(token: string) {
  return { authorization: `Bearer ${token}` };
}

for (const engine of ENGINES) {
  Deno.test(
    `${engine}: the host dialog is shown an UPDATE's exact preview, and a denied one leaves no trace`,
    needs(engine),
    async () => {
      await using dialog = await recordingDialog(1);
      await using t = await setup(engine, { hostDialog: dialog.setting });
      const token = await t.server.mint("readWrite");
      const authors = t.table("authors");
      const answer = await callTool(t.server, "execute_query", {
        connection_id: t.saved.id,
        query: `UPDATE ${authors} SET name = ${
          engine === "mysql" ? "CONCAT(name, '!')" : "name || '!'"
        } WHERE id <= 2`,
      }, auth(token.plaintext));
      assertMatch(toolErrorText(answer), /^denied: the user did not approve/);
      const [asked] = await dialog.asked();
      assert(asked !== undefined);
      const preview = asked.preview as JsonObject;
      assertEquals(preview.rows_affected, 2);
      assertEquals(preview.table, authors);
      assertEquals(preview.exact, true);
      if (engine === "mysql") {
        // MariaDB returns no rows from an UPDATE: the count alone.
        assertEquals(preview.rows, []);
      } else {
        assertEquals(preview.columns, ["id", "name", "born"]);
        assertEquals(
          (preview.rows as unknown[][]).map((row) => row[1]).sort(),
          ["Ada!", "Alan!"],
        );
      }
      assertEquals(
        asked.previewLine,
        `Changes 2 rows of ${authors}${
          engine === "mysql"
            // Said so: the rows of an UPDATE MariaDB cannot return are not bound.
            ? " (MariaDB's UPDATE returns no rows, so only its count is bound)"
            : ""
        }`,
      );
      // The dry run was rolled back, and the denied write never ran.
      assertEquals(await names(t), ["Ada", "Alan"]);
    },
  );

  Deno.test(
    `${engine}: a DELETE's preview holds the rows it would remove, and the dry run leaves no lock`,
    needs(engine),
    async () => {
      await using dialog = await recordingDialog(1);
      await using t = await setup(engine, { hostDialog: dialog.setting });
      const token = await t.server.mint("readWrite");
      const books = t.table("books");
      const answer = await callTool(t.server, "execute_query", {
        connection_id: t.saved.id,
        query: `DELETE FROM ${books} WHERE id = 1`,
      }, auth(token.plaintext));
      assertMatch(toolErrorText(answer), /^denied: /);
      const preview = (await dialog.asked())[0]!.preview as JsonObject;
      assertEquals(preview.rows_affected, 1);
      assertEquals(preview.exact, true);
      // MariaDB too: DELETE … RETURNING (its UPDATE has no RETURNING).
      const rows = preview.rows as unknown[][];
      assertEquals(rows.length, 1);
      assertEquals(rows[0]![2], "Notes");
      // Rolled back before anyone was asked: another session deletes the
      // same row at once (a lock left behind would make it wait).
      await t.fixture.admin(`delete from ${books} where id = 1`);
      const [row] = await t.fixture.admin(
        `select count(*) as n from ${books}`,
      ) as { n: unknown }[];
      assertEquals(Number(row?.n), 1);
    },
  );

  Deno.test(
    `${engine}: an approved write runs as previewed, and its preview is in the form's description`,
    needs(engine),
    async () => {
      await using dialog = await recordingDialog(0);
      await using t = await setup(engine, { hostDialog: dialog.setting });
      const token = await t.server.mint("fullAccess");
      const forms: JsonObject[] = [];
      const client: Client = await sdkClient(t.server.url, token.plaintext, {
        name: "approver",
        elicit: (params) => {
          forms.push(params);
          return { action: "accept", content: { approved: true } };
        },
      });
      try {
        const query = `INSERT INTO ${
          t.table("authors")
        } (name) VALUES ('Grace')`;
        const result = await client.callTool({
          name: "execute_query",
          arguments: { connection_id: t.saved.id, query },
        });
        assertEquals(result.isError, undefined, JSON.stringify(result));
        assertEquals((result.structuredContent as JsonObject).rows_affected, 1);
        const schema = forms[0]!.requestedSchema as {
          properties: { approved: { description: string } };
        };
        assertEquals(
          schema.properties.approved.description,
          `Changes 1 row of ${t.table("authors")}\n\n${query}`,
        );
        assertEquals(await names(t), ["Ada", "Alan", "Grace"]);
        // The activity log keeps the previewed count beside the one that ran.
        await t.server.server.activity.flush();
        const logged = await t.server.server.activity.recent(50);
        // The retry that carried the answer: the call's last entry.
        const call = logged.filter((row) => row.method === "tools/call")
          .sort((a, b) => b.id - a.id)[0];
        // …and who approved it, when.
        assertMatch(
          call?.detail ?? "",
          /^approved by you at \d{4}-\d{2}-\d{2}T[\d:.]+Z; call=[0-9a-f]+; previewed 1 row, ran 1 row$/,
        );
      } finally {
        await client.close();
      }
    },
  );

  Deno.test(
    `${engine}: rows changed between the preview and the approval: denied, nothing written`,
    needs(engine),
    async () => {
      await using t = await setup(engine, { hostDialog: "deny" });
      const token = await t.server.mint("fullAccess");
      const authors = t.table("authors");
      const client: Client = await sdkClient(t.server.url, token.plaintext, {
        name: "approver",
        elicit: async () => {
          // Another session adds a matching row while the form is open.
          await t.fixture.admin(
            `insert into ${authors} (name) values ('Ann')`,
          );
          return { action: "accept", content: { approved: true } };
        },
      });
      try {
        const result = await client.callTool({
          name: "execute_query",
          arguments: {
            connection_id: t.saved.id,
            query:
              `UPDATE ${authors} SET name = upper(name) WHERE name LIKE 'A%'`,
          },
        });
        assertEquals(result.isError, true, JSON.stringify(result));
        assertEquals(
          (result.content as { text: string }[])[0]!.text,
          "denied: the statement would now change 3 rows, not the 2 that were approved; nothing was written; ask again",
        );
        assertEquals(await names(t), ["Ada", "Alan", "Ann"]);
        await t.server.server.activity.flush();
        const logged = await t.server.server.activity.recent(50);
        // The retry that carried the answer: the call's last entry.
        const call = logged.filter((row) => row.method === "tools/call")
          .sort((a, b) => b.id - a.id)[0];
        assertEquals(call?.outcome, "denied");
      } finally {
        await client.close();
      }
    },
  );

  Deno.test(
    `${engine}: a write that fails in its dry run is answered without asking anyone`,
    needs(engine),
    async () => {
      await using dialog = await recordingDialog(0);
      await using t = await setup(engine, { hostDialog: dialog.setting });
      const token = await t.server.mint("readWrite");
      const answer = await callTool(t.server, "execute_query", {
        connection_id: t.saved.id,
        query: `UPDATE ${t.table("authors")} SET no_such_column = 1`,
      }, auth(token.plaintext));
      assertMatch(toolErrorText(answer), /^query_failed: /);
      assertEquals(await dialog.asked(), []);
    },
  );

  Deno.test(
    `${engine}: DROP TABLE and TRUNCATE are previewed with each table's row count`,
    needs(engine),
    async () => {
      await using dialog = await recordingDialog(1);
      await using t = await setup(engine, { hostDialog: dialog.setting });
      const token = await t.server.mint("fullAccess");
      const books = t.table("books");
      for (
        const query of [
          `DROP TABLE ${books}`,
          engine === "sqlite"
            ? `DELETE FROM ${books}`
            : `TRUNCATE TABLE ${books}`,
        ]
      ) {
        const tool = query.startsWith("DELETE")
          ? "execute_query"
          : "confirm_destructive_operation";
        const answer = await callTool(t.server, tool, {
          connection_id: t.saved.id,
          query,
        }, auth(token.plaintext));
        assertMatch(toolErrorText(answer), /^denied: /);
      }
      const asked = await dialog.asked();
      assertEquals(asked.length, 2);
      assertEquals((asked[0]!.preview as JsonObject).tables, [
        { table: books, rows: 2 },
      ]);
      assertEquals(asked[0]!.previewLine, `Removes ${books} with 2 rows`);
      if (engine === "sqlite") {
        // SQLite has no TRUNCATE: a DELETE without WHERE, counted exactly.
        assertEquals((asked[1]!.preview as JsonObject).rows_affected, 2);
      } else {
        assertEquals((asked[1]!.preview as JsonObject).tables, [
          { table: books, rows: 2 },
        ]);
      }
      const [row] = await t.fixture.admin(
        `select count(*) as n from ${books}`,
      ) as { n: unknown }[];
      assertEquals(Number(row?.n), 2);
    },
  );
}

Deno.test(
  "mysql: DDL gets no dry run (MariaDB commits it at once): the preview says so",
  needs("mysql"),
  async () => {
    await using dialog = await recordingDialog(1);
    await using t = await setup("mysql", { hostDialog: dialog.setting });
    const token = await t.server.mint("readWrite");
    const answer = await callTool(t.server, "execute_query", {
      connection_id: t.saved.id,
      query: "ALTER TABLE authors ADD COLUMN nickname varchar(20)",
    }, auth(token.plaintext));
    assertMatch(toolErrorText(answer), /^denied: /);
    const [asked] = await dialog.asked();
    const preview = asked!.preview as JsonObject;
    assertEquals(preview.exact, false);
    assertEquals(preview.rows_affected, null);
    assertMatch(String(preview.note), /commits this statement at once/);
    const columns = await t.fixture.admin(
      "select column_name from information_schema.columns where table_schema = database() and table_name = 'authors' and column_name = 'nickname'",
    );
    assertEquals(columns, []);
  },
);

Deno.test(
  "postgres: writePreview estimate asks with the planner's estimate, and off asks with none",
  needs("postgres"),
  async () => {
    for (const writePreview of ["estimate", "off"] as const) {
      await using dialog = await recordingDialog(1);
      await using t = await setup("postgres", { hostDialog: dialog.setting }, {
        writePreview,
      });
      const token = await t.server.mint("readWrite");
      await callTool(t.server, "execute_query", {
        connection_id: t.saved.id,
        query: `DELETE FROM ${t.table("books")} WHERE price > 0`,
      }, auth(token.plaintext));
      const [asked] = await dialog.asked();
      if (writePreview === "off") {
        assertEquals(asked!.preview, undefined);
      } else {
        const preview = asked!.preview as JsonObject;
        assertEquals(preview.exact, false);
        assertEquals(typeof preview.rows_affected, "number");
        // Why there is no dry run, and the estimate, in one line.
        assertMatch(
          String(asked!.previewLine),
          /^No dry run of .*books.*: this connection's write preview is set to the estimate — the estimate: ~[\d,]+ rows?$/,
        );
      }
    }
  },
);

Deno.test(
  "postgres: a statement that refuses a transaction (VACUUM) is asked about without a dry run",
  needs("postgres"),
  async () => {
    await using dialog = await recordingDialog(1);
    await using t = await setup("postgres", { hostDialog: dialog.setting });
    const token = await t.server.mint("readWrite");
    const answer = await callTool(t.server, "execute_query", {
      connection_id: t.saved.id,
      query: `VACUUM ${t.table("books")}`,
    }, auth(token.plaintext));
    assertMatch(toolErrorText(answer), /^denied: the user did not approve/);
    const [asked] = await dialog.asked();
    const preview = asked!.preview as JsonObject;
    assertEquals(preview.exact, false);
    assertEquals(preview.rows_affected, null);
    assertMatch(String(preview.note), /cannot run inside a transaction/);
  },
);

Deno.test(
  "postgres: a dry run stuck behind a lock ends at previewTimeoutSeconds, asking no one",
  needs("postgres"),
  async () => {
    await using dialog = await recordingDialog(0);
    await using t = await setup("postgres", {
      hostDialog: dialog.setting,
      previewTimeoutSeconds: 1,
    });
    const token = await t.server.mint("readWrite");
    const books = t.table("books");
    // Another session holds the table until the preview gave up.
    const holder = postgres(t.fixture.url, { max: 1, onnotice: () => {} });
    const reserved = await holder.reserve();
    try {
      await reserved.unsafe(
        `begin; lock table ${books} in access exclusive mode`,
      )
        .simple();
      const answer = await callTool(t.server, "execute_query", {
        connection_id: t.saved.id,
        query: `UPDATE ${books} SET price = price + 1 WHERE id = 1`,
      }, auth(token.plaintext));
      assertEquals(
        toolErrorText(answer),
        "timeout: the write's preview did not finish within 1 s (previewTimeoutSeconds); nothing was written and no one was asked",
      );
      assertEquals(await dialog.asked(), []);
    } finally {
      await reserved.unsafe("rollback");
      reserved.release();
      await holder.end();
    }
  },
);

Deno.test(
  "postgres: an UPDATE of 50,000 rows is previewed with its exact count and five of its rows",
  needs("postgres"),
  async () => {
    await using dialog = await recordingDialog(1);
    await using t = await setup("postgres", { hostDialog: dialog.setting });
    const many = t.table("many");
    await t.fixture.admin(
      `create table ${many} as select g as id, 0 as v from generate_series(1, 50000) g`,
    );
    const token = await t.server.mint("readWrite");
    await callTool(t.server, "execute_query", {
      connection_id: t.saved.id,
      query: `UPDATE ${many} SET v = v + 1 -- every row`,
    }, auth(token.plaintext));
    const preview = (await dialog.asked())[0]!.preview as JsonObject;
    assertEquals(preview.rows_affected, 50_000);
    assertEquals(preview.columns, ["id", "v"]);
    assertEquals((preview.rows as unknown[][]).length, 5);
    const [row] = await t.fixture.admin(
      `select sum(v)::int as n from ${many}`,
    ) as { n: number }[];
    assertEquals(row?.n, 0);
  },
);

for (const engine of ENGINES) {
  Deno.test(
    `${engine}: rows changed while the host dialog asks: the write is rolled back before COMMIT, nothing written`,
    needs(engine),
    async () => {
      // The dialog adds a matching row as another session, then approves.
      await using t = await setup(engine, (fixture) => ({
        hostDialog: changingDialog(
          engine,
          fixture.url,
          `insert into ${
            engine === "postgres" ? `${fixture.schema}.` : ""
          }authors (name) values ('Ann')`,
        ),
      }));
      const token = await t.server.mint("readWrite");
      const answer = await callTool(t.server, "execute_query", {
        connection_id: t.saved.id,
        query: `UPDATE ${
          t.table("authors")
        } SET name = upper(name) WHERE name LIKE 'A%'`,
      }, auth(token.plaintext));
      assertEquals(
        toolErrorText(answer),
        `denied: the statement would now change 3 rows of ${
          t.table("authors")
        }, not the 2 rows of ${
          t.table("authors")
        } that were approved; nothing was written; ask again`,
      );
      assertEquals(await names(t), ["Ada", "Alan", "Ann"]);
    },
  );
}
