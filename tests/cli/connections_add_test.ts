/**
 * `connections add` tells the truth: a connection that does not answer is not
 * saved (unless --save-anyway) and the exit status says so, with what to fix;
 * the engine is read from the URL; a login that can do more than read is
 * offered its AI login at once (--harden), which sets the write preview to
 * the estimate; `connections set --write-preview`; `connections remove
 * --drop-ai-login` drops what harden made. Subprocesses with a temp home and
 * no terminal, as a script runs them.
 */

import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { loadConnections } from "../../lib/app/connections.ts";
import { engineNamed, engineOfUrl } from "../../lib/db/engines.ts";
import { needs, openFixture, POSTGRES_URL } from "../_db.ts";
import { mainArgs } from "../_main.ts";

async function dbport(home: string, ...args: string[]) {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: mainArgs("connections", ...args),
    env: { DBPORT_HOME: home, NO_COLOR: "1" },
    stdin: "null",
  }).output();
  return {
    code,
    out: new TextDecoder().decode(stdout),
    err: new TextDecoder().decode(stderr),
  };
}

async function saved(home: string) {
  const loaded = await loadConnections(`${home}/connections.json`);
  assert(loaded.ok);
  return loaded.connections;
}

Deno.test("engineOfUrl() reads the engine from the URL; engineNamed() takes the aliases", () => {
  assertEquals(engineOfUrl("postgres://u@h/db"), "postgres");
  assertEquals(engineOfUrl("postgresql://u@h/db"), "postgres");
  assertEquals(engineOfUrl("mysql://u@h/db"), "mysql");
  assertEquals(engineOfUrl("mariadb://u@h/db"), "mysql");
  assertEquals(engineOfUrl("libsql://db.example"), "sqlite");
  assertEquals(engineOfUrl("/tmp/shop.db"), "sqlite");
  assertEquals(engineOfUrl("file:/tmp/shop.db"), "sqlite");
  assertEquals(engineOfUrl("C:\\data\\shop.db"), "sqlite");
  assertEquals(engineOfUrl("oracle://h/db"), null);
  assertEquals(engineNamed("postgresql"), "postgres");
  assertEquals(engineNamed("MariaDB"), "mysql");
  assertEquals(engineNamed("sqlite"), "sqlite");
  assertEquals(engineNamed("oracle"), null);
});

Deno.test("connections add: a connection that fails its test is not saved, exits 1 and names the fix", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-add-" });
  try {
    const wrongDb = new URL(POSTGRES_URL);
    wrongDb.pathname = "/no_such_database_here";
    const missing = await dbport(
      home,
      "add",
      "--name",
      "Missing",
      "--url",
      wrongDb.toString().replace(/^postgres:/, "postgresql:"),
    );
    assertEquals(missing.code, 1);
    assertStringIncludes(missing.err, "Fix: check the database name");
    assertStringIncludes(missing.err, "Nothing was saved");
    assertEquals(await saved(home), []);

    const down = await dbport(
      home,
      "add",
      "--name",
      "Down",
      "--url",
      "mariadb://someone@127.0.0.1:1/shop",
    );
    assertEquals(down.code, 1);
    assertStringIncludes(
      down.err,
      "Fix: is the MySQL/MariaDB server running at 127.0.0.1:1?",
    );
    const file = await dbport(
      home,
      "add",
      "--name",
      "F",
      "--url",
      `${home}/no_such_dir/none.db`,
    );
    assertEquals(file.code, 1);
    assertStringIncludes(file.err, "Fix: check the path in --url");
    assertEquals(await saved(home), []);

    // --save-anyway keeps it: the command did what it was asked (exit 0),
    // and warns that it does not connect, naming the fix.
    const anyway = await dbport(
      home,
      "add",
      "--name",
      "Down",
      "--engine",
      "mariadb",
      "--url",
      "mysql://someone@127.0.0.1:1/shop",
      "--save-anyway",
    );
    assertEquals(anyway.code, 0, anyway.err);
    assertStringIncludes(anyway.out, 'Saved connection "Down"');
    assertStringIncludes(
      anyway.err,
      "Fix: is the MySQL/MariaDB server running",
    );
    assertStringIncludes(anyway.err, "Warning: it does not connect yet");
    assertStringIncludes(anyway.err, 'connections set "Down"');
    // --no-test saves without a test.
    const untested = await dbport(
      home,
      "add",
      "--name",
      "Later",
      "--url",
      "postgres://someone@127.0.0.1:1/shop",
      "--no-test",
    );
    assertEquals(untested.code, 0, untested.err);
    assertEquals(
      (await saved(home)).map((c) => [c.name, c.engine]),
      [["Down", "mysql"], ["Later", "postgres"]],
    );
    const unknown = await dbport(
      home,
      "add",
      "--name",
      "X",
      "--url",
      "oracle://h/x",
    );
    assertEquals(unknown.code, 2);
    assertStringIncludes(unknown.err, "the URL names no engine");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

for (const engine of ["postgres", "mysql"] as const) {
  Deno.test({
    name:
      `${engine}: add offers the AI login (--harden makes it, writes the estimate preview), set --write-preview, remove --drop-ai-login drops it`,
    ...needs(engine),
    async fn() {
      await using fixture = await openFixture(engine);
      const home = await Deno.makeTempDir({ prefix: "dbport-add-" });
      let user = "";
      try {
        // No terminal and neither flag: nothing is made, and it says how.
        const plain = await dbport(
          home,
          "add",
          "--name",
          "Plain",
          "--url",
          fixture.url,
        );
        assertEquals(plain.code, 0, plain.err);
        assertStringIncludes(plain.out, 'Warning: the login of "Plain"');
        assertStringIncludes(plain.out, "add --harden to make it at once");
        assertEquals((await saved(home))[0]!.aiLogin, undefined);

        const added = await dbport(
          home,
          "add",
          "--name",
          "Shop",
          "--url",
          fixture.url,
          "--harden",
        );
        assertEquals(added.code, 0, added.out + added.err);
        const shop = (await saved(home)).find((c) => c.name === "Shop")!;
        user = shop.aiLogin!.user;
        assertEquals(shop.writePreview, "estimate");
        assertStringIncludes(added.out, "--write-preview dryRun");
        if (engine === "mysql") {
          // Scoped to the host the server sees dbport connect from.
          const hosts = await fixture.admin(
            `select host from mysql.user where user = '${user}'`,
          ) as { host: string }[];
          assertEquals(hosts.length, 1);
          assert(hosts[0]!.host !== "%", hosts[0]!.host);
        }

        const set = await dbport(
          home,
          "set",
          "Shop",
          "--write-preview",
          "dryRun",
        );
        assertEquals(set.code, 0, set.err);
        assertEquals(
          (await saved(home)).find((c) => c.name === "Shop")!.writePreview,
          "dryRun",
        );
        const bad = await dbport(
          home,
          "set",
          "Shop",
          "--write-preview",
          "maybe",
        );
        assertEquals(bad.code, 2);
        assertStringIncludes(bad.err, '"dryRun", "estimate", "off"');

        // No terminal and neither flag: nothing is removed, and it says how
        // (once the connection is gone, dbport could not drop the login).
        const undecided = await dbport(home, "remove", "Shop");
        assertEquals(undecided.code, 2, undecided.out + undecided.err);
        assertStringIncludes(undecided.err, "Nothing was removed");
        assertStringIncludes(undecided.err, "--drop-ai-login");
        assertStringIncludes(undecided.err, "--keep-ai-login");
        assert((await saved(home)).some((c) => c.name === "Shop"));

        const removed = await dbport(home, "remove", "Shop", "--drop-ai-login");
        assertEquals(removed.code, 0, removed.out + removed.err);
        assertStringIncludes(removed.out, "Dropping the AI login");
        const left = engine === "postgres"
          ? await fixture.admin(
            `select 1 from pg_roles where rolname = '${user}'`,
          )
          : await fixture.admin(
            `select 1 from mysql.user where user = '${user}'`,
          );
        assertEquals(left.length, 0, "the AI login is gone");
        user = "";
        assertEquals((await saved(home)).map((c) => c.name), ["Plain"]);
      } finally {
        if (user !== "") {
          await dbport(home, "remove", "Shop", "--drop-ai-login");
        }
        await Deno.remove(home, { recursive: true });
      }
    },
  });
}

Deno.test("connections add: a new SQLite file in an existing directory is created empty (saved absolute); never under --safe-mode readOnly, with --no-test, or in a missing directory", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-add-sqlite-" });
  const work = await Deno.makeTempDir({ prefix: "dbport-add-sqlite-cwd-" });
  try {
    // As a new user types it: a relative path, from their own directory.
    const run = async (...args: string[]) => {
      const { code, stdout, stderr } = await new Deno.Command(
        Deno.execPath(),
        {
          args: mainArgs("connections", ...args),
          env: { DBPORT_HOME: home, NO_COLOR: "1" },
          stdin: "null",
          cwd: work,
        },
      ).output();
      return {
        code,
        out: new TextDecoder().decode(stdout),
        err: new TextDecoder().decode(stderr),
      };
    };
    const added = await run("add", "--name", "Notes", "--url", "./notes.db");
    assertEquals(added.code, 0, added.err);
    const file = `${work}/notes.db`;
    assertStringIncludes(
      added.out,
      `Created the empty SQLite database ${file}`,
    );
    // Saved by default readOnly for AI clients: says how to fill it.
    assertStringIncludes(added.out, "--external-access readWrite");
    const info = await Deno.stat(file);
    assertEquals(info.size, 0);
    assertEquals(info.mode! & 0o777, 0o600);
    assertEquals(
      (await saved(home)).map((c) => [c.name, c.engine, c.url]),
      [["Notes", "sqlite", file]],
    );
    // The saved connection works: its test connects to the new database.
    const tested = await run("test", "Notes");
    assertEquals(tested.code, 0, tested.err);

    // An existing file is used as it is, never touched.
    await Deno.writeTextFile(`${work}/kept.db`, "");
    const before = (await Deno.stat(`${work}/kept.db`)).mtime;
    const kept = await run("add", "--name", "Kept", "--url", "./kept.db");
    assertEquals(kept.code, 0, kept.err);
    assert(!kept.out.includes("Created"), kept.out);
    assertEquals((await Deno.stat(`${work}/kept.db`)).mtime, before);

    // Safe Mode readOnly: it could never be written, so nothing is made.
    const readOnly = await run(
      "add",
      "--name",
      "RO",
      "--url",
      "./ro.db",
      "--safe-mode",
      "readOnly",
    );
    assertEquals(readOnly.code, 1);
    assertStringIncludes(readOnly.err, "Safe Mode readOnly");
    assertStringIncludes(readOnly.err, "Nothing was saved");
    // --no-test touches nothing (the path is saved as given).
    const untested = await run(
      "add",
      "--name",
      "Later",
      "--url",
      "./later.db",
      "--no-test",
    );
    assertEquals(untested.code, 0, untested.err);
    // A directory that does not exist: refused with the fix, nothing made.
    const nowhere = await run(
      "add",
      "--name",
      "Nowhere",
      "--url",
      "./missing_dir/x.db",
    );
    assertEquals(nowhere.code, 1);
    assertStringIncludes(nowhere.err, "Fix: check the path in --url");
    for (const name of ["ro.db", "later.db", "missing_dir"]) {
      assertEquals(
        await Deno.stat(`${work}/${name}`).then(() => true, () => false),
        false,
        `${name} must not exist`,
      );
    }
    assertEquals(
      (await saved(home)).map((c) => c.name),
      ["Notes", "Kept", "Later"],
    );
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("connections add: a URL whose password holds a '%' not followed by two hex digits is refused naming it, the password not quoted; nothing saved (outsider stop 55)", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-add-" });
  try {
    const got = await dbport(
      home,
      "add",
      "--name",
      "Percent",
      "--no-test",
      "--url",
      "postgres://postgres:50%off@127.0.0.1:5432/test",
    );
    assertEquals(got.code, 2);
    assertStringIncludes(
      got.err,
      "--url has a password holding a '%' not followed by two hex digits (write a '%' itself as %25)",
    );
    assert(!got.err.includes("50%off"), got.err);
    assertStringIncludes(got.err, "postgres://postgres:[redacted]@");
    assertEquals(await saved(home), []);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
