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
    assertEquals(version.rows[0]!.user_version, 4);
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
    assertEquals(version.rows[0]!.user_version, 4);
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

Deno.test("openStateDb() upgrades a version 2 database: its history rows kept, approved_at null", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-state-" });
  try {
    const db = await openStateDb(home);
    // What version 2 left: the query history without approved_at, one row.
    await db.client.batch([
      "DROP TABLE query_history",
      "DROP TABLE token_budgets",
      `CREATE TABLE query_history (
        id INTEGER PRIMARY KEY AUTOINCREMENT, time INTEGER NOT NULL,
        connection_id TEXT NOT NULL, sql TEXT NOT NULL,
        statement_type TEXT NOT NULL, duration_ms REAL NOT NULL,
        row_count INTEGER NOT NULL, rows_affected INTEGER NOT NULL,
        outcome TEXT NOT NULL, error TEXT, client_name TEXT, token_name TEXT)`,
      `INSERT INTO query_history (time, connection_id, sql, statement_type,
         duration_ms, row_count, rows_affected, outcome)
         VALUES (1, 'c1', 'select 1', 'read', 1.5, 1, 0, 'success')`,
      "PRAGMA user_version = 2",
    ], "write");
    db.close();
    const again = await openStateDb(home);
    const version = await again.client.execute("PRAGMA user_version");
    assertEquals(version.rows[0]!.user_version, 4);
    const rows = await again.client.execute(
      "SELECT sql, approved_at FROM query_history",
    );
    assertEquals(rows.rows.map((row) => [row.sql, row.approved_at]), [[
      "select 1",
      null,
    ]]);
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
