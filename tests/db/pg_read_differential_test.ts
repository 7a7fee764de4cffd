/**
 * dbport's own PostgreSQL reader against postgres.js's path, on random
 * shapes (a fixed seed: the same shapes every run): rows of NULLs, empty
 * texts and byteas, short values, and texts and byteas around every size
 * where the reader changes how it reads — a cell's cut (three bytes a
 * character past `maxCellChars`), a row streamed past 256 KiB, a TCP
 * chunk — under row caps, byte budgets and cell caps. The wired read (on
 * its own socket, and on one whose bytes arrive 4,093 at a time) must
 * answer exactly what postgres.js's path answers: the same rows, cuts and
 * truncation, or the same error. Stop 49: a streamed row holding an empty
 * value ended the process; these shapes found it in 5 of 60.
 */

import { assertEquals } from "@std/assert";
import { openPostgres } from "../../lib/db/postgres/postgres.ts";
import type { Driver, QueryOptions } from "../../lib/db/types.ts";
import { needs, openFixture, READ_OPTIONS } from "../_db.ts";
import { choppedSocket } from "../_pg_driver.ts";

/** A small deterministic generator (an LCG): the shapes are the same each run. */
function generator(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const pick = <T>(items: readonly T[]): T =>
    items[Math.floor(next() * items.length)]!;
  return { next, pick };
}

/** Sizes where the reader reads differently, and either side of them. */
const SIZES = [
  0,
  1,
  2,
  32,
  33,
  34,
  100,
  4093,
  65_536,
  87_000,
  262_000,
  262_144,
  262_150,
  300_000,
  1_000_000,
];

const SHORT = [
  "1",
  "null::int",
  "'{}'::int[]",
  "ARRAY['', NULL, 'x']",
  "'é'",
  "'\\x00'::bytea",
  "''::bytea",
  `'{"a":""}'::jsonb`,
];

/**
 * Values a streamed row converts rather than copies (arrays, json, bytea of
 * every byte, quotes to escape), about `n` bytes on the wire.
 */
const CONVERTED = [
  (n: number) => `array_fill(12345, array[${Math.ceil(n / 6)}])`,
  (n: number) => `array_fill('a"b\\c'::text, array[${Math.ceil(n / 8)}])`,
  (n: number) => `('[' || repeat('1,  ', ${n}) || '1]')::json`,
  (n: number) => `to_jsonb(repeat('é"', ${n}))`,
  (n: number) => `convert_to(repeat('é👩x~', ${n}), 'UTF8')`,
];

function randomValue(
  g: ReturnType<typeof generator>,
  converted = false,
): string {
  const k = g.next();
  if (converted && k >= 0.6) return g.pick(CONVERTED)(g.pick(SIZES));
  if (k < 0.15) return "null::text";
  if (k < 0.3) return "''";
  if (k < 0.4) return g.pick(SHORT);
  const n = g.pick(SIZES);
  const char = g.pick(["x", "é", "👩", "ab"]);
  return k < 0.9
    ? `repeat('${char}', ${n})`
    : `decode(repeat('ff', ${n}), 'hex')`;
}

function randomRead(g: ReturnType<typeof generator>, converted = false) {
  const columns = 1 + Math.floor(g.next() * 4);
  const rows = 1 + Math.floor(g.next() * 3);
  // Converted values' types differ: their rows are one select's, repeated.
  const text = converted
    ? `select ${
      Array.from(
        { length: columns + 2 },
        (_, c) => `${randomValue(g, true)} as c${c}`,
      ).join(", ")
    } from generate_series(1, ${rows})`
    : Array.from(
      { length: rows },
      () =>
        `select ${
          Array.from(
            { length: columns },
            (_, c) => `${randomValue(g)} as c${c}`,
          ).join(", ")
        }`,
    ).join(" union all ");
  const options: QueryOptions = {
    ...READ_OPTIONS,
    maxRows: g.pick([1, 2, 10]),
    maxBytes: g.pick([200, 5_000, 100_000, 10_000_000]),
    maxCellChars: g.pick([10, 33, 100, 40_000, 1_000_000]),
  };
  return { text, options };
}

/** What a driver answers, as one comparable text. */
function answer(driver: Driver, text: string, options: QueryOptions) {
  return driver.query(text, options).then(
    (result) =>
      JSON.stringify({
        columns: result.columns,
        rows: result.rows,
        truncation: result.truncation,
      }),
    (error: Error) => `error: ${error.message}`,
  );
}

Deno.test({
  name:
    "postgres read: 160 random shapes around every size the reader cuts, streams or splits at answer as postgres.js's path does",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const url = new URL(fixture.url);
    url.searchParams.set(
      "application_name",
      `dbport_diff_${crypto.randomUUID().slice(0, 8)}`,
    );
    const reference = openPostgres({
      url: url.href,
      secrets: [],
      wiredReads: false,
    });
    const wired = openPostgres({
      url: url.href,
      secrets: [],
      wiredReads: true,
    });
    const chopped = openPostgres({
      url: url.href,
      secrets: [],
      wiredReads: true,
      socket: choppedSocket(url.href, 4093),
    });
    try {
      // Seed 9: converted values too (arrays, json, every byte of a bytea):
      // a streamed row cuts each value as it ends, and past what is left of
      // the answer keeps only whether it was cut (pg_big_row.ts).
      for (const [seed, shapes] of [[1, 60], [5, 60], [9, 40]] as const) {
        const g = generator(seed);
        for (let i = 0; i < shapes; i++) {
          const { text, options } = randomRead(g, seed === 9);
          const [expected, plain, split] = await Promise.all([
            answer(reference, text, options),
            answer(wired, text, options),
            answer(chopped, text, options),
          ]);
          const shape = `seed ${seed} #${i}: ${text.slice(0, 200)} ${
            JSON.stringify({ ...options, signal: undefined })
          }`;
          assertEquals(plain, expected, shape);
          assertEquals(split, expected, `${shape} (4,093-byte chunks)`);
        }
      }
    } finally {
      await reference.close();
      await wired.close();
      await chopped.close();
    }
  },
});
