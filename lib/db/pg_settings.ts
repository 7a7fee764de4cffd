/**
 * The server settings a statement may change, by allowlist: in `SET`,
 * `SET LOCAL`, `SET ... FROM CURRENT`, in `CREATE|ALTER FUNCTION|PROCEDURE
 * ... SET`, as the constant first argument of `set_config()`, in a saved
 * function's `proconfig` when it is called, and in a URL's `options=-c`.
 * `RESET` (one setting or `ALL`) returns to the session's start-up values
 * and is always fine.
 *
 * Settings change how the server reads the text dbport vetted: with
 * `standard_conforming_strings = off` the server reads `'a\' , '` as one
 * string where dbport's lexer and libpg_query read two, so a body or a
 * statement vetted as harmless literals called pg_read_file (outsider stop
 * 56). Others change who runs it (`role`, `session_authorization`), whether
 * it may write (`default_transaction_read_only`), or the server's own
 * checks and logs (`session_replication_role = replica` skips foreign keys
 * and triggers, `allow_system_table_mods`, `log_statement`). Allowed are
 * the settings that tune a statement's time, memory, plan and output
 * formats; every other name, an extension's or a custom `x.y` one
 * included, is refused naming it.
 *
 * @module
 */

/** The settings a statement may set, lower case (the server folds them). */
const ALLOWED: ReadonlySet<string> = new Set([
  // Time and memory limits.
  "statement_timeout",
  "lock_timeout",
  "idle_in_transaction_session_timeout",
  "idle_session_timeout",
  "transaction_timeout",
  "work_mem",
  "maintenance_work_mem",
  "hash_mem_multiplier",
  "temp_buffers",
  // Name resolution: dbport reads a function's and the session's search
  // path where it resolves names (search_path.ts, vet_sql.ts).
  "search_path",
  // Output formats of values dbport reads as text.
  "datestyle",
  "intervalstyle",
  "timezone",
  "extra_float_digits",
  "client_min_messages",
  "application_name",
  // Only a warning; the strings are read as before.
  "escape_string_warning",
  // Off makes a query that row security would filter fail; it bypasses
  // nothing (that takes BYPASSRLS).
  "row_security",
  // The current transaction's isolation (not its read-only-ness).
  "transaction_isolation",
  "transaction_deferrable",
  "default_transaction_isolation",
  "default_transaction_deferrable",
  // The planner's choices and costs.
  "enable_async_append",
  "enable_bitmapscan",
  "enable_distinct_reordering",
  "enable_gathermerge",
  "enable_group_by_reordering",
  "enable_hashagg",
  "enable_hashjoin",
  "enable_incremental_sort",
  "enable_indexonlyscan",
  "enable_indexscan",
  "enable_material",
  "enable_memoize",
  "enable_mergejoin",
  "enable_nestloop",
  "enable_parallel_append",
  "enable_parallel_hash",
  "enable_partition_pruning",
  "enable_partitionwise_aggregate",
  "enable_partitionwise_join",
  "enable_presorted_aggregate",
  "enable_self_join_elimination",
  "enable_seqscan",
  "enable_sort",
  "enable_tidscan",
  "seq_page_cost",
  "random_page_cost",
  "cpu_tuple_cost",
  "cpu_index_tuple_cost",
  "cpu_operator_cost",
  "parallel_setup_cost",
  "parallel_tuple_cost",
  "min_parallel_table_scan_size",
  "min_parallel_index_scan_size",
  "effective_cache_size",
  "effective_io_concurrency",
  "maintenance_io_concurrency",
  "max_parallel_workers_per_gather",
  "max_parallel_maintenance_workers",
  "parallel_leader_participation",
  "default_statistics_target",
  "constraint_exclusion",
  "cursor_tuple_fraction",
  "from_collapse_limit",
  "join_collapse_limit",
  "plan_cache_mode",
  "recursive_worktable_factor",
  "geqo",
  "geqo_threshold",
  "geqo_effort",
  "geqo_pool_size",
  "geqo_generations",
  "geqo_selection_bias",
  "geqo_seed",
  "jit",
  "jit_above_cost",
  "jit_inline_above_cost",
  "jit_optimize_above_cost",
  "jit_expressions",
  "jit_tuple_deforming",
]);

/** Why some well-known settings are refused, for the message. */
const WHY: Readonly<Record<string, string>> = {
  standard_conforming_strings:
    "changes how the server reads string literals: dbport vets a text as the server reads it with standard strings",
  backslash_quote: "changes how the server reads string literals",
  client_encoding:
    "changes how the server reads the statement's bytes (a multibyte encoding can hide a quote)",
  check_function_bodies:
    "lets a function be created without the server reading its body",
  role: "changes the role the session runs as",
  session_authorization: "changes the role the session runs as",
  default_transaction_read_only:
    "changes whether the session's transactions may write",
  transaction_read_only: "changes whether the transaction may write",
  "session characteristics":
    "changes the session's transactions' defaults (read-only-ness among them)",
  "transaction snapshot": "imports another session's snapshot",
  session_replication_role:
    "skips foreign keys, rules and triggers (a superuser's setting)",
  allow_system_table_mods:
    "lets the server's catalogs be changed (a superuser's setting)",
  ignore_system_indexes: "changes how the server reads its catalogs",
  lo_compat_privileges:
    "skips the privilege checks of large objects (a superuser's setting)",
  temp_tablespaces: "chooses where the server writes files",
  default_tablespace: "chooses where the server writes files",
  bytea_output: "changes how binary values are written to dbport",
};

/** Why setting `name` is refused; null when a statement may set it. */
export function settingRefusal(name: string): string | null {
  const lower = name.toLowerCase();
  if (ALLOWED.has(lower)) return null;
  const why = Object.hasOwn(WHY, lower)
    ? WHY[lower]
    : lower.startsWith("log_") || lower.startsWith("debug_")
    ? "changes what the server logs (the administrator's)"
    : lower.includes(".")
    ? "is an extension's or a custom setting, which dbport cannot judge"
    : lower.endsWith("_preload_libraries")
    ? "loads code into the server"
    : "is not on dbport's allowlist of settings that tune time, memory, plans and output formats";
  return `setting ${name} ${why}; dbport lets a statement change only the settings that tune time, memory, plans and output formats (docs/security.md "Settings")`;
}

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `SET TRANSACTION`'s items a statement may give. */
const TRANSACTION_ITEMS = new Set([
  "transaction_isolation",
  "transaction_deferrable",
]);

/**
 * Why a `VariableSetStmt` (a statement of its own, or a function's SET
 * item) sets what dbport refuses; null when it may. `RESET` is fine.
 */
export function setStatementRefusal(node: Node): string | null {
  const kind = String(node.kind ?? "");
  if (kind === "VAR_RESET" || kind === "VAR_RESET_ALL") return null;
  const name = String(node.name ?? "");
  if (kind === "VAR_SET_MULTI" && name === "TRANSACTION") {
    for (const item of Array.isArray(node.args) ? node.args : []) {
      const element = isNode(item) && isNode(item.DefElem)
        ? item.DefElem
        : undefined;
      const defname = String(element?.defname ?? "");
      if (!TRANSACTION_ITEMS.has(defname)) return settingRefusal(defname);
    }
    return null;
  }
  return settingRefusal(kind === "VAR_SET_MULTI" ? name.toLowerCase() : name);
}

/** A node that is a constant string, cast or not; its text, else null. */
function constantText(node: unknown): string | null {
  if (!isNode(node)) return null;
  const constant = isNode(node.A_Const) ? node.A_Const : undefined;
  if (constant !== undefined) {
    const sval = isNode(constant.sval) ? constant.sval.sval : undefined;
    return typeof sval === "string" ? sval : null;
  }
  const cast = isNode(node.TypeCast) ? node.TypeCast : undefined;
  if (cast === undefined) return null;
  // A cast that keeps the text as it is: to text, varchar or name with no
  // length (char(4) would cut it).
  const type = isNode(cast.typeName) ? cast.typeName : {};
  const parts = (Array.isArray(type.names) ? type.names : []).map((part) =>
    isNode(part) && isNode(part.String) ? String(part.String.sval) : ""
  );
  const plain = (parts.length === 1 ||
    (parts.length === 2 && parts[0] === "pg_catalog")) &&
    ["text", "varchar", "name"].includes(parts.at(-1) ?? "") &&
    (!Array.isArray(type.typmods) || type.typmods.length === 0) &&
    type.arrayBounds === undefined;
  return plain ? constantText(cast.arg) : null;
}

/**
 * Why a call of a function named `set_config` sets what dbport refuses, or
 * null: its setting name (first argument, or `setting_name =>`) must be a
 * constant string naming an allowed setting. Any `set_config`, whatever
 * its schema: one of the database's own by that name is refused no more
 * than the built-in is.
 */
export function setConfigRefusal(args: unknown): string | null {
  const list = Array.isArray(args) ? args : [];
  const named = list.map((arg) =>
    isNode(arg) && isNode(arg.NamedArgExpr) ? arg.NamedArgExpr : undefined
  );
  const first = named[0] === undefined
    ? list[0]
    : named.find((arg) => arg?.name === "setting_name")?.arg;
  const name = constantText(first);
  if (name === null) {
    return `set_config() with a setting name that is not a constant string: dbport must know which setting a statement changes (only those that tune time, memory, plans and output formats)`;
  }
  const refusal = settingRefusal(name);
  return refusal === null ? null : `set_config(): ${refusal}`;
}

/**
 * Why a function's saved settings (`pg_proc.proconfig`, `name=value`
 * items), applied by the server at each call before it reads the body,
 * hold one dbport refuses; null when none.
 */
export function configRefusal(config: unknown): string | null {
  if (!Array.isArray(config)) return null;
  for (const item of config) {
    const text = String(item);
    const equals = text.indexOf("=");
    const refusal = settingRefusal(equals < 0 ? text : text.slice(0, equals));
    if (refusal !== null) return `runs with ${refusal}`;
  }
  return null;
}

/**
 * Why a connection URL's `options` (libpq's command-line switches for the
 * server) sets what dbport refuses, or null. Only `-c name=value` and
 * `--name=value` switches, each naming an allowed setting.
 */
export function startupOptionsRefusal(options: string): string | null {
  const words: string[] = [];
  let word = "";
  let started = false;
  for (let i = 0; i < options.length; i++) {
    const char = options[i]!;
    if (char === "\\" && i + 1 < options.length) {
      word += options[++i];
      started = true;
    } else if (/\s/.test(char)) {
      if (started) words.push(word);
      word = "";
      started = false;
    } else {
      word += char;
      started = true;
    }
  }
  if (started) words.push(word);
  for (let i = 0; i < words.length; i++) {
    const switchWord = words[i]!;
    let item: string | undefined;
    if (switchWord === "-c") item = words[++i];
    else if (switchWord.startsWith("-c")) item = switchWord.slice(2);
    else if (switchWord.startsWith("--")) item = switchWord.slice(2);
    const equals = item?.indexOf("=") ?? -1;
    if (item === undefined || equals <= 0) {
      return `the URL's options holds ${
        JSON.stringify(switchWord)
      }: dbport takes only -c name=value there`;
    }
    const refusal = settingRefusal(item.slice(0, equals).replaceAll("-", "_"));
    if (refusal !== null) return `the URL's options: ${refusal}`;
  }
  return null;
}

/**
 * Why one node of a parse tree sets what dbport refuses, or null: a
 * `VariableSetStmt` (a statement, or a function's SET item) or a call of
 * `set_config`. Read at every depth (pg_parse.ts `walk`), function bodies
 * included.
 */
export function settingsReach(key: string, node: Node): string | null {
  if (key === "VariableSetStmt") return setStatementRefusal(node);
  if (key !== "FuncCall") return null;
  const parts = Array.isArray(node.funcname) ? node.funcname : [];
  const last = parts.at(-1);
  const name = isNode(last) && isNode(last.String) ? last.String.sval : "";
  return String(name).toLowerCase() === "set_config"
    ? setConfigRefusal(node.args)
    : null;
}
