import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { parseBody, parsePostgres } from "../../lib/db/postgres/pg_parse.ts";
import {
  configRefusal,
  settingRefusal,
  startupOptionsRefusal,
} from "../../lib/db/pg_settings.ts";
import { urlProblem } from "../../lib/db/target.ts";
import {
  pgUrlParamsProblem,
  urlForPostgresJs,
} from "../../lib/db/pg_url_params.ts";
import { postgresOptions } from "../../lib/db/postgres/pg_options.ts";

/** The statement's reach as dbport's parse reads it ("" when none). */
async function reachOf(sql: string): Promise<string> {
  const parsed = await parsePostgres(sql);
  assert(parsed.ok && parsed.analysis !== null, sql);
  return parsed.analysis.reach ?? "";
}

Deno.test("settings a statement may set: time, memory, plans, output formats", () => {
  for (
    const name of [
      "statement_timeout",
      "work_mem",
      "search_path",
      "DateStyle",
      "TimeZone",
      "enable_seqscan",
      "jit",
      "application_name",
    ]
  ) assertEquals(settingRefusal(name), null, name);
  for (
    const [name, why] of [
      ["standard_conforming_strings", "string literals"],
      ["Standard_Conforming_Strings", "string literals"],
      ["backslash_quote", "string literals"],
      ["client_encoding", "bytes"],
      ["role", "role the session runs as"],
      ["session_authorization", "role"],
      ["default_transaction_read_only", "may write"],
      ["session_replication_role", "foreign keys"],
      ["allow_system_table_mods", "catalogs"],
      ["lo_compat_privileges", "large objects"],
      ["log_statement", "logs"],
      ["session_preload_libraries", "loads code"],
      ["check_function_bodies", "body"],
      ["temp_tablespaces", "files"],
      ["app.tenant", "custom"],
      ["no_such_setting", "allowlist"],
    ]
  ) {
    const refusal = settingRefusal(name!);
    assert(refusal !== null, name);
    assertStringIncludes(refusal, `setting ${name} `);
    assertStringIncludes(refusal, why!);
  }
});

Deno.test("SET, SET LOCAL, RESET and SET TRANSACTION are read by the allowlist", async () => {
  const refused = [
    "set standard_conforming_strings = off",
    'set "standard_conforming_strings" to off',
    'SET LOCAL "Standard_Conforming_Strings" TO off',
    "set session standard_conforming_strings = off",
    "set standard_conforming_strings from current",
    "set names 'SJIS'",
    "set role postgres",
    "set session authorization postgres",
    "set session characteristics as transaction read write",
    "set transaction read write",
    "set session_replication_role = replica",
  ];
  for (const sql of refused) {
    assertStringIncludes(await reachOf(sql), "setting ", sql);
  }
  const allowed = [
    "set statement_timeout = '5s'",
    "set local work_mem = '64MB'",
    "set search_path = public",
    "set time zone 'UTC'",
    "set transaction isolation level serializable",
    "reset standard_conforming_strings",
    "reset all",
    "reset role",
  ];
  for (const sql of allowed) assertEquals(await reachOf(sql), "", sql);
});

Deno.test("a function's SET clause is read by the same allowlist, CREATE and ALTER", async () => {
  for (
    const sql of [
      "create function s.f() returns text language sql set standard_conforming_strings = off as $$ select 1 $$",
      "create procedure s.p() language sql set session_replication_role = replica as $$ select 1 $$",
      "alter function s.g() set standard_conforming_strings = off",
      "alter function s.g() set allow_system_table_mods = on",
      "alter procedure s.p() set log_statement = 'none'",
      "create function s.f() returns int language sql set lo_compat_privileges = on as $$ select 1 $$",
    ]
  ) assertStringIncludes(await reachOf(sql), "setting ", sql);
  for (
    const sql of [
      "create function s.f() returns int language sql set search_path = s set work_mem = '1MB' as $$ select 1 $$",
      "alter function s.g() reset standard_conforming_strings",
      "alter function s.g() reset all",
    ]
  ) assertEquals(await reachOf(sql), "", sql);
});

Deno.test("set_config: a constant first argument naming an allowed setting", async () => {
  for (
    const sql of [
      "select set_config('standard_conforming_strings', 'off', true)",
      "select pg_catalog.set_config('Standard_Conforming_Strings', 'off', false)",
      "select set_config('standard_conforming_strings'::text, 'off', true)",
      "select set_config(setting_name => 'role', new_value => 'x', is_local => true)",
      "select set_config('work_m' || 'em', '1MB', true)",
      "select set_config(x, 'off', true) from t",
      "select set_config($1, 'off', true)",
      "select set_config('work_mem'::char(4), '1MB', true)",
      "select 1 from t where set_config('session_replication_role', 'replica', true) is not null",
      "create function s.f() returns text language sql begin atomic select set_config('standard_conforming_strings', 'off', true); end",
    ]
  ) assertStringIncludes(await reachOf(sql), "set_config()", sql);
  // A string body is read where it is called (pg_vet.ts), as here.
  const body = await parseBody(
    "select 1; select set_config('standard_conforming_strings', 'off', true)",
  );
  assert(body.ok);
  assertStringIncludes(body.statements[1]?.reach ?? "", "set_config()");
  for (
    const sql of [
      "select set_config('statement_timeout', '5s', true)",
      "select set_config('work_mem'::text, '1MB', true)",
      "select set_config('search_path'::pg_catalog.varchar, 'public', true)",
      "select set_config(new_value => '1MB', setting_name => 'work_mem', is_local => true)",
    ]
  ) assertEquals(await reachOf(sql), "", sql);
});

Deno.test("a saved function's proconfig is read at its call", () => {
  assertEquals(configRefusal(null), null);
  assertEquals(configRefusal(["search_path=s, public", "work_mem=1MB"]), null);
  const refusal = configRefusal([
    "search_path=s",
    "standard_conforming_strings=off",
  ]);
  assert(refusal !== null);
  assertStringIncludes(refusal, "standard_conforming_strings");
  assertStringIncludes(
    configRefusal(["session_replication_role=replica"]) ?? "",
    "foreign keys",
  );
});

Deno.test("a PostgreSQL URL takes only libpq's parameters dbport reads", () => {
  const base = "postgres://u:pw@h:5432/db";
  for (
    const query of [
      "",
      "?sslmode=require",
      "?sslmode=verify-full&sslrootcert=/ca.pem&sslcert=/c&sslkey=/k&sslpassword=x",
      "?target_session_attrs=primary&connect_timeout=5",
      "?application_name=app&options=-c%20statement_timeout%3D5s",
    ]
  ) assertEquals(urlProblem("postgres", `${base}${query}`), null, query);
  const problem = urlProblem(
    "postgres",
    `${base}?sslmode=disable&standard_conforming_strings=off`,
  );
  assert(problem !== null);
  assertStringIncludes(problem, '"standard_conforming_strings"');
  assertStringIncludes(
    pgUrlParamsProblem(
      "postgres://u@h1,h2:5433/db?user=x&backslash_quote=on",
    ) ??
      "",
    '"user", "backslash_quote"',
  );
  // A setting dbport starts every session with itself.
  assertStringIncludes(
    pgUrlParamsProblem(`${base}?TimeZone=Europe/Paris`) ?? "",
    '"TimeZone": dbport starts every session with TimeZone UTC',
  );
  // The settings a statement may change, the session may start with.
  assertEquals(
    urlProblem("postgres", `${base}?search_path=app&statement_timeout=5s`),
    null,
  );
  // Encoded names are read as the drivers read them.
  assertStringIncludes(
    pgUrlParamsProblem(`${base}?standard%5Fconforming_strings=off`) ?? "",
    '"standard_conforming_strings"',
  );
  // Other engines' URLs are theirs.
  assertEquals(urlProblem("mysql", "mysql://u@h/db?charset=utf8"), null);
});

Deno.test("postgres.js gets no URL parameter it would pass to the server, and dbport's start-up settings win", () => {
  assertEquals(
    urlForPostgresJs(
      "postgres://u@h/db?sslmode=require&application_name=a&standard_conforming_strings=off&options=x&search_path=s",
    ),
    "postgres://u@h/db?sslmode=require",
  );
  assertEquals(
    urlForPostgresJs("postgres://u@h/db?TimeZone=x"),
    "postgres://u@h/db",
  );
  const connection = postgresOptions({
    url:
      "postgres://u@h/db?application_name=mine&options=-c%20work_mem%3D1MB&standard_conforming_strings=off&search_path=app&sslmode=disable",
    secrets: [],
  }).connection as Record<string, unknown>;
  assertEquals(connection, {
    application_name: "mine",
    options: "-c work_mem=1MB",
    search_path: "app",
    TimeZone: "UTC",
    default_transaction_read_only: true,
    standard_conforming_strings: "on",
  });
});

Deno.test("a URL's options: only -c switches of allowed settings", () => {
  assertEquals(startupOptionsRefusal("-c statement_timeout=5s"), null);
  assertEquals(
    startupOptionsRefusal("-c search_path=a\\,b -cwork_mem=1MB --jit=off"),
    null,
  );
  assertStringIncludes(
    startupOptionsRefusal("-c standard_conforming_strings=off") ?? "",
    "standard_conforming_strings",
  );
  assertStringIncludes(
    startupOptionsRefusal("--session-replication-role=replica") ?? "",
    "session_replication_role",
  );
  assertStringIncludes(startupOptionsRefusal("-d 5") ?? "", '"-d"');
  assertStringIncludes(startupOptionsRefusal("-c") ?? "", '"-c"');
});
