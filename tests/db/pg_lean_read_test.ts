/**
 * Lean PostgreSQL reads (lib/db/postgres/pg_wired.ts `leanRead`, pg_read.ts): on
 * PostgreSQL 14 and later a plain SELECT runs alone, in an implicit
 * transaction read-only by the session's default, its session-level
 * settings set only when they changed. Counted on the wire by a proxy; the
 * engine's read-only default and the session's reports are what keep it
 * safe, and what vetting refuses never reaches it.
 */

import { assert, assertEquals, assertRejects } from "@std/assert";
import postgres from "postgres";
import { leavesNoState } from "../../lib/db/postgres/pg_wired.ts";
import { openPostgres } from "../../lib/db/postgres/postgres.ts";
import type { Driver } from "../../lib/db/types.ts";
import { hasLeanReads, ownPostgresDriver } from "../_pg_driver.ts";
import { needs, openFixture, READ_OPTIONS } from "../_db.ts";
import { tcpProxy } from "../_tcp_proxy.ts";

/**
 * A TCP proxy in front of the server that counts the statements clients
 * send: each statement of a simple query, each Parse.
 */
function countingProxy(target: URL) {
  const counted = { statements: 0, texts: [] as string[] };
  const decoder = new TextDecoder();
  const proxy = tcpProxy(target, async (client, connect) => {
    const server = await connect();
    server.readable.pipeTo(client.writable).catch(() => {});
    // The startup message (or a cancel request) has no type byte.
    let pending = new Uint8Array(0);
    let started = false;
    const writer = server.writable.getWriter();
    try {
      for await (const chunk of client.readable) {
        await writer.write(chunk);
        const all = new Uint8Array(pending.length + chunk.length);
        all.set(pending);
        all.set(chunk, pending.length);
        let at = 0;
        while (true) {
          const head = started ? 1 : 0;
          if (all.length - at < head + 4) break;
          const view = new DataView(all.buffer, at + head, 4);
          const length = view.getInt32(0);
          if (all.length - at < head + length) break;
          if (started) {
            const type = all[at]!;
            const body = all.subarray(at + 5, at + 1 + length);
            if (type === 0x51) { // Q
              const text = decoder.decode(body.subarray(0, -1));
              if (!text.startsWith("-- dbport read")) {
                const parts = text.split(";").filter((s) => s.trim());
                counted.statements += parts.length;
                counted.texts.push(...parts.map((s) => s.trim()));
              }
            } else if (type === 0x50) { // P: name, text
              const nul = body.indexOf(0);
              const text = decoder.decode(
                body.subarray(nul + 1, body.indexOf(0, nul + 1)),
              );
              counted.statements++;
              counted.texts.push(text);
            }
          }
          started = true;
          at += head + length;
        }
        pending = all.slice(at);
      }
    } catch {
      // The client or the server went away.
    }
  });
  return { url: proxy.url, counted, close: () => proxy.close() };
}

const SIGNED = {
  ...READ_OPTIONS,
  sign: { client: "lean38-test", token: "t", call: "00000000" },
};

/** A driver whose sessions carry an application_name of their own. */
function ownDriver(url: string): { driver: Driver; app: string } {
  return ownPostgresDriver(url, "dbport_lean");
}

async function serverMajor(url: string): Promise<number> {
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await admin`select
      current_setting('server_version_num')::int / 10000 as major`;
    return Number(row?.major);
  } finally {
    await admin.end();
  }
}

Deno.test({
  name:
    "postgres lean read: repeated plain reads by one caller send BEGIN READ ONLY, the statement and ROLLBACK in one batch",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const major = await serverMajor(fixture.url);
    const proxy = countingProxy(new URL(fixture.url));
    const { driver } = ownDriver(proxy.url);
    try {
      // The first read on a session sets its settings once.
      await driver.query("select 1 as warm", SIGNED);
      const before = proxy.counted.statements;
      const sent = proxy.counted.texts.length;
      for (let i = 0; i < 20; i++) {
        const result = await driver.query(`select ${i} as i`, SIGNED);
        assertEquals(result.rows, [[i]]);
      }
      const perRead = (proxy.counted.statements - before) / 20;
      const texts = proxy.counted.texts.slice(sent);
      if (major >= 14) {
        // No SET, no DISCARD ALL: the three statements of one batch.
        assertEquals(perRead, 3, texts.join(" | "));
        for (let i = 0; i < 20; i++) {
          assertEquals(texts[3 * i], "BEGIN READ ONLY");
          assert(/select \d+ as i$/.test(texts[3 * i + 1]!), texts[3 * i + 1]);
          assertEquals(texts[3 * i + 2], "ROLLBACK");
        }
      } else {
        // BEGIN READ ONLY; SET LOCAL ×2; the statement; ROLLBACK.
        assertEquals(perRead, 5, texts.join(" | "));
      }
      // Another caller's name is set once, in the same write.
      const other = { ...SIGNED, sign: { ...SIGNED.sign, client: "other" } };
      const mark = proxy.counted.texts.length;
      await driver.query("select 'x' as other", other);
      const otherTexts = proxy.counted.texts.slice(mark);
      if (major >= 14) {
        assertEquals(otherTexts, [
          "SET application_name = 'dbport/other'",
          "BEGIN READ ONLY",
          "/* dbport client=other token=t call=00000000 */ select 'x' as other",
          "ROLLBACK",
        ]);
      }
      // Not a plain SELECT: BEGIN READ ONLY … ROLLBACK, DISCARD ALL.
      const explainMark = proxy.counted.texts.length;
      await driver.query("explain select 1", SIGNED);
      const explained = proxy.counted.texts.slice(explainMark);
      assertEquals(explained[0], "BEGIN READ ONLY");
      assertEquals(explained.at(-1), "DISCARD ALL");
    } finally {
      await driver.close();
      await proxy.close();
    }
  },
});

Deno.test({
  name:
    "postgres lean read: reads whose timeouts are what is left of a deadline set the session's timeout once, never under theirs",
  ...needs("postgres"),
  async fn(t) {
    await using fixture = await openFixture("postgres");
    if (!hasLeanReads(await serverMajor(fixture.url), t.name)) return;
    const proxy = countingProxy(new URL(fixture.url));
    const { driver } = ownDriver(proxy.url);
    try {
      await driver.query("select 1 as warm", { ...SIGNED, timeoutMs: 29_996 });
      const mark = proxy.counted.texts.length;
      // What is left of a 30 s call's deadline after its checks and its wait
      // for a session: a few ms under, never the same twice (bench W1 C=8
      // set the timeout again before a quarter of its reads).
      for (const timeoutMs of [29_991, 30_000, 29_999, 29_950, 29_007]) {
        const result = await driver.query(
          "select current_setting('statement_timeout') as t",
          { ...SIGNED, timeoutMs },
        );
        assertEquals(result.rows, [["35s"]], `a read of ${timeoutMs} ms`);
      }
      const texts = proxy.counted.texts.slice(mark);
      assertEquals(texts.length, 15, texts.join(" | "));
      assert(!texts.some((t) => /^SET /.test(t)), texts.join(" | "));
      // A longer timeout than the session's: set again, rounded up.
      const longer = await driver.query(
        "select current_setting('statement_timeout') as t",
        { ...SIGNED, timeoutMs: 30_001 },
      );
      assertEquals(longer.rows, [["36s"]]);
      // A shorter one by a second or more: set again, never kept.
      const shorter = await driver.query(
        "select current_setting('statement_timeout') as t",
        { ...SIGNED, timeoutMs: 3_000 },
      );
      assertEquals(shorter.rows, [["8s"]]);
    } finally {
      await driver.close();
      await proxy.close();
    }
  },
});

Deno.test({
  name:
    "postgres lean read: a read-only default a statement flipped is undone by the read's own ROLLBACK; the engine refuses writes in lean reads",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const s = fixture.schema;
    await fixture.admin(`create table ${s}.lean_t (id int)`);
    // What vetting refuses (below) and the driver itself does not check:
    // the test's hook to flip the session's default from inside a read.
    await fixture.admin(
      `create function ${s}.lean_flip() returns text language sql as $$select set_config('default_transaction_read_only', 'off', false)$$`,
    );
    await fixture.admin(
      `create function ${s}.lean_ins() returns int language sql as $$insert into ${s}.lean_t values (1) returning 1$$`,
    );
    await fixture.admin(
      `create function ${s}.lean_set() returns text language sql set default_transaction_read_only = off as $$select current_setting('default_transaction_read_only')$$`,
    );
    const { driver } = ownDriver(fixture.url);
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    try {
      // Vetting: none of these is a read.
      const vetted = openPostgres({ url: fixture.url, secrets: [] });
      try {
        for (
          const sql of [
            `select set_config('default_transaction_read_only', 'off', false)`,
            `select ${s}.lean_flip()`,
            `select ${s}.lean_ins()`,
          ]
        ) {
          const verdict = await vetted.check(sql, "read", READ_OPTIONS);
          assert(verdict.ok, sql);
          assert(verdict.tier !== "read", `${sql} vetted as a read`);
        }
      } finally {
        await vetted.close();
      }
      assertEquals(
        await leavesNoState(
          `select set_config('default_transaction_read_only', 'off', false)`,
        ),
        false,
      );
      // A function's own SET clause is undone when it returns.
      const set = await driver.query(
        `select ${s}.lean_set() as inside, current_setting('default_transaction_read_only') as after`,
        READ_OPTIONS,
      );
      assertEquals(set.rows, [["off", "on"]]);
      // The engine: a write inside a lean read is refused.
      await assertRejects(
        () => driver.query(`select ${s}.lean_ins()`, READ_OPTIONS),
        Error,
        "read-only",
      );
      // The flip, past vetting: the read's own ROLLBACK undoes it (outsider
      // stop 49: a setting that is not reported, like search_path, is never
      // seen; only the ROLLBACK keeps it from the next read).
      const flipped = await driver.query(
        `select pg_backend_pid() as pid, ${s}.lean_flip() as old`,
        READ_OPTIONS,
      );
      assertEquals(flipped.rows[0]![1], "off", "the flip ran");
      // Every read after it: read-only, and a write refused by the engine.
      for (let i = 0; i < 6; i++) {
        const ro = await driver.query(
          "select current_setting('default_transaction_read_only') as ro, current_setting('transaction_read_only') as tro",
          READ_OPTIONS,
        );
        assertEquals(ro.rows, [["on", "on"]]);
        await assertRejects(
          () => driver.query(`select ${s}.lean_ins()`, READ_OPTIONS),
          Error,
          "read-only",
        );
      }
      const [count] = await admin.unsafe(
        `select count(*)::int as n from ${s}.lean_t`,
      );
      assertEquals(count?.n, 0);
    } finally {
      await admin.end();
      await driver.close();
    }
  },
});

Deno.test({
  name:
    "postgres lean read: a statement that fails inside its batch leaves the session aborted, rolled back by one more ROLLBACK and kept",
  ...needs("postgres"),
  async fn(t) {
    await using fixture = await openFixture("postgres");
    if (!hasLeanReads(await serverMajor(fixture.url), t.name)) return;
    const proxy = countingProxy(new URL(fixture.url));
    const { driver } = ownDriver(proxy.url);
    try {
      const pid = async () =>
        Number(
          (await driver.query("select pg_backend_pid() as pid", SIGNED))
            .rows[0]![0],
        );
      const before = await pid();
      const mark = proxy.counted.texts.length;
      await assertRejects(
        () => driver.query("select 1 / (select 0) as boom", SIGNED),
        Error,
        "division by zero",
      );
      // Its ROLLBACK before the Sync was skipped: one more, on its own.
      assertEquals(proxy.counted.texts.slice(mark).at(-1), "ROLLBACK");
      assertEquals(
        proxy.counted.texts.slice(mark).filter((t) => t === "ROLLBACK").length,
        2,
        proxy.counted.texts.slice(mark).join(" | "),
      );
      // The same session serves the next read (in an aborted transaction it
      // would fail "current transaction is aborted").
      assertEquals(await pid(), before);
    } finally {
      await driver.close();
      await proxy.close();
    }
  },
});
