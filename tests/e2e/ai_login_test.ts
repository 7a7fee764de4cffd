/**
 * The engine's privileges as the last wall: with an AI login made by
 * `connections harden --apply`, reading server files, running a program
 * through a function, ending another session and writing a file are refused
 * by PostgreSQL and MariaDB themselves — proven on the driver path below the
 * classifier, where dbport's own checks do not run.
 */

import {
  assert,
  assertEquals,
  assertRejects,
  assertStringIncludes,
} from "@std/assert";
import {
  driverSpec,
  loadConnections,
  type SavedConnection,
} from "../../lib/app/connections.ts";
import { openDriver } from "../../lib/db/pool.ts";
import { savedConnection } from "../_connections.ts";
import { type Fixture, needs, openFixture, READ_OPTIONS } from "../_db.ts";
import { mainArgs } from "../_main.ts";
import { exists } from "../_server.ts";
import { saveConnections } from "../../lib/app/connections.ts";

const READ = READ_OPTIONS;

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

/** Harden a fixture's connection; the saved connection with its AI login. */
async function hardened(
  fixture: Fixture,
  home: string,
): Promise<SavedConnection> {
  const saved = savedConnection(fixture, "Prod");
  await saveConnections(`${home}/connections.json`, [saved]);
  const before = await dbport(home, "test", "Prod");
  assertEquals(before.code, 0, before.err);
  // The fixture logs in as a superuser (postgres) or root: said plainly.
  assertStringIncludes(before.out, "connections harden");
  const shown = await dbport(home, "harden", "Prod");
  assertEquals(shown.code, 0, shown.err);
  assertStringIncludes(shown.out, "Would create");
  assertStringIncludes(shown.out, "'********'"); // the password, masked
  const applied = await dbport(home, "harden", "Prod", "--apply");
  assertEquals(applied.code, 0, applied.out + applied.err);
  const loaded = await loadConnections(`${home}/connections.json`);
  assert(loaded.ok);
  const connection = loaded.connections[0]!;
  assert(connection.aiLogin !== undefined);
  // The new password is saved, never printed.
  assert(!applied.out.includes(connection.aiLogin.password), applied.out);
  const after = await dbport(home, "test", "Prod");
  assertStringIncludes(
    after.out,
    `AI reads run as "${connection.aiLogin.user}"`,
  );
  assert(!after.out.includes("Warning"), after.out);
  return connection;
}

Deno.test(
  "postgres: with an AI login the engine refuses files, programs and other sessions below the classifier",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const home = await Deno.makeTempDir({ prefix: "dbport-harden-" });
    let user = "";
    const marker = `/tmp/dbport-harden-${crypto.randomUUID()}`;
    try {
      const connection = await hardened(fixture, home);
      user = connection.aiLogin!.user;
      await fixture.admin(
        `create function ${fixture.schema}.shell() returns int language plpgsql as $f$
         begin execute 'COPY (SELECT 1) TO PROGRAM ''touch ${marker}'''; return 1; end $f$`,
      );
      const pid = (await fixture.admin("select pg_backend_pid() as pid") as {
        pid: number;
      }[])[0]!.pid;
      const driver = openDriver(driverSpec(connection));
      try {
        // Reads work as the AI login.
        const read = await driver.query(
          `select count(*)::int from ${fixture.schema}.authors`,
          READ,
        );
        assertEquals(read.rows, [[2]]);
        for (
          const sql of [
            "select pg_read_file('/etc/hostname')",
            "select * from pg_ls_dir('/')",
            `select ${fixture.schema}.shell()`,
            `select pg_terminate_backend(${pid})`,
            "select * from pg_hba_file_rules",
          ]
        ) {
          const error = await assertRejects(() => driver.query(sql, READ));
          assert(
            /permission denied|must be a (superuser|member)|not allowed|privilege/i
              .test((error as Error).message),
            `${sql}: ${(error as Error).message}`,
          );
        }
      } finally {
        await driver.close();
      }
      assertEquals(await exists(marker), false, "a program ran");
      const alive = await fixture.admin(
        `select count(*)::int as n from pg_stat_activity where pid = ${pid}`,
      ) as { n: number }[];
      assertEquals(alive[0]!.n, 1);
    } finally {
      if (user !== "") {
        await fixture.admin(`drop owned by "${user}"`).catch(() => {});
        await fixture.admin(`drop role if exists "${user}"`).catch(() => {});
      }
      await Deno.remove(home, { recursive: true });
    }
  },
);

Deno.test(
  "mysql: with an AI login LOAD_FILE reads nothing and INTO OUTFILE is refused below the classifier",
  needs("mysql"),
  async () => {
    await using fixture = await openFixture("mysql");
    const home = await Deno.makeTempDir({ prefix: "dbport-harden-" });
    let user = "";
    const outfile = `/tmp/dbport-harden-${crypto.randomUUID()}`;
    try {
      const connection = await hardened(fixture, home);
      user = connection.aiLogin!.user;
      const driver = openDriver(driverSpec(connection));
      try {
        const read = await driver.query("select count(*) from authors", READ);
        assertEquals(read.rows, [["2"]]);
        const file = await driver.query(
          "select load_file('/etc/hostname')",
          READ,
        );
        assertEquals(file.rows, [[null]]);
        const error = await assertRejects(() =>
          driver.query(`select 'x' into outfile '${outfile}'`, READ)
        );
        assert(
          /access denied|FILE privilege/i.test((error as Error).message),
          (error as Error).message,
        );
      } finally {
        await driver.close();
      }
      assertEquals(await exists(outfile), false, "a file was written");
    } finally {
      // harden scopes the login to the host the server sees dbport from.
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
