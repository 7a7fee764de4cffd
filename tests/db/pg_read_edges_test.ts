/**
 * dbport's own PostgreSQL read (lib/db/postgres/pg_read.ts on a session postgres.js
 * lends it, lib/db/postgres/pg_wire.ts) at its edges (issue 38): every message split
 * across TCP chunks, every type of the type-fidelity matrix the same as
 * postgres.js's path reads it, cut reads whose own cancel request lands late
 * (after the statement ended, on its clean-up) under concurrency, timeouts
 * and cancels racing the hand-back, dbport's own catalog statements beside
 * the reads, and reads waiting while a value too
 * large for any answer is stopped mid-stream.
 */

import { assert, assertEquals } from "@std/assert";
import { openPostgres } from "../../lib/db/postgres/postgres.ts";
import type { Driver, QueryOptions } from "../../lib/db/types.ts";
import { needs, openFixture, READ_OPTIONS } from "../_db.ts";
import { choppedSocket } from "../_pg_driver.ts";

/** The fixture's URL with an application_name of this test's own. */
function ownUrl(url: string): { url: string; app: string } {
  const app = `dbport_edges_${crypto.randomUUID().slice(0, 8)}`;
  const withApp = new URL(url);
  withApp.searchParams.set("application_name", app);
  return { url: withApp.toString(), app };
}

/** One literal of each type the type-fidelity matrix covers. */
const LITERALS = [
  "(-32768)::smallint",
  "2147483647::integer",
  "(-9223372036854775808)::bigint",
  "9007199254740993::bigint",
  "12345678901234567890.123456789::numeric",
  "'NaN'::numeric",
  "12.5::money",
  "'NaN'::double precision",
  "'-Infinity'::double precision",
  "'-0'::double precision",
  "1.5e300::double precision",
  "0.1::real",
  "E'é👩‍👩‍👧 שלום\\u200b\\ttab\\nline'::text",
  "'NULL'::text",
  "'\\x00ff10'::bytea",
  "false",
  "'2024-02-29'::date",
  "'infinity'::date",
  "'13:14:15.5'::time",
  "'13:14:15+05:30'::timetz",
  "'2024-02-29 13:14:15.123456'::timestamp",
  "'2024-02-29 13:14:15.123456+02'::timestamptz",
  "'1 year 2 mons 3 days 04:05:06'::interval",
  "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
  "'192.168.0.1/24'::inet",
  "'10.0.0.0/8'::cidr",
  "'null'::json",
  "'null'::jsonb",
  `'"x"'::jsonb`,
  `'{"a": [1, null, "NULL"]}'::jsonb`,
  "ARRAY[1, NULL]",
  "ARRAY['x', NULL, 'NULL', '', ' s ']",
  "ARRAY[true, NULL]",
  "ARRAY['2024-01-01'::date, NULL]",
  "ARRAY[1.50, NULL]",
  `ARRAY['{"a":1}'::jsonb, NULL]`,
  `'{{"a b","c,d"},{"e\\"f",NULL}}'::text[][]`,
  "'[0:1]={7,8}'::int[]",
  "'[1,2)'::int4range",
  "B'101'::bit(3)",
  "'(1,2)'::point",
  "'((0,0),(1,1))'::box",
];

const MATRIX = `select ${
  LITERALS.map((literal, i) => `${literal} as c${i}`).join(", ")
}, repeat('y', 70000) as long union all select ${
  LITERALS.map(() => "null").join(", ")
}, null`;

Deno.test({
  name:
    "postgres read: messages split across TCP chunks (1 and 7 bytes) read every type as postgres.js's path does",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { url } = ownUrl(fixture.url);
    const reference = openPostgres({ url, secrets: [], wiredReads: false });
    const drivers = [1, 7].map((size) =>
      openPostgres({
        url,
        secrets: [],
        wiredReads: true,
        socket: choppedSocket(url, size),
      })
    );
    try {
      const options = { ...READ_OPTIONS, maxCellChars: 100 };
      const expected = await reference.query(MATRIX, options);
      assertEquals(expected.rows.length, 2);
      for (const driver of drivers) {
        const got = await driver.query(MATRIX, options);
        assertEquals(got.columns, expected.columns);
        assertEquals(got.columnTypes, expected.columnTypes);
        assertEquals(got.rows, expected.rows);
        // An error after a row was sent, split the same way.
        const failed = await driver.query(
          "select g, 10 / (3 - g) from generate_series(1, 5) g",
          options,
        ).then(() => "answered", (error: Error) => error.message);
        assert(/division by zero/.test(failed), failed);
        // And the session serves the next read.
        assertEquals((await driver.query("select 3 as x", options)).rows, [
          [3],
        ]);
      }
    } finally {
      await reference.close();
      for (const driver of drivers) await driver.close();
    }
  },
});

/** The matrix in a row over 256 KiB (read as it streams), '' and NULL beside. */
const BIG_MATRIX = `select ${
  LITERALS.map((literal, i) => `${literal} as c${i}`).join(", ")
}, '' as empty, null::text as nothing, repeat('y', 300000) as long, '' as last`;

// Stop 49: a streamed row holding an empty value threw in the socket's data
// handler and ended the process (`select repeat('x', 300000), ''`).
Deno.test({
  name:
    "postgres read: a row over 256 KiB, read as it streams, reads every type, empty texts and NULLs as postgres.js's path does",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { url } = ownUrl(fixture.url);
    const reference = openPostgres({ url, secrets: [], wiredReads: false });
    const drivers = [
      openPostgres({ url, secrets: [], wiredReads: true }),
      openPostgres({
        url,
        secrets: [],
        wiredReads: true,
        socket: choppedSocket(url, 7),
      }),
    ];
    try {
      const options = { ...READ_OPTIONS, maxCellChars: 100 };
      const expected = await reference.query(BIG_MATRIX, options);
      assertEquals(expected.rows.length, 1);
      assertEquals(expected.rows[0]!.at(-1), "");
      for (const driver of drivers) {
        const got = await driver.query(BIG_MATRIX, options);
        assertEquals(got.columns, expected.columns);
        assertEquals(got.rows, expected.rows);
        assertEquals(got.truncation, expected.truncation);
        assertEquals((await driver.query("select 4 as x", options)).rows, [
          [4],
        ]);
      }
    } finally {
      await reference.close();
      for (const driver of drivers) await driver.close();
    }
  },
});

/** The backends a driver's reads ran on, asked of each read itself. */
async function backendOf(driver: Driver, options: QueryOptions) {
  const result = await driver.query("select pg_backend_pid() as pid", options);
  return Number(result.rows[0]![0]);
}

Deno.test({
  name:
    "postgres read: cut reads stop their statements, timeouts and cancels race the hand-back, and no session is lost or answers another's read",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { url } = ownUrl(fixture.url);
    const driver = openPostgres({ url, secrets: [], wiredReads: true });
    const pids = new Set<number>();
    const wrong: string[] = [];
    const until = Date.now() + 6_000;
    // Past its byte budget a read stops its statement with a cancel
    // request, which often lands after the statement ended (on the
    // ROLLBACK pipelined after it).
    const cutReader = async () => {
      while (Date.now() < until) {
        const result = await driver.query(
          "select g, repeat('x', 200) from generate_series(1, 100000) g",
          { ...READ_OPTIONS, maxRows: 10_000, maxBytes: 200_000 },
        ).catch((error: Error) => error);
        if (result instanceof Error) wrong.push(`cut: ${result.message}`);
        else if (!result.truncation.bytes) wrong.push("cut: not cut");
      }
    };
    // Stopped by a timeout or its caller at any moment, from before the
    // statement ran to after its answer came.
    const stopped = async (n: number) => {
      while (Date.now() < until) {
        const abort = new AbortController();
        setTimeout(() => abort.abort(), (n * 7) % 30);
        const result = await driver.query(
          "select count(*) from generate_series(1, 200000)",
          { ...READ_OPTIONS, signal: abort.signal, timeoutMs: 1 + n % 20 },
        ).catch((error: Error) => error);
        if (result instanceof Error && !/cancel|timeout/.test(result.message)) {
          wrong.push(`stopped: ${result.message}`);
        }
      }
    };
    // dbport's own statements beside them (a statement's vetting, the
    // listings): postgres.js once queued these on a session it then lent
    // to a read, which took their answers for its own.
    const catalog = async () => {
      const call = { signal: READ_OPTIONS.signal, timeoutMs: 10_000 };
      while (Date.now() < until) {
        try {
          const checked = await driver.check(
            "select g from generate_series(1, 3) g",
            "read",
            call,
          );
          if (!checked.ok) wrong.push(`check: ${JSON.stringify(checked)}`);
          const schemas = await driver.listSchemas(call);
          if (schemas.schemas.length === 0) wrong.push("listSchemas: none");
        } catch (error) {
          wrong.push(`catalog: ${(error as Error).message}`);
        }
      }
    };
    // Plain reads beside them: each answers its own statement, or fails.
    const plain = async (n: number) => {
      while (Date.now() < until) {
        try {
          const result = await driver.query(
            `select ${n} as n, pg_backend_pid() as pid`,
            READ_OPTIONS,
          );
          if (result.rows[0]?.[0] !== n) {
            wrong.push(`plain: ${JSON.stringify(result)}`);
          } else pids.add(Number(result.rows[0]![1]));
        } catch (error) {
          wrong.push(`plain: ${(error as Error).message}`);
        }
      }
    };
    try {
      await Promise.all([
        cutReader(),
        cutReader(),
        ...[1, 2, 3].map(stopped),
        catalog(),
        catalog(),
        ...[1, 2, 3, 4, 5, 6].map(plain),
      ]);
      assertEquals(wrong.slice(0, 5), [], `${wrong.length} wrong`);
      // Since outsider stop 50 a session whose stop's cancel request may
      // still land (sent again, or its statement ended without the 57014 it
      // would cause) is closed, not reused (docs/security.md "Reads on
      // PostgreSQL"): the stopped reads here close sessions, and the
      // pool opens others. Once the stops are over the pool is four sessions
      // again: none lost, no pool replaced for them.
      const after = new Set<number>();
      for (let i = 0; i < 8; i++) {
        after.add(await backendOf(driver, READ_OPTIONS));
      }
      assert(after.size <= 4, `${after.size} sessions: ${[...after]}`);
      assert(pids.size > 0, "the plain reads answered");
    } finally {
      await driver.close();
    }
  },
});

Deno.test({
  name:
    "postgres read: eight reads waiting while a value too large for the answer is stopped mid-stream all answer",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { url } = ownUrl(fixture.url);
    const driver = openPostgres({ url, secrets: [], wiredReads: true });
    try {
      const eight = () =>
        Array.from({ length: 8 }, (_, i) =>
          driver.query(
            `with recursive c(x) as (select 1 union all select x + 1 from c where x < 100000) select (count(*) + ${i})::int as n from c`,
            { ...READ_OPTIONS, timeoutMs: 30_000 },
          ).then((result) => result.rows, (error: Error) => error.message));
      const expected = Array.from({ length: 8 }, (_, i) => [[100000 + i]]);
      for (let round = 0; round < 2; round++) {
        const huge = driver.query(
          "select repeat('x', 200000000) as huge, 1 as one",
          { ...READ_OPTIONS, maxBytes: 1_000_000, maxCellChars: 100 },
        );
        // Eight while it streams, eight as soon as it was stopped (they
        // wait while its session closes).
        const beside = eight();
        const cut = await huge;
        assert(String(cut.rows[0]![0]).includes("the statement was stopped"));
        const after = eight();
        assertEquals(await Promise.all(beside), expected);
        assertEquals(await Promise.all(after), expected);
      }
    } finally {
      await driver.close();
    }
  },
});
