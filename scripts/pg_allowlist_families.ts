/**
 * The families of PostgreSQL built-in functions that are never on dbport's
 * read allowlist (lib/db/postgres/allowlist.json), each with why. The
 * generator (scripts/pg_allowlist.ts) leaves them out and a unit test
 * (tests/db/pg_allowlist_test.ts) fails if one appears in the file.
 *
 * @module
 */

/** A family: the names it covers (a pattern over `proname`) and why it is out. */
export interface ExcludedFamily {
  family: string;
  names: RegExp;
  why: string;
}

export const EXCLUDED_FAMILIES: readonly ExcludedFamily[] = [
  {
    family: "signals",
    names: /^pg_(terminate|cancel|signal)_backend$/,
    why: "ends or interrupts other sessions (a role may signal its own)",
  },
  {
    family: "statistics reset",
    names: /^pg_stat_(reset|clear_snapshot|force_next_flush)/,
    why: "wipes or flushes the cluster's statistics",
  },
  {
    family: "configuration",
    names:
      /^(pg_reload_conf|set_config|pg_rotate_logfile.*|pg_log_backend_memory_contexts|pg_config|pg_settings_get_flags)$/,
    why: "reloads or changes settings, rotates logs, writes the server log",
  },
  {
    family: "files",
    names:
      /^(pg_read_file.*|pg_read_binary_file|pg_ls_.*|pg_stat_file|pg_file_.*|pg_hba_file_rules|pg_ident_file_mappings|pg_show_all_file_settings|pg_current_logfile|pg_control_.*)$/,
    why: "reads the server's files or directories",
  },
  {
    family: "large objects",
    names: /^(lo_.*|loread|lowrite)$/,
    why: "creates, writes, imports or exports large objects (files too)",
  },
  {
    family: "other hosts",
    names: /^(dblink.*|postgres_fdw.*)$/,
    why: "connects to other servers (and commits there)",
  },
  {
    family: "advisory locks",
    names: /^pg_(try_)?advisory_/,
    why: "takes or releases locks that outlive the statement",
  },
  {
    family: "sequences",
    names: /^(nextval|setval|currval|lastval|pg_sequence_last_value)$/,
    why: "advances a sequence (no rollback undoes it) or reads session state",
  },
  {
    family: "sleep",
    names: /^pg_sleep/,
    why: "holds a session for as long as asked",
  },
  {
    family: "transaction ids",
    names: /^(txid_.*|pg_current_xact_id)$/,
    why: "assigns a transaction id (a write to the server's state)",
  },
  {
    family: "notifications",
    names: /^pg_notify$/,
    why: "sends a message to every listening session",
  },
  {
    family: "replication, backup and WAL",
    names:
      /^(pg_(backup|start|stop)_.*|pg_switch_wal|pg_create_.*|pg_drop_replication_slot|pg_copy_.*_slot|pg_replication_.*|pg_logical_.*|pg_promote|pg_wal_.*|pg_.*_wal_.*|pg_is_wal_replay_paused|pg_last_xact_replay_timestamp|pg_show_replication_origin_status|pg_export_snapshot|pg_import_system_collations|pg_stop_making_pinned_objects|pg_nextoid|binary_upgrade_.*|pg_extension_config_dump)$/,
    why: "controls replication, backups, WAL or the catalog itself",
  },
  {
    family: "SQL text",
    names:
      /^(query_to_xml.*|cursor_to_xml.*|table_to_xml.*|schema_to_xml.*|database_to_xml.*|ts_stat|pg_cursor|current_query)$/,
    why:
      "runs SQL text dbport never saw (or a cursor's query), or a whole schema's reads",
  },
  {
    family: "index maintenance",
    names:
      /^(brin_summarize_.*|brin_desummarize_range|gin_clean_pending_list|amvalidate)$/,
    why: "changes an index",
  },
  {
    family: "setseed",
    names: /^setseed$/,
    why: "changes the session's random state",
  },
  {
    family: "event triggers, validators and handlers",
    names:
      /^(pg_event_trigger_.*|fmgr_.*_validator|plpgsql_.*|.*handler|suppress_redundant_updates_trigger|tsvector_update_trigger.*|unique_key_recheck|RI_FKey_.*|currtid2|pg_isolation_test_session_is_blocked)$/,
    why: "runs procedural code or only makes sense inside a trigger",
  },
];

/** Signatures (name(args)) left out although their name's other overloads stay. */
export const EXCLUDED_SIGNATURES: ReadonlyMap<string, string> = new Map([
  ["ts_rewrite(tsquery,text)", "runs the SQL text in its second argument"],
]);

/** The family a function name belongs to, or null. */
export function excludedFamily(name: string): ExcludedFamily | null {
  return EXCLUDED_FAMILIES.find((family) => family.names.test(name)) ?? null;
}
