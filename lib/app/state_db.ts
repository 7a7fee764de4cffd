/**
 * The app's state database: a SQLite file `state.db` in the app data
 * directory holding the access tokens (hashed), the activity log and the
 * query history.
 *
 * WAL mode so the server and the CLI read and write it at the same time; the
 * file and its `-wal`/`-shm` companions are 0600. The schema is created or
 * upgraded on open, inside one transaction, keyed by `PRAGMA user_version`.
 *
 * @module
 */

import { messageOf } from "../base/message_of.ts";
import { StateClient } from "./state_client.ts";
import { STATE_DB_FILE } from "../base/identity.ts";
import { ensureAppDataDir, inAppDir } from "./paths.ts";

/** Busy timeout: how long a writer waits for the other process's lock. */
const BUSY_TIMEOUT_MS = 5_000;

/** The schema, one entry per version; never edit a shipped entry, append. */
const MIGRATIONS: readonly (readonly string[])[] = [
  [
    `CREATE TABLE tokens (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      prefix TEXT NOT NULL,
      salt TEXT NOT NULL,
      hash TEXT NOT NULL,
      level TEXT NOT NULL CHECK (level IN ('readOnly', 'readWrite', 'fullAccess')),
      connections TEXT,
      created_at INTEGER NOT NULL,
      expires_at INTEGER,
      revoked_at INTEGER,
      last_used_at INTEGER
    )`,
    // Bumped in the same transaction as every token change, so a running
    // server notices a change by reading one row (see tokens.ts).
    `CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)`,
    `INSERT INTO meta (key, value) VALUES ('tokens_generation', 0)`,
    `CREATE TABLE activity (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      time INTEGER NOT NULL,
      principal_kind TEXT NOT NULL,
      token_id TEXT,
      token_name TEXT,
      client_name TEXT,
      client_version TEXT,
      method TEXT,
      target TEXT,
      connection_id TEXT,
      outcome TEXT NOT NULL CHECK (outcome IN ('success', 'denied', 'error', 'rateLimited')),
      error_code INTEGER,
      duration_ms INTEGER NOT NULL,
      sql_digest TEXT,
      traceparent TEXT,
      tracestate TEXT,
      baggage TEXT,
      detail TEXT
    )`,
    `CREATE INDEX activity_time ON activity (time)`,
  ],
  [
    // The SQL clients ran, per connection, while the "queryHistory" setting
    // is on (query_history.ts). Kept apart from the activity log, which
    // stores only a digest of the SQL.
    `CREATE TABLE query_history (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      time INTEGER NOT NULL,
      connection_id TEXT NOT NULL,
      sql TEXT NOT NULL,
      statement_type TEXT NOT NULL,
      duration_ms REAL NOT NULL,
      row_count INTEGER NOT NULL,
      rows_affected INTEGER NOT NULL,
      outcome TEXT NOT NULL CHECK (outcome IN ('success', 'error', 'cancelled', 'timeout')),
      error TEXT,
      client_name TEXT,
      token_name TEXT
    )`,
    `CREATE INDEX query_history_connection ON query_history (connection_id, id)`,
  ],
  [
    // Per-token budgets and the kill switch (token_budgets.ts): keyed by a
    // token's id, or 'bridge' for the stdio bridge's tokens. Changes bump
    // tokens_generation, so a running server reloads them with the tokens.
    `CREATE TABLE token_budgets (
      token_id TEXT PRIMARY KEY,
      max_calls_per_minute INTEGER,
      max_rows_per_hour INTEGER,
      max_writes_per_hour INTEGER,
      paused_at INTEGER
    )`,
  ],
  [
    // When the user approved a write (null: not asked, or a read); rows
    // recorded before are kept as they are.
    `ALTER TABLE query_history ADD COLUMN approved_at INTEGER`,
  ],
];

/** An open state database. */
export interface StateDb {
  readonly client: StateClient;
  readonly path: string;
  close(): void;
}

/** Open (and create or upgrade) `state.db` in an app data directory. */
export async function openStateDb(home: string): Promise<StateDb> {
  await ensureAppDataDir(home);
  const path = inAppDir(home, STATE_DB_FILE);
  // Create the file 0600 before SQLite does, so it is never readable by others.
  const file = await Deno.open(path, {
    create: true,
    write: true,
    mode: 0o600,
  });
  file.close();
  let client: StateClient | null = null;
  try {
    client = new StateClient(path, BUSY_TIMEOUT_MS);
    await client.execute("PRAGMA journal_mode = WAL");
    await migrate(client);
    await restrictCompanions(path);
  } catch (error) {
    client?.close();
    throw new Error(
      `Cannot open the state database ${path}: ${messageOf(error)}`,
      { cause: error },
    );
  }
  const opened = client;
  return { client: opened, path, close: () => opened.close() };
}

async function migrate(client: StateClient): Promise<void> {
  const row = (await client.execute("PRAGMA user_version")).rows[0];
  const current = Number(row?.user_version ?? 0);
  if (current > MIGRATIONS.length) {
    throw new Error(
      `its schema version ${current} is newer than this dbport (${MIGRATIONS.length}); update dbport`,
    );
  }
  if (current === MIGRATIONS.length) return;
  const statements = MIGRATIONS.slice(current).flat();
  await client.batch(
    [...statements, `PRAGMA user_version = ${MIGRATIONS.length}`],
    "write",
  );
}

/** SQLite creates `-wal` and `-shm` with the umask; narrow them to 0600. */
async function restrictCompanions(path: string): Promise<void> {
  if (Deno.build.os === "windows") return;
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    await Deno.chmod(file, 0o600).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
  }
}
