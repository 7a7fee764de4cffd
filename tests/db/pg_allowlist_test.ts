/**
 * The committed PostgreSQL read allowlist (lib/db/postgres/allowlist.json):
 * no function of an excluded family is in it, and on a live server every OID
 * still names the signature the file lists.
 */

import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import {
  allowlistEntries,
  writeAllowlistEntries,
} from "../../lib/db/postgres/allowlist.ts";
import {
  EXCLUDED_SIGNATURES,
  excludedFamily,
} from "../../scripts/pg_allowlist_families.ts";
import { needs, POSTGRES_URL } from "../_db.ts";

Deno.test("the allowlist holds no function of an excluded family", () => {
  const entries = allowlistEntries();
  assert(entries.length > 1000, `only ${entries.length} entries`);
  const bad = entries.filter(([, signature]) => {
    const name = signature.slice(0, signature.indexOf("("));
    return excludedFamily(name) !== null || EXCLUDED_SIGNATURES.has(signature);
  });
  assertEquals(bad, []);
  // The families name what the issue names; a spot check of each.
  for (
    const name of [
      "pg_terminate_backend",
      "pg_cancel_backend",
      "pg_stat_reset",
      "pg_stat_reset_shared",
      "pg_reload_conf",
      "pg_rotate_logfile",
      "pg_read_file",
      "pg_ls_dir",
      "pg_stat_file",
      "lo_import",
      "lo_export",
      "dblink_exec",
      "pg_advisory_lock",
      "pg_try_advisory_xact_lock",
      "set_config",
      "nextval",
      "setval",
      "currval",
      "pg_sleep",
      "txid_current",
      "pg_current_xact_id",
      "pg_notify",
      "pg_switch_wal",
      "pg_logical_emit_message",
      "pg_create_restore_point",
      "query_to_xml",
      "cursor_to_xml",
      "database_to_xml",
      "ts_stat",
    ]
  ) {
    assert(excludedFamily(name) !== null, `${name} is in no excluded family`);
  }
  const listed = new Set(
    entries.map(([, signature]) => signature.slice(0, signature.indexOf("("))),
  );
  for (
    const name of [
      "lower",
      "jsonb_build_object",
      "generate_series",
      "xpath",
      "now",
      "count",
    ]
  ) {
    assert(
      listed.has(name),
      `${name} is missing: ordinary reads would be refused`,
    );
  }
  assert(
    !entries.some(([, signature]) => signature === "ts_rewrite(tsquery,text)"),
  );
});

Deno.test("the write list names the reviewed functions a write would miss, and no signal, configuration, replication or file function", () => {
  const names = new Set(
    writeAllowlistEntries().map(([, signature]) =>
      signature.slice(0, signature.indexOf("("))
    ),
  );
  for (
    const name of [
      "nextval",
      "setval",
      "currval",
      "lastval",
      "set_config",
      "pg_advisory_xact_lock",
      "pg_notify",
      "pg_sleep",
      "txid_current",
      "pg_current_xact_id",
      "eqsel",
    ]
  ) assert(names.has(name), `${name} is missing from the write list`);
  for (
    const name of [
      "pg_terminate_backend",
      "pg_cancel_backend",
      "pg_signal_backend",
      "pg_reload_conf",
      "pg_rotate_logfile",
      "pg_switch_wal",
      "pg_create_physical_replication_slot",
      "pg_create_logical_replication_slot",
      "pg_promote",
      "pg_backup_start",
      "pg_stat_reset",
      "pg_read_file",
      "lo_import",
      "lo_export",
      "pg_logical_emit_message",
    ]
  ) assert(!names.has(name), `${name} is on the write list`);
});

Deno.test(
  "every allowlisted OID (read and write lists) names its listed signature on the server",
  needs("postgres"),
  async () => {
    const sql = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    try {
      await sql.unsafe("SET search_path = pg_catalog");
      const entries = [...allowlistEntries(), ...writeAllowlistEntries()];
      const rows = await sql.unsafe(
        "SELECT oid::int AS oid, oid::regprocedure::text AS signature FROM pg_proc WHERE oid = ANY ($1::int[])",
        [entries.map(([oid]) => oid)],
      ) as unknown as { oid: number; signature: string }[];
      const server = new Map(rows.map((row) => [row.oid, row.signature]));
      const moved = entries.filter(([oid, signature]) =>
        server.has(oid) && server.get(oid) !== signature
      );
      assertEquals(moved, []);
    } finally {
      await sql.end();
    }
  },
);
