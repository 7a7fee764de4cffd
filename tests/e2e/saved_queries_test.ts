/**
 * Saved queries as tools on every engine (docs/queries.md): added with the
 * CLI (`dbport queries add`), offered as `q_<name>` with a typed input
 * schema, arguments validated (-32602 for a wrong type), values bound —
 * a quote or `'; DROP …` stored and matched verbatim —, a saved write asking
 * the user first, a token without the connection not seeing the tool, and a
 * readOnly token refused the write's scope.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import { inAppDir } from "../../lib/app/paths.ts";
import { QUERIES_FILE } from "../../lib/app/queries.ts";
import { queriesCommand } from "../../lib/cli/queries.ts";
import { CONNECTIONS_FILE } from "../../lib/base/identity.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { recordingDialog } from "../_dialog.ts";
import { ENGINES, needs, openFixture } from "../_db.ts";
import { modernRequest, postModern, type TestServer } from "../_server.ts";
import { waitUntil } from "../_wait.ts";

const EVIL = "O'Brien'; DROP TABLE notes; --";

let id = 1;

/** tools/list's tools for a token. */
async function toolsOf(server: TestServer, token: string) {
  const answer = await postModern(
    server.url,
    modernRequest("tools/list", {}, id++),
    { authorization: `Bearer ${token}` },
  );
  // deno-lint-ignore no-explicit-any
  return answer.json.result.tools as any[];
}

/** tools/call with a token; the JSON-RPC answer. */
async function call(
  server: TestServer,
  token: string,
  name: string,
  args: Record<string, unknown>,
) {
  const answer = await postModern(
    server.url,
    modernRequest("tools/call", { name, arguments: args }, id++),
    { authorization: `Bearer ${token}` },
  );
  return answer.json;
}

for (const engine of ENGINES) {
  Deno.test({
    name:
      `saved queries on ${engine}: typed tools, bound values, approval, visibility`,
    ...needs(engine),
    async fn() {
      await using fixture = await openFixture(engine);
      const q = (name: string) =>
        engine === "postgres" ? `${fixture.schema}.${name}` : name;
      const text = engine === "mysql" ? "varchar(200)" : "text";
      for (
        const sql of [
          `create table customers (id int primary key, name ${text}, region ${text}, total int)`,
          `insert into customers values (1, 'Ann', 'west', 300), (2, 'Bob', 'west', 200), (3, ${
            engine === "mysql"
              ? "\"O'Brien'; DROP TABLE notes; --\""
              : `'O''Brien''; DROP TABLE notes; --'`
          }, 'east', 100)`,
          `create table notes (id int primary key, body ${text})`,
        ]
      ) await fixture.admin(sql);
      await using dialog = await recordingDialog(0);
      const shop = savedConnection(fixture, "Shop", {
        externalAccess: "readWrite",
        safeMode: "alert",
      });
      const other = savedConnection(fixture, "Other");
      await using server = await serverWith([shop, other], {
        hostDialog: dialog.setting,
      });
      const paths = {
        connections: inAppDir(server.home, CONNECTIONS_FILE),
        queries: inAppDir(server.home, QUERIES_FILE),
      };
      const out: string[] = [];
      const io = { out: (line: string) => out.push(line), err: () => {} };
      const cli = (args: string[]) => queriesCommand(paths, args, io);
      assertEquals(
        await cli([
          "add",
          "--name",
          "top_customers",
          "--connection",
          "shop",
          "--sql",
          `select name, total from ${
            q("customers")
          } where region = :region order by total desc limit :n`,
          "--param",
          "region:text",
          "--param",
          "n:int:default=10",
          "--description",
          "The best customers of a region.",
        ]),
        0,
      );
      assertEquals(
        await cli([
          "add",
          "--name",
          "by_name",
          "--connection",
          "Shop",
          "--sql",
          `select id from ${q("customers")} where name = :name`,
          "--param",
          "name:text",
        ]),
        0,
      );
      assertEquals(
        await cli([
          "add",
          "--name",
          "add_note",
          "--connection",
          "Shop",
          "--sql",
          `insert into ${q("notes")} (id, body) values (:id, :body)`,
          "--param",
          "id:int",
          "--param",
          "body:text",
        ]),
        0,
      );
      assertEquals(
        await cli([
          "add",
          "--name",
          "other_count",
          "--connection",
          "Other",
          "--sql",
          `select count(*) as n from ${q("customers")}`,
        ]),
        0,
      );
      const list: string[] = [];
      await queriesCommand(paths, ["list"], {
        out: (line) => list.push(line),
        err: () => {},
      });
      assert(list.join("\n").includes("q_top_customers"), list.join("\n"));

      const everyone = (await server.mint("readWrite")).plaintext;
      const shopOnly =
        (await server.mint("readWrite", { connections: [shop.id] })).plaintext;
      const reader = (await server.mint("readOnly")).plaintext;

      // The running server follows queries.json: the tools appear.
      const tools = await waitUntil("the saved queries as tools", async () => {
        const all = await toolsOf(server, everyone);
        return all.some((t) => t.name === "q_other_count") ? all : undefined;
      });
      const top = tools!.find((t) => t.name === "q_top_customers");
      assertEquals(top.description, "The best customers of a region.");
      assertEquals(top.inputSchema, {
        type: "object",
        properties: {
          region: { type: "string" },
          n: { type: "integer", default: 10 },
        },
        required: ["region"],
        additionalProperties: false,
      });
      assertEquals(top.annotations.readOnlyHint, true);
      assertEquals(
        tools!.find((t) => t.name === "q_add_note").annotations.readOnlyHint,
        false,
      );

      // A token without the Other connection neither sees nor calls its tool.
      const limited = await toolsOf(server, shopOnly);
      assert(limited.some((t) => t.name === "q_top_customers"));
      assert(!limited.some((t) => t.name === "q_other_count"));
      const hidden = await call(server, shopOnly, "q_other_count", {});
      assertEquals(hidden.error.code, -32602);
      const counted = await call(server, everyone, "q_other_count", {});
      assertEquals(counted.result.structuredContent.rows.length, 1);

      // Typed arguments: bound, defaults applied, wrong types -32602.
      const best = await call(server, everyone, "q_top_customers", {
        region: "west",
        n: 1,
      });
      assertEquals(best.result.structuredContent.rows, [["Ann", 300]]);
      const all = await call(server, everyone, "q_top_customers", {
        region: "west",
      });
      assertEquals(all.result.structuredContent.rows.length, 2);
      for (
        const args of [
          { region: "west", n: "1" },
          { region: "west", n: 1.5 },
          { region: 5 },
          {},
          { region: "west", extra: 1 },
        ]
      ) {
        const wrong = await call(server, everyone, "q_top_customers", args);
        assertEquals(wrong.error?.code, -32602, JSON.stringify(args));
      }

      // A value that looks like SQL is a value: matched verbatim, runs nothing.
      const injected = await call(server, everyone, "q_top_customers", {
        region: "west' OR '1'='1",
      });
      assertEquals(injected.result.structuredContent.rows, []);
      const evil = await call(server, everyone, "q_by_name", { name: EVIL });
      assertEquals(evil.result.structuredContent.rows, [[3]]);

      // A readOnly token neither sees nor runs a saved write.
      const readable = await toolsOf(server, reader);
      assert(readable.some((t) => t.name === "q_top_customers"));
      assert(!readable.some((t) => t.name === "q_add_note"));
      const refused = await call(server, reader, "q_add_note", {
        id: 1,
        body: EVIL,
      });
      assertEquals(refused.error.code, -33007);
      assertEquals(await dialog.asked(), []);

      // A saved write asks the user (Safe Mode alert), then stores verbatim.
      const wrote = await call(server, everyone, "q_add_note", {
        id: 1,
        body: EVIL,
      });
      assertEquals(
        wrote.result.isError,
        undefined,
        JSON.stringify(wrote.result),
      );
      assertEquals(wrote.result.structuredContent.rows_affected, 1);
      const asked = await dialog.asked();
      assertEquals(asked.length, 1);
      assertEquals(asked[0]!.kind, "write");
      assertMatch(String(asked[0]!.statement), /O'Brien'; DROP TABLE notes/);
      const [row] = await fixture.admin(
        "select body from notes where id = 1",
      ) as Record<string, unknown>[];
      assertEquals(row?.body, EVIL);

      // Edited: the new parameter list and description at the next tools/list.
      assertEquals(
        await cli([
          "edit",
          "top_customers",
          "--param",
          "region:text:default=west",
          "--param",
          "n:int",
          "--description",
          "Edited.",
        ]),
        0,
      );
      const edited = await waitUntil(
        "the edited tool",
        async () =>
          (await toolsOf(server, everyone)).find((t) =>
            t.name === "q_top_customers" && t.description === "Edited."
          ),
      );
      assertEquals(edited.inputSchema.required, ["n"]);
      const westOne = await call(server, everyone, "q_top_customers", { n: 1 });
      assertEquals(westOne.result.structuredContent.rows, [["Ann", 300]]);

      // Removed: the tool goes at the next tools/list.
      assertEquals(await cli(["remove", "other_count"]), 0);
      await waitUntil(
        "q_other_count gone",
        async () =>
          !(await toolsOf(server, everyone)).some((t) =>
            t.name === "q_other_count"
          ),
      );
    },
  });
}

Deno.test("queries add refuses undeclared, unused and positional parameters, and unknown connections", async () => {
  await using fixture = await openFixture("sqlite");
  await using server = await serverWith([savedConnection(fixture, "Shop")]);
  const paths = {
    connections: inAppDir(server.home, CONNECTIONS_FILE),
    queries: inAppDir(server.home, QUERIES_FILE),
  };
  const io = { out: () => {}, err: () => {} };
  const add = (...more: string[]) =>
    queriesCommand(paths, [
      "add",
      "--name",
      "q1",
      "--connection",
      "Shop",
      ...more,
    ], io);
  for (
    const [args, message] of [
      [["--sql", "select :x"], ":x, which is not a declared parameter"],
      [["--sql", "select 1", "--param", "n:int"], ":n never appears"],
      [["--sql", "select ?", "--param", "n:int"], "positional placeholders"],
      [["--sql", "select :n", "--param", "n:date"], "is not one of"],
      [["--sql", "select :n", "--param", "n:int:default=x"], "is not an int"],
      [["--sql", "select 1; select 2"], "2 statements"],
    ] as const
  ) {
    let error: unknown = null;
    await add(...args).catch((e) => (error = e));
    assert(error instanceof Error, JSON.stringify(args));
    assert(
      (error as Error).message.includes(message),
      `${(error as Error).message} (wanted: ${message})`,
    );
  }
  let missing: unknown = null;
  await queriesCommand(paths, [
    "add",
    "--name",
    "q2",
    "--connection",
    "Nowhere",
    "--sql",
    "select 1",
  ], io).catch((e) => (missing = e));
  assertMatch((missing as Error).message, /no saved connection is named/);
  // Nothing was written.
  const text = await Deno.readTextFile(paths.queries).catch(() => null);
  assert(text === null || !text.includes("q1"), String(text));
});
