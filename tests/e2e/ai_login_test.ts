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
import { openDriver } from "../../lib/db/open_driver.ts";
import { aiUserName } from "../../lib/app/harden.ts";
import { savedConnection } from "../_connections.ts";
import {
  type Fixture,
  needs,
  openFixture,
  openPostgresDatabase,
  POSTGRES_URL,
  READ_OPTIONS,
} from "../_db.ts";
import { mainArgs } from "../_main.ts";
import { exists } from "../_server.ts";
import { saveConnections } from "../../lib/app/connections.ts";
import postgres from "postgres";
import { serverWith } from "../_connections.ts";
import { callTool } from "../_tool_call.ts";
import { waitUntil } from "../_wait.ts";

/** Drop a role the test made (its database is gone: nothing depends on it). */
async function dropRole(user: string) {
  const sql = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`drop role if exists "${user}"`);
  } finally {
    await sql.end();
  }
}

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

/**
 * Harden a fixture's connection; the saved connection with its AI login.
 * `named` learns the login's name before harden may create it, so that the
 * test drops it even when harden or a check here fails half-way.
 */
async function hardened(
  fixture: Pick<Fixture, "engine" | "url">,
  home: string,
  named: (user: string) => void,
): Promise<SavedConnection> {
  const saved = savedConnection(fixture, "Prod");
  named(aiUserName(saved));
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
    const fixture = await openPostgresDatabase();
    const home = await Deno.makeTempDir({ prefix: "dbport-harden-" });
    let user = "";
    const marker = `/tmp/dbport-harden-${crypto.randomUUID()}`;
    try {
      const connection = await hardened(fixture, home, (name) => user = name);
      assertEquals(connection.aiLogin!.user, user);
      const shown = await dbport(home, "harden", "Prod");
      assert(!shown.out.includes("pg_read_all_data"), shown.out);
      for (
        const line of [
          `GRANT USAGE ON SCHEMA "shop" TO "${user}"`,
          `GRANT SELECT ON ALL TABLES IN SCHEMA "shop" TO "${user}"`,
          `ALTER DEFAULT PRIVILEGES FOR ROLE "postgres" IN SCHEMA "shop" GRANT SELECT ON TABLES TO "${user}"`,
          `ALTER ROLE "${user}" SET default_transaction_read_only = on`,
        ]
      ) assertStringIncludes(shown.out, line);
      // A table made after harden is readable (default privileges).
      await fixture.admin("create table shop.later (v int)");
      await fixture.admin("insert into shop.later values (7)");
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
        assertEquals(
          (await driver.query("select name from shop.author_names", READ))
            .rows.length,
          2,
        );
        assertEquals(
          (await driver.query("select v from shop.later", READ)).rows,
          [[7]],
        );
        // Read-only even where dbport's transaction is not (belt and braces).
        assertEquals(
          (await driver.query("show default_transaction_read_only", READ))
            .rows,
          [["on"]],
        );
        // The credential catalogs are the engine's to refuse.
        for (
          const sql of [
            "select rolname, rolpassword from pg_authid",
            "select passwd from pg_shadow",
            "select * from pg_user_mapping",
          ]
        ) {
          const error = await assertRejects(() => driver.query(sql, READ));
          assertStringIncludes((error as Error).message, "permission denied");
        }
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
      await fixture[Symbol.asyncDispose]();
      if (user !== "") await dropRole(user);
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
      const connection = await hardened(fixture, home, (name) => user = name);
      assertEquals(connection.aiLogin!.user, user);
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

Deno.test(
  "postgres: one AI client cannot end another's session: the role may signal its own backends, the allowlist refuses it",
  needs("postgres"),
  async () => {
    // A database of its own: harden grants on every schema of the database,
    // and in `test` other runs' schemas come and go meanwhile.
    await using fixture = await openPostgresDatabase();
    const home = await Deno.makeTempDir({ prefix: "dbport-harden-" });
    let user = "";
    try {
      const connection = await hardened(fixture, home, (name) => user = name);
      assertEquals(connection.aiLogin!.user, user);
      const s = fixture.schema;
      const others =
        `from pg_stat_activity where usename = current_user and pid <> pg_backend_pid()`;
      for (
        const statement of [
          `create function ${s}.kill_mine() returns bigint immutable language sql as $f$select count(*) ${others} and pg_terminate_backend(pid)$f$`,
          `create function ${s}.cancel_mine() returns bigint stable language sql as $f$select count(*) ${others} and pg_cancel_backend(pid)$f$`,
          `create function ${s}.kill_atomic() returns bigint immutable language sql begin atomic select count(*) ${others} and pg_terminate_backend(pid); end`,
          `create function ${s}.kill_one(pid int) returns boolean immutable language sql as 'select pg_terminate_backend(pid)'`,
          `create view ${s}.v_kill_mine as select ${s}.kill_mine() as killed`,
          `grant select on ${s}.v_kill_mine to "${user}"`,
        ]
      ) await fixture.admin(statement);
      // Sessions of the AI login itself: another client's reads.
      const url = new URL(fixture.url);
      url.username = user;
      url.password = connection.aiLogin!.password;
      const session = async () => {
        const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
        const [row] = await sql.unsafe(
          "select pg_backend_pid() as pid",
        ) as unknown as { pid: number }[];
        return { sql, pid: row!.pid };
      };
      const proof = await session();
      const victim = await session();
      try {
        // Below dbport's checks the engine lets the role signal its own.
        const driver = openDriver(driverSpec(connection));
        try {
          await driver.query(`select pg_terminate_backend(${proof.pid})`, READ);
        } finally {
          await driver.close();
        }
        const gone = (pid: number) =>
          waitUntil(`backend ${pid} to be gone`, async () => {
            const [row] = await fixture.admin(
              `select count(*)::int as n from pg_stat_activity where pid = ${pid}`,
            ) as { n: number }[];
            return row!.n === 0;
          }, { intervalMs: 100 }).then(() => true, () => false);
        assert(await gone(proof.pid), "the role could not signal its own");
        // Through the tools, a readOnly client is refused every form.
        await using server = await serverWith([connection]);
        const token = (await server.mint("readOnly")).plaintext;
        for (
          const query of [
            `select ${s}.kill_mine()`,
            `select ${s}.cancel_mine()`,
            `select ${s}.kill_atomic()`,
            `select * from ${s}.v_kill_mine`,
            `select a.pid from pg_stat_activity a, lateral (select ${s}.kill_one(a.pid)) k where a.usename = current_user`,
            `select ${s}.kill_one(${victim.pid})`,
          ]
        ) {
          for (const tool of ["execute_query", "explain_query"]) {
            const answer = await callTool(server, tool, {
              connection_id: connection.id,
              query,
            }, { authorization: `Bearer ${token}` });
            assert(
              answer.json.error !== undefined ||
                answer.json.result?.isError === true,
              `${tool} ${query} ran`,
            );
          }
        }
        // The same session, not a new one postgres.js opened after a kill.
        const [still] = await victim.sql.unsafe(
          "select pg_backend_pid() as pid",
        ) as unknown as { pid: number }[];
        assertEquals(
          still?.pid,
          victim.pid,
          "the other client's session ended",
        );
      } finally {
        await proof.sql.end({ timeout: 1 }).catch(() => {});
        await victim.sql.end({ timeout: 1 });
      }
    } finally {
      if (user !== "") {
        await fixture.admin(`drop owned by "${user}"`).catch(() => {});
        await fixture.admin(`drop role if exists "${user}"`).catch(() => {});
      }
      await Deno.remove(home, { recursive: true });
    }
  },
);
