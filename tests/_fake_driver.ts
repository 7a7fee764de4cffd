/**
 * A driver that records what it was asked and answers what the test says:
 * the tools' argument, statement and access logic tested without a database
 * (the real engines are tested in `tests/db/` and `tests/e2e/`).
 *
 * @module
 */

import { ConnectionStore } from "../lib/app/connection_store.ts";
import {
  CONNECTION_DEFAULTS,
  type SavedConnection,
} from "../lib/app/connections.ts";
import type { HistoryEntry } from "../lib/app/query_history.ts";
import { DEFAULT_SETTINGS, type Settings } from "../lib/app/settings.ts";
import { DriverPool } from "../lib/db/pool.ts";
import {
  type Driver,
  type Engine,
  NO_OPINION,
  type QueryOptions,
  type QueryResult,
  type TableDetail,
  type TableQuery,
  type TableSummary,
} from "../lib/db/types.ts";
import { CursorCodec } from "../lib/protocol/cursor.ts";
import type { Consent, ConsentAsk } from "../lib/features/consent.ts";
import type { CallContext, Principal, Scope } from "../lib/features/context.ts";
import type { FeatureDeps } from "../lib/features/deps.ts";
import { ToolFailure } from "../lib/features/tools/failure.ts";

/** One call the fake driver received. */
export type DriverCall =
  | { method: "query"; sql: string; options: QueryOptions }
  | { method: "listTables"; schema: string | undefined; rowCounts: boolean }
  | { method: "describeTable"; table: string; schema: string | undefined };

/** A driver answering canned results, recording every call. */
export class FakeDriver implements Driver {
  readonly engine: Engine;
  readonly calls: DriverCall[] = [];
  tables: TableSummary[] = [];
  detail: TableDetail | null = null;
  result: QueryResult = {
    columns: ["one"],
    rows: [[1]],
    rowsAffected: 0,
    truncated: false,
    truncation: { rows: false, bytes: false, cells: 0 },
  };

  constructor(engine: Engine = "sqlite") {
    this.engine = engine;
  }

  version() {
    return Promise.resolve("Fake 1.0");
  }
  listSchemas() {
    return Promise.resolve({
      current: "main",
      schemas: [{ name: "main", tables: this.tables.length, views: 0 }],
    });
  }
  listTables(options: TableQuery) {
    this.calls.push({
      method: "listTables",
      schema: options.schema,
      rowCounts: options.rowCounts,
    });
    const tables = this.tables.slice(0, options.limit);
    return Promise.resolve({
      tables,
      total: this.tables.length,
      more: tables.length < this.tables.length,
    });
  }
  searchSchema() {
    return Promise.resolve({ matches: [], total: 0 });
  }
  describeTable(table: string, options: { schema?: string }) {
    this.calls.push({ method: "describeTable", table, schema: options.schema });
    return Promise.resolve(this.detail);
  }
  overview() {
    return Promise.resolve({ tables: [], totalTables: 0 });
  }
  fingerprint() {
    return Promise.resolve("fp");
  }
  query(sql: string, options: QueryOptions) {
    this.calls.push({ method: "query", sql, options });
    // As a real driver: a write's hook sees the result before COMMIT, and a
    // throw there (a preview's dry run) rolls it back.
    if (options.mode === "write") {
      try {
        options.beforeCommit?.(this.result);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    options.onCommit?.();
    return Promise.resolve(this.result);
  }
  check() {
    return Promise.resolve(NO_OPINION);
  }
  loginRisks(): Promise<string[]> {
    return Promise.resolve([]);
  }
  close() {
    return Promise.resolve();
  }
}

/** A saved connection of the fake driver's engine. */
export function fakeConnection(
  fields: Partial<SavedConnection> = {},
): SavedConnection {
  return {
    id: crypto.randomUUID(),
    name: "Fake",
    engine: "sqlite",
    url: "/nowhere/fake.db",
    ...CONNECTION_DEFAULTS,
    ...fields,
  };
}

/** What a test reads back from the fake deps. */
export interface FakeDeps extends FeatureDeps {
  driver: FakeDriver;
  asked: ConsentAsk[];
  recorded: HistoryEntry[];
}

/** Feature deps over one fake driver; consent answers `answer`. */
export function fakeDeps(
  connections: readonly SavedConnection[],
  options: {
    driver?: FakeDriver;
    settings?: Partial<Settings>;
    answer?: "approve" | "deny";
  } = {},
): FakeDeps {
  const driver = options.driver ?? new FakeDriver();
  const asked: ConsentAsk[] = [];
  const recorded: HistoryEntry[] = [];
  const consent: Consent = {
    obtain(_ctx, ask) {
      asked.push(ask);
      return options.answer === "deny"
        ? Promise.reject(new ToolFailure("denied", "the user said no"))
        : Promise.resolve();
    },
    granted: () => true,
  };
  const settings = { ...DEFAULT_SETTINGS, ...options.settings };
  const exportsId = crypto.randomUUID().slice(0, 8);
  return {
    connections: new ConnectionStore(connections),
    pool: new DriverPool({ open: () => driver }),
    settings: () => settings,
    consent,
    history: {
      record: (entry) => void recorded.push(entry),
      recent: () => Promise.resolve([]),
    },
    cursors: new CursorCodec(),
    // Created by the first export only.
    exportDirectory: () =>
      `${Deno.env.get("TMPDIR") ?? "/tmp"}/dbport-exports-${exportsId}`,
    driver,
    asked,
    recorded,
  };
}

/** A principal with `scopes` (and an allowlist when given). */
export function principalWith(
  scopes: readonly Scope[],
  connections: ReadonlySet<string> | null = null,
): Principal {
  return {
    key: "token:test",
    kind: "token",
    name: "test",
    tokenId: "test",
    scopes: new Set(scopes),
    connections,
  };
}

/** A call context for `principal` (fields overridden as given), recording progress. */
export function callContext(
  principal: Principal,
  overrides: Partial<CallContext> = {},
): CallContext & { progressed: number[] } {
  const progressed: number[] = [];
  return {
    era: "modern",
    protocolVersion: "2026-07-28",
    method: "tools/call",
    params: {},
    clientCapabilities: {},
    clientInfo: undefined,
    trace: {},
    principal,
    signal: new AbortController().signal,
    shutdown: new AbortController().signal,
    session: null,
    id: 1,
    progress: (progress) => void progressed.push(progress),
    holdAnswer: () => {},
    notify: () => {},
    ...overrides,
    progressed,
  };
}
