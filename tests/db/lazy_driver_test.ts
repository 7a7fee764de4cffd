import { assertEquals, assertRejects } from "@std/assert";
import { lazyDriver } from "../../lib/db/lazy_driver.ts";
import type { Driver } from "../../lib/db/types.ts";
import { FakeDriver } from "../_fake_driver.ts";

const CALL = { signal: new AbortController().signal, timeoutMs: 1_000 };

Deno.test("lazyDriver() loads nothing until the first call, then loads once", async () => {
  let loads = 0;
  const driver = lazyDriver("sqlite", () => {
    loads++;
    return Promise.resolve(new FakeDriver());
  });
  assertEquals(driver.engine, "sqlite");
  assertEquals(loads, 0);
  await Promise.all([driver.version(CALL), driver.version(CALL)]);
  await driver.fingerprint(CALL);
  assertEquals(loads, 1);
});

Deno.test("lazyDriver() close() of a driver never used loads nothing", async () => {
  let loads = 0;
  const driver = lazyDriver("postgres", () => {
    loads++;
    return Promise.resolve(new FakeDriver());
  });
  await driver.close();
  assertEquals(loads, 0);
});

Deno.test("lazyDriver() tries a failed load again at the next call", async () => {
  let loads = 0;
  const inner: Driver = new FakeDriver();
  const driver = lazyDriver("mysql", () => {
    loads++;
    return loads === 1
      ? Promise.reject(new Error("module not found"))
      : Promise.resolve(inner);
  });
  await assertRejects(() => driver.version(CALL), Error, "module not found");
  await driver.version(CALL);
  assertEquals(loads, 2);
  await driver.close();
});

Deno.test("lazyDriver() streams a read through the loaded driver, and says so when it cannot", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dbport-lazy-" });
  const path = `${dir}/lazy.db`;
  await Deno.writeFile(path, new Uint8Array());
  const { openSqlite } = await import("../../lib/db/sqlite/sqlite.ts");
  const driver = lazyDriver(
    "sqlite",
    () => Promise.resolve(openSqlite({ path, secrets: [] })),
  );
  try {
    let seen = 0;
    const result = await driver.streamRead!(
      "with recursive g(n) as (select 1 union all select n + 1 from g where n < 2500) select n from g",
      { ...READ, maxRows: 10, maxBytes: 1_000_000, maxCellChars: 100 },
      (_columns, rows) => {
        seen += rows.length;
        return Promise.resolve();
      },
    );
    assertEquals([result.rows, seen], [2500, 2500]);
  } finally {
    await driver.close();
    await Deno.remove(dir, { recursive: true });
  }
  const fake = lazyDriver("postgres", () => Promise.resolve(new FakeDriver()));
  await assertRejects(
    () => fake.streamRead!("select 1", READ, () => Promise.resolve()),
    Error,
    "cannot stream",
  );
});

const READ = {
  mode: "read" as const,
  signal: new AbortController().signal,
  timeoutMs: 10_000,
  maxRows: 10,
  maxBytes: 1_000_000,
  maxCellChars: 100,
};
