/**
 * `dbport activity` (the log) and `dbport clients` (who connected in the last
 * five minutes), read from `state.db`.
 *
 * @module
 */

import {
  ActivityLog,
  type ActivityRow,
  CLIENT_WINDOW_MS,
} from "../app/activity_log.ts";
import type { StateDb } from "../app/state_db.ts";
import { sleep } from "../base/sleep.ts";
import {
  formatTime,
  integerFlag,
  localTimes,
  parseFlags,
  table,
} from "./args.ts";
import {
  BRIDGE_EXECUTABLE,
  BRIDGE_ITSELF,
  BRIDGE_TOKEN_NAME,
  isBridgeItself,
} from "../base/identity.ts";
import { type CliIO, UsageError } from "./io.ts";

/** How often `--follow` looks for new rows. */
const FOLLOW_POLL_MS = 500;

/** Options of {@linkcode activityCommand}. */
export interface ActivityOptions {
  /** Ends `--follow` (the entry point wires SIGINT/SIGTERM to it). */
  stop?: AbortSignal;
  /** A saved connection's name by its id (the log keeps only the id). */
  connectionName?: (id: string) => string | undefined;
}

function line(row: ActivityRow, name: (id: string) => string): string {
  // The bridge's own token stands for whichever client runs it: that
  // client's name, from its clientInfo, says who it was.
  const who = row.principalKind === "anonymous"
    ? "anonymous"
    : isBridgeItself(row.tokenName, row.clientName)
    ? BRIDGE_ITSELF
    : row.tokenName === BRIDGE_TOKEN_NAME
    ? `${row.clientName ?? "a stdio client"} (via ${BRIDGE_EXECUTABLE})`
    : row.tokenName ?? "(no valid token)";
  const client = row.clientName === null
    ? "-"
    : row.clientVersion === null
    ? row.clientName
    : `${row.clientName} ${row.clientVersion}`;
  const parts = [
    formatTime(row.time),
    row.outcome.padEnd(11),
    who,
    client,
    row.method ?? "-",
  ];
  if (row.target !== null) parts.push(row.target);
  if (row.connectionId !== null) {
    parts.push(`connection=${name(row.connectionId)}`);
  }
  if (row.errorCode !== null) parts.push(`code=${row.errorCode}`);
  if (row.detail !== null) parts.push(`(${localTimes(row.detail)})`);
  parts.push(`${row.durationMs} ms`);
  return parts.join("  ");
}

function json(row: ActivityRow, name: (id: string) => string): string {
  return JSON.stringify({
    ...row,
    time: new Date(row.time).toISOString(),
    connectionName: row.connectionId === null ? null : name(row.connectionId),
  });
}

/** Run `activity [--limit N] [--follow] [--json]`. */
export async function activityCommand(
  db: StateDb,
  args: string[],
  io: CliIO,
  options: ActivityOptions = {},
): Promise<number> {
  const parsed = parseFlags("activity", args, {
    limit: { type: "string" },
    follow: { type: "boolean" },
    json: { type: "boolean" },
  });
  if (parsed.positionals.length > 0) {
    throw new UsageError(
      `activity: unexpected argument "${parsed.positionals[0]}"`,
    );
  }
  const limit = integerFlag(parsed, "limit", 50, 100_000);
  const name = (id: string) => options.connectionName?.(id) ?? id;
  const format = (row: ActivityRow) =>
    parsed.flags.json === true ? json(row, name) : line(row, name);
  const log = new ActivityLog(db);
  let last = 0;
  const print = (rows: ActivityRow[]) => {
    for (const row of rows) {
      io.out(format(row));
      last = Math.max(last, row.id);
    }
  };
  const first = await log.recent(limit);
  if (first.length === 0 && parsed.flags.follow !== true) {
    if (parsed.flags.json !== true) io.out("No activity recorded yet.");
    return 0;
  }
  print(first);
  if (parsed.flags.follow !== true) return 0;
  const stop = options.stop;
  const stopped = () => stop?.aborted === true;
  while (!stopped()) {
    await sleep(FOLLOW_POLL_MS, stop);
    if (stopped()) break;
    print(await log.recent(10_000, last));
  }
  return 0;
}

/** Run `clients [--json]`. */
export async function clientsCommand(
  db: StateDb,
  args: string[],
  io: CliIO,
  now = Date.now(),
): Promise<number> {
  const parsed = parseFlags("clients", args, { json: { type: "boolean" } });
  if (parsed.positionals.length > 0) {
    throw new UsageError(
      `clients: unexpected argument "${parsed.positionals[0]}"`,
    );
  }
  const clients = await new ActivityLog(db).clients(now);
  if (parsed.flags.json === true) {
    io.out(JSON.stringify(
      clients.map((client) => ({
        name: client.name,
        version: client.version,
        tokenName: client.tokenName,
        firstSeen: new Date(client.firstSeen).toISOString(),
        lastSeen: new Date(client.lastSeen).toISOString(),
        requests: client.requests,
      })),
      null,
      2,
    ));
    return 0;
  }
  if (clients.length === 0) {
    io.out(
      `No client was seen in the last ${CLIENT_WINDOW_MS / 60_000} minutes.`,
    );
    return 0;
  }
  for (
    const row of table(
      ["CLIENT", "VERSION", "TOKEN", "FIRST SEEN", "LAST SEEN", "REQUESTS"],
      clients.map((client) => [
        client.name,
        client.version ?? "-",
        // The bridge's own token name means nothing to a person: say how
        // that client came in, as activity does.
        client.tokenName === BRIDGE_TOKEN_NAME
          ? `(via ${BRIDGE_EXECUTABLE})`
          : client.tokenName ?? "anonymous",
        formatTime(client.firstSeen),
        formatTime(client.lastSeen),
        String(client.requests),
      ]),
    )
  ) io.out(row);
  return 0;
}
