/**
 * Saving a hardened connection: only its AI login is written, over what the
 * file holds now, and a connection removed or pointed elsewhere while the
 * login was made is refused; a sample table dropped between the plan and
 * the proof is passed over.
 */

import { assert, assertEquals, assertMatch, assertRejects } from "@std/assert";
import postgres from "postgres";
import { loadConnections, saveConnections } from "../../lib/app/connections.ts";
import {
  applyHarden,
  prepareHarden,
  saveHardened,
} from "../../lib/cli/harden.ts";
import { withLogin } from "../../lib/db/split_driver.ts";
import { savedConnection } from "../_connections.ts";
import {
  type Fixture,
  needs,
  openFixture,
  openPostgresDatabase,
  POSTGRES_URL,
} from "../_db.ts";

Deno.test("saveHardened() adds the AI login to the file's own entry, and refuses one that changed meanwhile", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dbport-harden-save-" });
  const path = `${dir}/connections.json`;
  try {
    const shown = savedConnection(
      { engine: "postgres", url: "postgres://u@db.example/shop" },
      "Shop",
    );
    const hardened = { ...shown, aiLogin: { user: "ai", password: "pw" } };
    // The policy was changed on the console while the plan waited.
    await saveConnections(path, [{ ...shown, externalAccess: "blocked" }]);
    await saveHardened(path, hardened);
    const loaded = await loadConnections(path);
    assertEquals(loaded.ok && loaded.connections[0], {
      ...shown,
      externalAccess: "blocked",
      aiLogin: { user: "ai", password: "pw" },
    });
    await saveConnections(path, [{
      ...shown,
      url: "postgres://u@elsewhere.example/shop",
    }]);
    await assertRejects(
      () => saveHardened(path, hardened),
      Error,
      "was removed or changed",
    );
    await saveConnections(path, []);
    await assertRejects(
      () => saveHardened(path, hardened),
      Error,
      "was removed or changed",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test(
  "postgres: harden --apply passes over a sample table another session dropped between the plan and the proof, and still proves a read",
  needs("postgres"),
  async () => {
    const fixture = await openPostgresDatabase();
    let user = "";
    try {
      // Sorted before `shop`: the plan's first sample to read.
      await fixture.admin("create schema aaa");
      await fixture.admin("create table aaa.gone (id int)");
      const prepared = await prepareHarden(savedConnection(fixture, "Shop"));
      assert(prepared !== null);
      user = prepared.plan.user;
      assertEquals(
        prepared.plan.mustRead?.map((sample) => sample.read),
        [
          'SELECT 1 FROM "aaa"."gone" LIMIT 0',
          'SELECT 1 FROM "shop"."author_names" LIMIT 0',
        ],
      );
      // Another session's migration, while the owner looks at the plan.
      await fixture.admin("drop table aaa.gone");
      const { connection } = await applyHarden(prepared);
      assertEquals(connection.aiLogin?.user, user);
      const ai = postgres(withLogin(fixture.url, connection.aiLogin!), {
        max: 1,
        onnotice: () => {},
      });
      try {
        assertEquals((await ai.unsafe("select * from shop.authors")).length, 2);
      } finally {
        await ai.end();
      }
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

Deno.test(
  "postgres: harden --apply whose new login does not hold drops the login it created: nothing saved, nothing left on the server",
  needs("postgres"),
  async () => {
    const fixture = await openPostgresDatabase();
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    let user = "";
    try {
      const prepared = await prepareHarden(savedConnection(fixture, "Shop"));
      assert(prepared !== null);
      assertEquals(prepared.plan.creates, true);
      user = prepared.plan.user;
      // The owner's own later statement takes the read back: the proof's
      // sample is refused though it still exists.
      const role = `"${user}"`;
      prepared.plan.statements.push(
        `REVOKE ALL ON ALL TABLES IN SCHEMA shop FROM ${role}`,
      );
      const refused = await applyHarden(prepared).then(
        () => "applied",
        (error: Error) => error.message,
      );
      assertMatch(
        refused,
        new RegExp(
          `^The new login does not hold: .*permission denied.*; "${user}" was dropped again$`,
        ),
      );
      const left = await admin.unsafe(
        "select 1 from pg_roles where rolname = $1",
        [user],
      );
      assertEquals(left.length, 0, "the login is gone");
    } finally {
      await fixture[Symbol.asyncDispose]();
      if (user !== "") {
        await admin.unsafe(`drop role if exists "${user}"`).catch(() => {});
      }
      await admin.end();
    }
  },
);

Deno.test(
  "postgres: harden --apply whose statement fails leaves nothing: the plan is one transaction, and a login made before keeps its password",
  needs("postgres"),
  async () => {
    const fixture = await openPostgresDatabase();
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    let user = "";
    try {
      // An earlier harden's login, which AI reads use now.
      const first = await prepareHarden(savedConnection(fixture, "Shop"));
      assert(first !== null);
      user = first.plan.user;
      const { connection } = await applyHarden(first);
      // A later plan, with a private column: it grants on authors' other
      // columns. Another session's migration renames the table meanwhile.
      const again = await prepareHarden({
        ...connection,
        privateColumns: ["*.name"],
      });
      assert(again !== null);
      assertEquals(again.plan.creates, false);
      await fixture.admin("alter table shop.authors rename to writers");
      const refused = await applyHarden(again).then(
        () => "applied",
        (error: Error) => error.message,
      );
      assertMatch(
        refused,
        new RegExp(
          `^The plan did not run: (REVOKE|GRANT) SELECT .*ON "shop"\\."authors" (TO|FROM) "${user}" failed: relation "shop\\.authors" does not exist.*; it ran as one transaction, which was rolled back: the login "${user}", made before, is as it was$`,
        ),
      );
      assert(!refused.includes(again.plan.password), "the password is masked");
      // Its password was not changed: the saved AI login still reads.
      const ai = postgres(withLogin(fixture.url, connection.aiLogin!), {
        max: 1,
        onnotice: () => {},
      });
      try {
        assertEquals((await ai.unsafe("select * from shop.writers")).length, 2);
      } finally {
        await ai.end();
      }
    } finally {
      await fixture[Symbol.asyncDispose]();
      if (user !== "") {
        await admin.unsafe(`drop role if exists "${user}"`).catch(() => {});
      }
      await admin.end();
    }
  },
);

/** Every account of `user` on the MariaDB server, as `'user'@'host'`. */
async function accountsOf(
  fixture: Fixture,
  user: string,
): Promise<string[]> {
  const rows = await fixture.admin(
    `select host as h from mysql.user where user = '${user}'`,
  ) as { h: string }[];
  return rows.map((row) => `'${user}'@'${row.h}'`);
}

Deno.test(
  "mysql: harden --apply whose statement fails after CREATE USER drops the login it created, and never one made before",
  needs("mysql"),
  async () => {
    await using fixture = await openFixture("mysql");
    const user = `dbp_h_${crypto.randomUUID().slice(0, 8)}`;
    try {
      await fixture.admin("create table people (id int, name text)");
      const connection = {
        ...savedConnection(fixture, "Shop"),
        privateColumns: ["*.name"],
      };
      const prepared = await prepareHarden(connection, user);
      assert(prepared !== null);
      assertEquals(prepared.plan.creates, true);
      assertMatch(prepared.shown[0]!, /^CREATE USER '/);
      // Another session renames the table while the owner reads the plan.
      await fixture.admin("rename table people to persons");
      const refused = await applyHarden(prepared).then(
        () => "applied",
        (error: Error) => error.message,
      );
      assertMatch(
        refused,
        new RegExp(
          `^The plan did not run: GRANT SELECT \\(\`id\`\\) ON .*people.* failed: .*; the login "${user}" this run created was dropped again: nothing was left on the server$`,
        ),
      );
      assertEquals(await accountsOf(fixture, user), []);
      // A login an earlier harden made (the table back: its plan holds).
      await fixture.admin("rename table persons to people");
      const first = await prepareHarden(connection, user);
      assert(first !== null);
      await applyHarden(first);
      const accounts = await accountsOf(fixture, user);
      assertEquals(accounts.length, 1);
      const later = await prepareHarden(connection, user);
      assert(later !== null);
      assertEquals(later.plan.creates, false);
      await fixture.admin("rename table people to persons");
      const failed = await applyHarden(later).then(
        () => "applied",
        (error: Error) => error.message,
      );
      assertMatch(
        failed,
        new RegExp(
          `failed: .*; the login "${user}", made before, stays, with what ran before the failure: ALTER USER .*\\*\\*\\*\\*\\*\\*\\*\\*.*: run harden --apply again$`,
        ),
      );
      assert(!failed.includes(later.plan.password), "the password is masked");
      assertEquals(await accountsOf(fixture, user), accounts);
    } finally {
      for (const account of await accountsOf(fixture, user)) {
        await fixture.admin(`drop user if exists ${account}`);
      }
    }
  },
);
