/**
 * `connections set NAME --private "…"` and the server's re-sync: a list is
 * refused where the engine cannot hold it, set and proved where it can, and
 * a running server puts a changed list in place (and refuses AI reads on a
 * connection whose list is not held).
 */

import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import postgres from "postgres";
import {
  editConnections,
  loadConnections,
  saveConnections,
} from "../../lib/app/connections.ts";
import { applyHarden, prepareHarden } from "../../lib/cli/harden.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openPostgresDatabase, POSTGRES_URL } from "../_db.ts";
import { mainArgs } from "../_main.ts";
import { callTool, toolErrorText } from "../_tool_call.ts";
import { waitUntil } from "../_wait.ts";

async function dbport(home: string, ...args: string[]) {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: mainArgs("connections", ...args),
    env: { DBPORT_HOME: home, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code,
    out: new TextDecoder().decode(stdout),
    err: new TextDecoder().decode(stderr),
  };
}

Deno.test("connections set --private refuses a bad entry, a server login without its AI login and remote libSQL; SQLite takes it", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-private-cli-" });
  try {
    await saveConnections(`${home}/connections.json`, [
      savedConnection(
        { engine: "postgres", url: "postgres://u@127.0.0.1:1/shop" },
        "Shop",
      ),
      savedConnection({ engine: "sqlite", url: `${home}/local.db` }, "Local"),
      savedConnection(
        { engine: "sqlite", url: "libsql://db.example.turso.io" },
        "Remote",
      ),
    ]);
    const bad = await dbport(home, "set", "Local", "--private", "*.email, ssn");
    assertEquals(bad.code, 2, bad.out + bad.err);
    assertStringIncludes(bad.err, '"ssn" must be table.column');
    const noLogin = await dbport(home, "set", "Shop", "--private", "*.email");
    assertEquals(noLogin.code, 2, noLogin.out + noLogin.err);
    assertStringIncludes(noLogin.err, "need its AI login");
    assertStringIncludes(noLogin.err, 'connections harden "Shop" --apply');
    const remote = await dbport(home, "set", "Remote", "--private", "*.email");
    assertEquals(remote.code, 2, remote.out + remote.err);
    assertStringIncludes(remote.err, "cannot install an authorizer");
    const local = await dbport(
      home,
      "set",
      "Local",
      "--private",
      " *.email , *.*ssn* ",
    );
    assertEquals(local.code, 0, local.out + local.err);
    assertStringIncludes(
      local.out,
      `AI reads on "Local" are refused the private columns by SQLite's authorizer`,
    );
    const loaded = await loadConnections(`${home}/connections.json`);
    assert(loaded.ok);
    assertEquals(
      loaded.connections.map((c) => c.privateColumns ?? null),
      [null, ["*.email", "*.*ssn*"], null],
    );
    const cleared = await dbport(home, "set", "Local", "--private", "");
    assertEquals(cleared.code, 0, cleared.out + cleared.err);
    const after = await loadConnections(`${home}/connections.json`);
    assert(after.ok);
    assertEquals(after.connections[1]!.privateColumns, []);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test(
  "postgres: set --private runs and proves the grants; a running server re-syncs when connections.json changes, and refuses reads while a list is not held",
  needs("postgres"),
  async () => {
    const fixture = await openPostgresDatabase();
    let user = "";
    try {
      await fixture.admin(
        "create table shop.customers (id int, name text, email text)",
      );
      await fixture.admin(
        "insert into shop.customers values (1, 'Ada', 'ada@example.com')",
      );
      const prepared = await prepareHarden(savedConnection(fixture, "Shop"));
      const connection = (await applyHarden(prepared!)).connection;
      user = connection.aiLogin!.user;
      await using server = await serverWith([connection]);
      const path = `${server.home}/connections.json`;
      const read = (query: string) =>
        callTool(server, "execute_query", {
          connection_id: connection.id,
          query,
        });
      /** The refusal of `query` once it says `says`: the server follows the file by its watch. */
      const refusalOf = (query: string, says: string) =>
        waitUntil(
          `${JSON.stringify(query)} refused saying ${JSON.stringify(says)}`,
          async () => {
            const answer = await read(query);
            if (answer.json.result?.isError !== true) return false;
            const text = toolErrorText(answer);
            return text.includes(says) && text;
          },
          { intervalMs: 200 },
        );
      // Before: the login reads the email.
      assertEquals(
        (await read("select email from shop.customers")).json.result
          .structuredContent.rows,
        [["ada@example.com"]],
      );
      const set = await dbport(
        server.home,
        "set",
        "Shop",
        "--private",
        "*.email",
      );
      assertEquals(set.code, 0, set.out + set.err);
      assertStringIncludes(
        set.out,
        `REVOKE SELECT ON "shop"."customers" FROM "${user}"`,
      );
      assertStringIncludes(set.out, 'Private on "Shop": shop.customers.email');
      // The server has the new list within a second or two.
      const text = await refusalOf(
        "select * from shop.customers",
        "is private",
      );
      assertStringIncludes(
        text,
        'denied: "customers.email" is private on "Shop"',
      );
      // A table made since, and a list changed by hand: the server itself
      // re-syncs, and the new table's email is private too.
      await fixture.admin("create table shop.leads (id int, email text)");
      await fixture.admin("insert into shop.leads values (1, 'x@example.com')");
      // Read at once: still readable, or private already when the server's
      // look at the schema's fingerprint (once a second, on a read) came
      // after the table was made — a fast read path makes either the case.
      const early = await read("select email from shop.leads");
      if (early.json.result?.isError === true) {
        assertStringIncludes(
          toolErrorText(early),
          'denied: "leads.email" is private on "Shop"',
        );
      } else {
        assertEquals(early.json.result.structuredContent.rows, [[
          "x@example.com",
        ]]);
      }
      await editConnections(
        path,
        (all) =>
          all.map((c) => ({ ...c, privateColumns: ["*.email", "*.phone"] })),
      );
      const leads = await refusalOf(
        "select email from shop.leads",
        "is private",
      );
      assertStringIncludes(leads, 'denied: "leads.email" is private on "Shop"');
      // A table made while the server runs, nothing else changed: the read
      // sees the schema's fingerprint move and re-syncs before it runs. A
      // read looks at the fingerprint at most once per LOOK_MS (1 s,
      // lib/server/private_sync.ts): that timer runs out first.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      await fixture.admin("create table shop.prospects (id int, email text)");
      await fixture.admin(
        "insert into shop.prospects values (1, 'p@example.com')",
      );
      assertStringIncludes(
        toolErrorText(await read("select email from shop.prospects")),
        'denied: "prospects.email" is private on "Shop"',
      );
      assertEquals(
        (await read("select id from shop.prospects")).json.result
          .structuredContent.rows,
        [[1]],
      );
      // A list the engine cannot hold: the AI login is gone from the file.
      await editConnections(path, (all) =>
        all.map((c) => {
          const { aiLogin: _gone, ...rest } = c;
          return { ...rest, privateColumns: ["*.email"] };
        }));
      const refused = await refusalOf(
        "select id from shop.customers",
        "not held",
      );
      assertStringIncludes(
        refused,
        'denied: the private columns of "Shop" are not held by the database',
      );
    } finally {
      await fixture[Symbol.asyncDispose]();
      if (user !== "") {
        const sql = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
        await sql.unsafe(`drop role if exists "${user}"`).finally(() =>
          sql.end()
        );
      }
    }
  },
);
