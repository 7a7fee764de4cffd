/**
 * Statements the engines' own regression suites showed refused for no
 * reason (issue 32), on the real engines: PostgreSQL `U&'…' UESCAPE '!'`
 * literals read; MariaDB `SELECT 1; # comment` is one read; MariaDB and
 * SQLite `CREATE PROCEDURE|FUNCTION|TRIGGER|EVENT … BEGIN … END` is one
 * write that asks for approval (and a statement after its END still counts).
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import type { Engine } from "../../lib/db/types.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture } from "../_db.ts";
import { recordingDialog } from "../_dialog.ts";
import { sdkClient } from "../_sdk.ts";

function textOf(result: unknown): string {
  const content = (result as { content: { text: string }[] }).content;
  return content[0]?.text ?? "";
}

async function setup(engine: Engine, level: "readOnly" | "readWrite") {
  const dialog = await recordingDialog(0);
  const fixture = await openFixture(engine);
  const saved = savedConnection(fixture, "Shop", {
    externalAccess: "readWrite",
    safeMode: "alert",
  });
  const server = await serverWith([saved], { hostDialog: dialog.setting });
  const token = await server.mint(level);
  const client = await sdkClient(server.url, token.plaintext);
  const run = async (query: string) =>
    textOf(
      await client.callTool({
        name: "execute_query",
        arguments: { connection_id: saved.id, query },
      }),
    );
  return {
    fixture,
    dialog,
    run,
    async [Symbol.asyncDispose]() {
      await client.close();
      await server[Symbol.asyncDispose]();
      await fixture[Symbol.asyncDispose]();
      await dialog[Symbol.asyncDispose]();
    },
  };
}

Deno.test({
  name: "PostgreSQL: U&'…' UESCAPE '!' literals are reads for a readOnly token",
  ignore: needs("postgres").ignore,
  async fn() {
    await using t = await setup("postgres", "readOnly");
    assertMatch(
      await t.run("SELECT U&'d!0061t!+000061' UESCAPE '!' AS v"),
      /"rows":\[\["data"\]\]/,
    );
    assertMatch(
      await t.run(
        "SELECT U&'\\0441\\043B\\043E\\043D' AS v, U&'a#0062' UESCAPE '#' AS w",
      ),
      /"rows":\[\["слон","ab"\]\]/,
    );
    // A name behind escapes is still refused.
    assertMatch(
      await t.run(`SELECT U&"pg!005fsleep" UESCAPE '!'(0)`),
      /^denied: .*UESCAPE hides names/,
    );
  },
});

Deno.test({
  name: "MariaDB: `SELECT 1; # comment` is one read",
  ignore: needs("mysql").ignore,
  async fn() {
    await using t = await setup("mysql", "readOnly");
    for (const query of ["SELECT 1; # comment", "SELECT 1;# c; DROP TABLE x"]) {
      assertMatch(await t.run(query), /"rows":\[\[1\]\]/, query);
    }
    assertMatch(
      await t.run("SELECT 1; # c\nSELECT 2"),
      /^invalid_argument: query holds 2 statements/,
    );
  },
});

for (
  const [engine, make, check] of [
    [
      "mysql",
      (n: string) =>
        `CREATE PROCEDURE p_${n}() BEGIN DECLARE x INT DEFAULT 1; IF x = 1 THEN SELECT 1; ELSE SELECT 2; END IF; SELECT CASE WHEN x THEN 'a' END; END`,
      (n: string) =>
        `select count(*) as n from information_schema.routines where routine_name = 'p_${n}'`,
    ],
    [
      "mysql",
      (n: string) =>
        `CREATE TRIGGER tr_${n} BEFORE INSERT ON authors FOR EACH ROW BEGIN SET NEW.name = UPPER(NEW.name); SET NEW.name = TRIM(NEW.name); END`,
      (n: string) =>
        `select count(*) as n from information_schema.triggers where trigger_name = 'tr_${n}'`,
    ],
    [
      "sqlite",
      (n: string) =>
        `CREATE TRIGGER tr_${n} AFTER INSERT ON authors BEGIN UPDATE authors SET name = upper(name) WHERE id = new.id; SELECT CASE WHEN 1 THEN 2 END; END`,
      (n: string) =>
        `select count(*) as n from sqlite_master where name = 'tr_${n}'`,
    ],
  ] as const
) {
  Deno.test({
    name: `${engine}: ${
      make("x").slice(0, 16)
    }… BEGIN … END is one write that asks, and runs once approved`,
    ignore: needs(engine).ignore,
    async fn() {
      await using t = await setup(engine, "readWrite");
      const n = crypto.randomUUID().slice(0, 8);
      const answer = await t.run(make(n));
      assert(!answer.startsWith("invalid_argument"), answer);
      assertMatch(answer, /"rows_affected"/);
      const asked = await t.dialog.asked();
      assertEquals(asked.length, 1, "asked once, as a write");
      assertEquals(
        Number((await t.fixture.admin(check(n)) as { n: unknown }[])[0]!.n),
        1,
      );
      // A statement after END is a second statement, refused before asking.
      const two = await t.run(`${make(`${n}b`)}; DROP TABLE authors`);
      assertMatch(two, /^invalid_argument: query holds 2 statements/);
      assertEquals((await t.dialog.asked()).length, 1);
    },
  });
}

Deno.test({
  name:
    "MariaDB: a readOnly token's CREATE PROCEDURE … BEGIN … END is refused as a write, not as several statements",
  ignore: needs("mysql").ignore,
  async fn() {
    await using t = await setup("mysql", "readOnly");
    const refused = await t.run(
      "CREATE PROCEDURE p_ro() BEGIN SELECT 1; SELECT 2; END",
    ).then(() => null, (error: unknown) => error);
    // A write: the token lacks tools:write, not "2 statements".
    assertMatch(String(refused), /Insufficient scope/);
  },
});
