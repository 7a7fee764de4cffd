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
