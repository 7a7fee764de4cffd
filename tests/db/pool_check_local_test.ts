/**
 * A statement check the engine answers from its parser alone (`checkLocal`,
 * SELECT 1, a syntax error) takes none of the connection's sessions: it is
 * answered while every session is held. One that asks the catalog still
 * waits for a session, and a driver without `checkLocal` is gated as before.
 */

import { assertEquals } from "@std/assert";
import { DriverPool } from "../../lib/db/pool.ts";
import { SESSIONS } from "../../lib/db/session_share.ts";
import {
  type EngineCheck,
  NO_OPINION,
  type QueryResult,
} from "../../lib/db/types.ts";
import { FakeDriver } from "../_fake_driver.ts";
import { READ_OPTIONS } from "../_db.ts";

const LOCAL: EngineCheck = { ok: false, message: "syntax error at end" };
const OPTIONS = { signal: new AbortController().signal, timeoutMs: 5_000 };

/** A driver whose queries wait for `release`, whose checks are counted. */
class HeldDriver extends FakeDriver {
  checked: string[] = [];
  #release: (() => void)[] = [];

  override query(): Promise<QueryResult> {
    return new Promise((resolve) =>
      this.#release.push(() => resolve(this.result))
    );
  }
  constructor() {
    super("postgres");
    // Every check is counted, with its text.
    this.check = ((sql: string) => {
      this.checked.push(sql);
      return Promise.resolve(NO_OPINION);
    }) as unknown as FakeDriver["check"];
  }
  release(): void {
    for (const release of this.#release.splice(0)) release();
  }
}

/** Hold every session of `pool`'s connection `id` with unfinished queries. */
function holdAll(pool: DriverPool, id: string): Promise<unknown>[] {
  // Each owner may hold all but one session: two owners fill them.
  return Array.from(
    { length: SESSIONS },
    (_, i) =>
      pool.get({ id, engine: "postgres", url: "postgres://h/db" }, `o${i % 2}`)
        .query("select pg_sleep(1)", READ_OPTIONS),
  );
}

Deno.test("a check the parser answers alone is answered while every session is held; one that asks the catalog waits", async () => {
  const driver = Object.assign(new HeldDriver(), {
    checkLocal: (sql: string) =>
      Promise.resolve(sql === "select 1" ? LOCAL : null),
  });
  const pool = new DriverPool({ open: () => driver });
  const id = crypto.randomUUID();
  const spec = { id, engine: "postgres" as const, url: "postgres://h/db" };
  const held = holdAll(pool, id);
  const local = await pool.get(spec, "o3").check("select 1", "read", OPTIONS);
  assertEquals(local, LOCAL);
  assertEquals(driver.checked, []);
  let answered = false;
  const catalog = pool.get(spec, "o3").check("select * from t", "read", OPTIONS)
    .then((verdict) => {
      answered = true;
      return verdict;
    });
  await new Promise((resolve) => setTimeout(resolve, 0));
  assertEquals(answered, false, "a catalog check waits for a session");
  driver.release();
  assertEquals(await catalog, NO_OPINION);
  assertEquals(driver.checked, ["select * from t"]);
  await Promise.all(held);
  await pool.closeAll();
});

Deno.test("a driver without checkLocal is checked through a session as before", async () => {
  const driver = new HeldDriver();
  const pool = new DriverPool({ open: () => driver });
  const id = crypto.randomUUID();
  const spec = { id, engine: "postgres" as const, url: "postgres://h/db" };
  const held = holdAll(pool, id);
  let answered = false;
  const check = pool.get(spec, "o3").check("select 1", "read", OPTIONS)
    .then(() => answered = true);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assertEquals(answered, false);
  driver.release();
  await check;
  assertEquals(driver.checked, ["select 1"]);
  await Promise.all(held);
  await pool.closeAll();
});
