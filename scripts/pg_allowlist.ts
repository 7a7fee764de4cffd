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
  if (SERVER_ONLY_RESULTS.has(row.result)) return false;
  if (row.result === "internal" || row.args.split(",").includes("internal")) {
    return false;
  }
  return row.volatility !== "v" || HARMLESS_VOLATILE.has(row.name);
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

if (import.meta.main) {
  const url = Deno.args[0] ?? "postgres://postgres@127.0.0.1:5432/test";
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe("SET search_path = pg_catalog");
    const [{ version }] = await sql.unsafe(
      "SELECT current_setting('server_version') AS version",
    ) as unknown as [{ version: string }];
    const rows = (await sql.unsafe(CATALOG)) as unknown as Row[];
    const groups = new Map<string, [number, string][]>();
    for (const row of rows.filter(kept)) {
      const [category] = CATEGORIES.find(([, fits]) => fits(row)) ?? ["other"];
      const list = groups.get(category) ?? [];
      list.push([row.oid, row.signature]);
      groups.set(category, list);
    }
    const functions = Object.fromEntries(
      CATEGORIES.map(([name]) => [name, groups.get(name) ?? []]),
    );
    const file = new URL("../lib/db/postgres/allowlist.json", import.meta.url);
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
      `${rows.filter(kept).length} of ${rows.length} built-in functions kept`,
    );
  } finally {
    await sql.end();
  }
}
