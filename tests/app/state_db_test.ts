import { assertEquals, assertRejects } from "@std/assert";
import { openStateDb } from "../../lib/app/state_db.ts";

Deno.test("openStateDb() creates state.db 0600 in WAL mode, and reopens it", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-state-" });
  try {
    const db = await openStateDb(home);
    const mode = await db.client.execute("PRAGMA journal_mode");
    assertEquals(mode.rows[0]!.journal_mode, "wal");
    db.close();
    if (Deno.build.os !== "windows") {
      for (const file of ["state.db", "state.db-wal", "state.db-shm"]) {
        const stat = await Deno.stat(`${home}/${file}`).catch(() => null);
        if (stat !== null) assertEquals(stat.mode! & 0o777, 0o600, file);
      }
    }
    const again = await openStateDb(home);
    const version = await again.client.execute("PRAGMA user_version");
    assertEquals(version.rows[0]!.user_version, 3);
    again.close();
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("openStateDb() upgrades a version 1 database, keeping its rows", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-state-" });
  try {
    const db = await openStateDb(home);
    // What version 1 left: no query history yet, a token row.
    await db.client.batch([
      "DROP TABLE query_history",
      "DROP TABLE token_budgets",
      `INSERT INTO tokens (id, name, prefix, salt, hash, level, created_at)
         VALUES ('t1', 'kept', 'dbp_x', 's', 'h', 'readOnly', 1)`,
      "PRAGMA user_version = 1",
    ], "write");
    db.close();
    const again = await openStateDb(home);
    const version = await again.client.execute("PRAGMA user_version");
    assertEquals(version.rows[0]!.user_version, 3);
    const history = await again.client.execute(
      "SELECT count(*) AS n FROM query_history",
    );
    assertEquals(history.rows[0]!.n, 0);
    const tokens = await again.client.execute("SELECT name FROM tokens");
    assertEquals(tokens.rows.map((row) => row.name), ["kept"]);
    again.close();
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("openStateDb() refuses a schema newer than this dbport", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-state-" });
  try {
    const db = await openStateDb(home);
    await db.client.execute("PRAGMA user_version = 99");
    db.close();
    await assertRejects(
      () => openStateDb(home),
      Error,
      "schema version 99 is newer",
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
