/**
 * Generate lib/db/postgres/allowlist.json from a PostgreSQL server's catalog
 * (see lib/db/postgres/README.md): every built-in function (pg_catalog, OID
 * below 16384) that is IMMUTABLE or STABLE, plus a short reviewed list of
 * VOLATILE ones that only read, minus the excluded families
 * (scripts/pg_allowlist_families.ts), functions that only the server itself
 * calls (arguments of type `internal`, handlers, triggers), grouped by
 * category for review. Built-in labels are facts set by PostgreSQL's own
 * sources, which is why they may seed the list; the result is then pruned by
 * hand and committed.
 *
 *   deno run --config deno.dev.json -A scripts/pg_allowlist.ts [postgres-url]
 *
 * @module
 */

import postgres from "postgres";
import {
  EXCLUDED_SIGNATURES,
  excludedFamily,
} from "./pg_allowlist_families.ts";

/** VOLATILE built-ins that only read or only compute (reviewed by hand). */
export const HARMLESS_VOLATILE: ReadonlySet<string> = new Set([
  "random",
  "gen_random_uuid",
  "clock_timestamp",
  "timeofday",
  "pg_blocking_pids",
  "pg_safe_snapshot_blocking_pids",
  "pg_database_size",
  "pg_indexes_size",
  "pg_relation_size",
  "pg_table_size",
  "pg_tablespace_size",
  "pg_total_relation_size",
  "pg_is_in_recovery",
  "pg_jit_available",
  "pg_lock_status",
  "pg_get_backend_memory_contexts",
  "pg_get_shmem_allocations",
  "pg_get_multixact_members",
  "pg_partition_ancestors",
  "pg_partition_tree",
  "pg_prepared_xact",
  "pg_stat_have_stats",
  "pg_xact_commit_timestamp",
  "pg_xact_commit_timestamp_origin",
  "pg_xact_status",
  "pg_last_committed_xact",
  "pg_notification_queue_usage",
  "pg_collation_actual_version",
  "pg_database_collation_actual_version",
]);

/**
 * VOLATILE built-ins a write token may call besides the read list: each
 * changes only the connection's own database or its own session and
 * transaction (reviewed by hand; lib/db/postgres/README.md). Every other
 * built-in is refused to write tokens too, as reaching past the database
 * (other sessions, the server's configuration, files, replication, WAL).
 */
export const WRITE_VOLATILE: ReadonlyMap<string, string> = new Map([
  ["nextval", "advances a sequence of the database"],
  ["setval", "sets a sequence of the database"],
  ["currval", "the session's last value of a sequence"],
  ["lastval", "the session's last sequence value"],
  ["pg_sequence_last_value", "a sequence's last value"],
  ["setseed", "the session's own random state"],
  ["txid_current", "assigns the transaction its id"],
  ["txid_current_if_assigned", "the transaction's id"],
  ["txid_current_snapshot", "the transaction's snapshot"],
  ["txid_snapshot_in", "a snapshot value's input"],
  ["txid_snapshot_out", "a snapshot value's output"],
  ["txid_snapshot_recv", "a snapshot value's binary input"],
  ["txid_snapshot_send", "a snapshot value's binary output"],
  ["txid_snapshot_xmin", "a snapshot value's part"],
  ["txid_snapshot_xmax", "a snapshot value's part"],
  ["txid_snapshot_xip", "a snapshot value's part"],
  ["txid_visible_in_snapshot", "compares a snapshot value"],
  ["txid_status", "a transaction's commit status"],
  ["pg_current_xact_id", "assigns the transaction its id"],
  ["pg_advisory_xact_lock", "a lock released at the transaction's end"],
  // Session-level advisory locks of the database: dbport's DISCARD ALL after
  // every write releases them (tests/e2e/readonly_attacks_test.ts).
  ["pg_advisory_lock", "a lock released when the session is cleaned"],
  ["pg_advisory_lock_shared", "a lock released when the session is cleaned"],
  ["pg_try_advisory_lock", "a lock released when the session is cleaned"],
  [
    "pg_try_advisory_lock_shared",
    "a lock released when the session is cleaned",
  ],
  ["pg_advisory_unlock", "releases the session's own lock"],
  ["pg_advisory_unlock_shared", "releases the session's own lock"],
  ["pg_advisory_unlock_all", "releases the session's own locks"],
  ["pg_advisory_xact_lock_shared", "a lock released at the transaction's end"],
  ["pg_try_advisory_xact_lock", "a lock released at the transaction's end"],
  [
    "pg_try_advisory_xact_lock_shared",
    "a lock released at the transaction's end",
  ],
  ["set_config", "the session's own settings (which ones: settings allowlist)"],
  ["pg_notify", "NOTIFY, which a token may send"],
  ["pg_sleep", "holds its own session, within the call's timeout"],
  ["pg_sleep_for", "holds its own session, within the call's timeout"],
  ["pg_sleep_until", "holds its own session, within the call's timeout"],
  ["suppress_redundant_updates_trigger", "a trigger on the row written"],
  ["tsvector_update_trigger", "a trigger on the row written"],
  ["tsvector_update_trigger_column", "a trigger on the row written"],
  ["brin_summarize_new_values", "maintains an index of the database"],
  ["brin_summarize_range", "maintains an index of the database"],
  ["brin_desummarize_range", "maintains an index of the database"],
  ["gin_clean_pending_list", "maintains an index of the database"],
]);

/** Table-sample methods: handlers the server calls for TABLESAMPLE. */
const SAMPLE_METHODS = new Set(["system", "bernoulli"]);

/** Return types of functions only the server calls. */
const SERVER_ONLY_RESULTS = new Set([
  "trigger",
  "event_trigger",
  "fdw_handler",
  "index_am_handler",
  "table_am_handler",
  "language_handler",
  "tsm_handler",
]);

const CATALOG = `
SELECT p.oid::int AS oid, p.proname AS name, p.oid::regprocedure::text AS signature,
       p.provolatile AS volatility, p.prokind AS kind, p.prorettype::regtype::text AS result,
       coalesce(array_to_string(p.proargtypes::regtype[], ','), '') AS args
  FROM pg_proc p
 WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.oid < 16384
   AND p.prokind IN ('f', 'a', 'w')
 ORDER BY p.oid`;

type Row = {
  oid: number;
  name: string;
  signature: string;
  volatility: string;
  kind: string;
  result: string;
  args: string;
};

/** Whether the generator keeps `row` (before the hand review). */
export function kept(row: Row): boolean {
  if (excludedFamily(row.name) !== null) return false;
  if (EXCLUDED_SIGNATURES.has(row.signature)) return false;
  if (SAMPLE_METHODS.has(row.name)) return true;
  if (serverOnly(row)) return false;
  return row.volatility !== "v" || HARMLESS_VOLATILE.has(row.name);
}

/** Whether only the server calls `row` (an `internal` or handler type). */
function serverOnly(row: Row): boolean {
  return SERVER_ONLY_RESULTS.has(row.result) || row.result === "internal" ||
    row.args.split(",").includes("internal");
}

/**
 * Whether a write token may call `row` beyond the read list: a reviewed
 * VOLATILE built-in (WRITE_VOLATILE), or one only the server calls (an
 * operator's selectivity estimator, an index class's support function)
 * outside every excluded family.
 */
export function keptForWrite(row: Row): boolean {
  if (kept(row)) return false;
  if (WRITE_VOLATILE.has(row.name)) return true;
  if (excludedFamily(row.name) !== null) return false;
  if (EXCLUDED_SIGNATURES.has(row.signature)) return false;
  return serverOnly(row);
}

const CATEGORIES: [string, (row: Row) => boolean][] = [
  ["aggregates", (row) => row.kind === "a"],
  ["window functions", (row) => row.kind === "w"],
  [
    "type input and output",
    (row) =>
      /cstring/.test(`${row.args},${row.result}`) ||
      /(recv|send)$/.test(row.name),
  ],
  ["json", (row) => /json/.test(`${row.name},${row.args},${row.result}`)],
  [
    "text search",
    (row) =>
      /ts(vector|query)|regconfig|regdictionary/.test(
        `${row.args},${row.result}`,
      ) || /^ts_/.test(row.name),
  ],
  ["ranges", (row) => /range/.test(`${row.name},${row.args},${row.result}`)],
  [
    "arrays",
    (row) => /array|\[\]/.test(`${row.name},${row.args},${row.result}`),
  ],
  [
    "date and time",
    (row) => /time|date|interval/.test(`${row.args},${row.result}`),
  ],
  [
    "system catalog and session",
    (row) =>
      /^(pg_|has_|current_|session_|obj_|col_|shobj_|format_type|version|inet_(client|server))/
        .test(row.name) || /^reg/.test(`${row.args},${row.result}`),
  ],
  [
    "geometry and network",
    (row) =>
      /point|line|lseg|box|path|polygon|circle|inet|cidr|macaddr/.test(
        `${row.args},${row.result}`,
      ),
  ],
  [
    "math",
    (row) =>
      /int|float|numeric|real|double|money/.test(`${row.args},${row.result}`),
  ],
  [
    "strings and binary",
    (row) => /text|char|name|bytea|bit/.test(`${row.args},${row.result}`),
  ],
  ["other", () => true],
];

/** Write tokens' categories: reviewed names, then what only the server calls. */
const WRITE_CATEGORIES: [string, (row: Row) => boolean][] = [
  [
    "the database's own state (reviewed: WRITE_VOLATILE)",
    (row) => WRITE_VOLATILE.has(row.name),
  ],
  ["only the server calls", () => true],
];

if (import.meta.main) {
  // `--write`: lib/db/postgres/write_allowlist.json (the built-ins a write
  // token may call beyond allowlist.json); otherwise allowlist.json.
  const write = Deno.args.includes("--write");
  const url = Deno.args.find((arg) => !arg.startsWith("--")) ??
    "postgres://postgres@127.0.0.1:5432/test";
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe("SET search_path = pg_catalog");
    const [{ version }] = await sql.unsafe(
      "SELECT current_setting('server_version') AS version",
    ) as unknown as [{ version: string }];
    const rows = (await sql.unsafe(CATALOG)) as unknown as Row[];
    const keeps = write ? keptForWrite : kept;
    const categories = write ? WRITE_CATEGORIES : CATEGORIES;
    const groups = new Map<string, [number, string][]>();
    for (const row of rows.filter(keeps)) {
      const [category] = categories.find(([, fits]) => fits(row)) ??
        ["other"];
      const list = groups.get(category) ?? [];
      list.push([row.oid, row.signature]);
      groups.set(category, list);
    }
    const functions = Object.fromEntries(
      categories.map(([name]) => [name, groups.get(name) ?? []]),
    );
    const file = new URL(
      `../lib/db/postgres/${write ? "write_allowlist" : "allowlist"}.json`,
      import.meta.url,
    );
    const lines = [
      "{",
      `  "generatedFrom": ${JSON.stringify(`PostgreSQL ${version}`)},`,
      `  "functions": {`,
      Object.entries(functions).map(([category, list]) =>
        `    ${JSON.stringify(category)}: [\n${
          list.map((entry) => `      ${JSON.stringify(entry)}`).join(",\n")
        }\n    ]`
      ).join(",\n"),
      "  }",
      "}",
      "",
    ];
    await Deno.writeTextFile(file, lines.join("\n"));
    // deno-lint-ignore no-console
    console.log(
      `${rows.filter(keeps).length} of ${rows.length} built-in functions kept`,
    );
  } finally {
    await sql.end();
  }
}
