/**
 * The two test tiers. `deno task test:unit` runs every test file that is not
 * end-to-end, with PostgreSQL's and MariaDB's ports denied, so a unit test
 * that reaches a database fails (NotCapable) instead of passing slowly;
 * `deno task test:e2e` runs the rest. `deno task test` runs both.
 *
 * A new test file is a unit test unless it sits under an end-to-end folder
 * or is named in {@linkcode E2E_FILES}: every file lands in exactly one
 * tier, and tests/architecture_test.ts checks that this list names only
 * files that exist outside those folders.
 *
 * @module
 */

/** Folders whose tests are all end-to-end. */
export const E2E_DIRS: readonly string[] = ["tests/e2e/", "tests/load/"];

/**
 * End-to-end tests outside {@linkcode E2E_DIRS}: they reach PostgreSQL or
 * MariaDB, run dbport's CLI as a process, or hold a lock from another runtime.
 */
export const E2E_FILES: readonly string[] = [
  "tests/db/outsider_stop60_test.ts",
  "tests/db/cascade_every_row_test.ts",
  "tests/db/outsider_stop61_test.ts",
  "tests/db/outsider_stop62_test.ts",
  "tests/db/outsider_stop62_pg_test.ts",
  "tests/db/outsider_stop63_test.ts",
  "tests/db/outsider_stop63_pg_test.ts",
  // Reads its thread's CPU time from /proc/thread-self, which Deno grants
  // only with every permission (the unit tier denies the databases' ports).
  "tests/db/pg_parse_off_loop_test.ts",
  // A lock held by another process (deno, python3's sqlite3).
  "tests/app/file_lock_test.ts",
  "tests/app/state_client_test.ts",
  // dbport's CLI as a process.
  "tests/cli/connections_add_test.ts",
  "tests/cli/connections_cli_test.ts",
  "tests/cli/install_test.ts",
  "tests/cli/walkthrough_test.ts",
  "tests/console/app_test.ts",
  // PostgreSQL or MariaDB.
  "tests/cli/connections_private_test.ts",
  "tests/cli/harden_test.ts",
  "tests/db/column_types_test.ts",
  "tests/db/drivers_test.ts",
  "tests/db/pg_read_differential_test.ts",
  "tests/db/mysql_credentials_test.ts",
  "tests/db/mysql_cut_session_test.ts",
  "tests/db/mysql_plain_test.ts",
  "tests/db/mysql_pool_wait_test.ts",
  "tests/db/pg_huge_value_test.ts",
  "tests/db/pg_read_edges_test.ts",
  "tests/db/pg_lean_read_test.ts",
  "tests/db/pg_parked_test.ts",
  "tests/db/outsider_stop46_test.ts",
  "tests/db/outsider_stop47_test.ts",
  "tests/db/outsider_stop48_test.ts",
  "tests/db/outsider_stop49_test.ts",
  "tests/db/outsider_stop49b_test.ts",
  "tests/db/cancel_resend_test.ts",
  "tests/db/outsider_stop50_test.ts",
  "tests/db/outsider_stop51_test.ts",
  "tests/db/outsider_stop52_test.ts",
  "tests/db/outsider_stop53_test.ts",
  "tests/db/outsider_stop54_test.ts",
  "tests/db/outsider_stop55_test.ts",
  "tests/db/outsider_stop56_test.ts",
  "tests/db/outsider_stop57_test.ts",
  "tests/db/outsider_stop58_test.ts",
  "tests/db/outsider_stop59_test.ts",
  "tests/db/typegrant_test.ts",
  "tests/db/every_row_approval_test.ts",
  "tests/db/typechange_test.ts",
  "tests/db/every_row_concurrent_test.ts",
  "tests/db/pg_read_test.ts",
  "tests/db/pg_tls_test.ts",
  "tests/db/pg_tls_client_cert_test.ts",
  "tests/db/pg_socket_factory_test.ts",
  "tests/db/pg_several_hosts_test.ts",
  "tests/db/mysql_huge_value_test.ts",
  "tests/db/pg_allowlist_test.ts",
  "tests/db/pg_vet_test.ts",
  "tests/db/pool_state_test.ts",
  "tests/db/secret_source_test.ts",
  "tests/db/session_gone_test.ts",
  "tests/db/sqlite_worker_test.ts",
  "tests/db/type_fidelity_test.ts",
  // A SQLite database opened through the real driver: its start-up, beside
  // the unit tier's parallel files on two cores, has outlasted the driver's
  // 10 s statement timeout.
  "tests/db/lazy_driver_test.ts",
];

/** The databases' ports, denied to the unit tier. */
const DATABASE_PORTS = ["127.0.0.1", "localhost", "[::1]"].flatMap((host) => [
  `${host}:5432`,
  `${host}:3306`,
]);

/**
 * `deno test`'s flags and the environment for a tier: the unit tier in
 * parallel with the databases' ports denied and `CI` set, so a unit test
 * that needs a database fails instead of skipping.
 */
export function tierRun(
  tier: "unit" | "e2e",
): { flags: string[]; env: Record<string, string> } {
  return tier === "unit"
    ? {
      flags: [
        "--allow-all",
        `--deny-net=${DATABASE_PORTS.join(",")}`,
        "--parallel",
      ],
      env: { CI: "1" },
    }
    : { flags: ["--allow-all"], env: {} };
}

/** The tier a test file (a path from the repository root) runs in. */
export function tierOf(path: string): "unit" | "e2e" {
  return E2E_DIRS.some((dir) => path.startsWith(dir)) ||
      E2E_FILES.includes(path)
    ? "e2e"
    : "unit";
}

/** Every test file under tests/, as paths from the repository root. */
export async function testFiles(root: URL): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(new URL(dir, root))) {
      const path = `${dir}${entry.name}`;
      if (entry.isDirectory) await walk(`${path}/`);
      else if (/_test\.tsx?$/.test(entry.name)) found.push(path);
    }
  };
  await walk("tests/");
  return found.sort();
}
