/**
 * The server's re-sync of private columns (lib/server/private_sync.ts):
 * when it runs, what it answers while it runs and after it failed, and that
 * a failed one is tried again.
 */

import { assertEquals } from "@std/assert";
import { ConnectionStore } from "../../lib/app/connection_store.ts";
import {
  connectionsText,
  type SavedConnection,
} from "../../lib/app/connections.ts";
import type { PrivateSync } from "../../lib/app/private_sync.ts";
import { PrivateColumnGuard } from "../../lib/server/private_sync.ts";
import { savedConnection } from "../_connections.ts";

const quiet = () => {};

function outcome(problem: string | null): PrivateSync {
  return {
    statements: ["GRANT …"],
    columns: [],
    views: [],
    notes: [],
    problem,
  };
}

Deno.test("PrivateColumnGuard re-syncs listed connections at start and on each change, and refuses while a sync failed", async () => {
  const listed = savedConnection(
    { engine: "postgres", url: "postgres://u@h/db" },
    "Shop",
    { privateColumns: ["*.email"], aiLogin: { user: "ai", password: "p" } },
  );
  const plain = savedConnection(
    { engine: "postgres", url: "postgres://u@h/other" },
    "Other",
  );
  const store = new ConnectionStore([listed, plain]);
  const synced: string[] = [];
  const answers: (string | null)[] = ["the database did not answer", null];
  let now = 1_000;
  const guard = new PrivateColumnGuard(
    store,
    quiet,
    (connection: SavedConnection) => {
      synced.push(
        `${connection.name}:${(connection.privateColumns ?? []).join()}`,
      );
      return Promise.resolve(outcome(answers.shift() ?? null));
    },
    () => now,
  );
  // Only the connection with a list is synced at start.
  assertEquals(synced, ["Shop:*.email"]);
  assertEquals(await guard.problem(plain), null);
  assertEquals(await guard.problem(listed), "the database did not answer");
  // Too soon to try again; later it is tried again, and holds.
  now += 1_000;
  assertEquals(await guard.problem(listed), "the database did not answer");
  assertEquals(synced.length, 1);
  now += 20_000;
  assertEquals(await guard.problem(listed), null);
  assertEquals(synced.length, 2);
  // A changed list is synced again; one not yet synced is refused until it is.
  const changed = { ...listed, privateColumns: ["*.email", "*.ssn"] };
  assertEquals(
    await guard.problem(changed),
    "its private columns are being put in place",
  );
  store.apply(connectionsText([changed, plain]), "connections.json", quiet);
  assertEquals(synced.at(-1), "Shop:*.email,*.ssn");
  assertEquals(await guard.problem(changed), null);
  // An emptied list is synced too: the login reads those columns again.
  const emptied = { ...changed, privateColumns: [] };
  store.apply(connectionsText([emptied, plain]), "connections.json", quiet);
  assertEquals(synced.at(-1), "Shop:");
  assertEquals(await guard.problem(emptied), null);
  // A connection nobody changed is never synced again.
  assertEquals(synced.filter((s) => s.startsWith("Other")), []);
  await guard.settled();
});

Deno.test("PrivateColumnGuard syncs again when the schema's fingerprint moved, looking at most once a second", async () => {
  const listed = savedConnection(
    { engine: "postgres", url: "postgres://u@h/db" },
    "Shop",
    { privateColumns: ["*.email"], aiLogin: { user: "ai", password: "p" } },
  );
  let syncs = 0;
  let now = 0;
  let schema = "a";
  let looks = 0;
  const guard = new PrivateColumnGuard(
    new ConnectionStore([listed]),
    quiet,
    () => {
      syncs++;
      return Promise.resolve(outcome(null));
    },
    () => now,
  );
  const fingerprint = () => {
    looks++;
    return Promise.resolve(schema);
  };
  assertEquals(syncs, 1);
  // The first look after a sync syncs again (a table made in between).
  assertEquals(await guard.problem(listed, fingerprint), null);
  assertEquals([syncs, looks], [2, 1]);
  // Within the second: no look at all.
  now += 500;
  assertEquals(await guard.problem(listed, fingerprint), null);
  assertEquals([syncs, looks], [2, 1]);
  // Later, the same schema: looked at, not synced.
  now += 1_000;
  assertEquals(await guard.problem(listed, fingerprint), null);
  assertEquals([syncs, looks], [2, 2]);
  // A table was added: synced before the read.
  schema = "b";
  now += 1_000;
  assertEquals(await guard.problem(listed, fingerprint), null);
  assertEquals([syncs, looks], [3, 3]);
  // A fingerprint that fails is the read's own failure, not a refusal.
  now += 1_000;
  assertEquals(
    await guard.problem(listed, () => Promise.reject(new Error("down"))),
    null,
  );
  await guard.settled();
});
