/**
 * Outsider attack pins (branch attack): a readOnly token on a connection
 * whose saved login is a superuser cannot name an effect — built-in
 * functions off the allowlist, statement forms that are not plain reads,
 * and user code behind operators, aggregates and a SQL body's own
 * search_path — through execute_query.
 */
import { assert } from "@std/assert";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture } from "../_db.ts";
import { callTool } from "../_tool_call.ts";

Deno.test(
  "postgres: a readOnly token's named effects are refused before they run",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const s = fixture.schema;
    for (
      const statement of [
        `create table ${s}.w (id int primary key, v text)`,
        `insert into ${s}.w values (1, 'a'), (2, 'b')`,
        `create sequence ${s}.q`,
        `create function ${s}.bump(a int4, b int4) returns int4 immutable language plpgsql as $$begin perform nextval('${s}.q'); return a + b; end$$`,
        `create function ${s}.sf(st int4, a int4) returns int4 immutable language plpgsql as $$begin perform nextval('${s}.q'); return coalesce(st, 0) + a; end$$`,
        `create aggregate ${s}.agg(int4) (sfunc = ${s}.sf, stype = int4)`,
        `create operator ${s}.## (function = ${s}.bump, leftarg = int4, rightarg = int4)`,
        `create function ${s}.lower(text) returns text immutable language plpgsql as $$begin perform nextval('${s}.q'); return $1; end$$`,
        `create function ${s}.sq(a int) returns int immutable language sql set search_path = ${s}, pg_catalog as 'select length(lower(''x'')) + a'`,
      ]
    ) await fixture.admin(statement);
    const url = `${fixture.url}?search_path=${s}`;
    const fenced = savedConnection({ engine: "postgres", url }, "Fenced", {
      externalAccess: "readOnly",
      safeMode: "silent",
    });
    await using server = await serverWith([fenced]);
    const reader = (await server.mint("readOnly")).plaintext;
    const queries = [
      `select pg_sleep(0.1)`,
      `select pg_advisory_lock(42)`,
      `select pg_try_advisory_xact_lock(42)`,
      `select set_config('work_mem', '1MB', true)`,
      `select nextval('${s}.q')`,
      `select txid_current()`,
      `select pg_current_xact_id()`,
      `select pg_notify('c', 'x')`,
      `select query_to_xml('select 1', true, true, '')`,
      `select table_to_xml('${s}.w', true, true, '')`,
      `select ts_stat('select 1')`,
      `select pg_stat_reset()`,
      `select pg_reload_conf()`,
      `select pg_ls_dir('.')`,
      `select pg_read_file('postgresql.auto.conf')`,
      `select lo_import('/etc/hostname')`,
      `select pg_catalog.pg_cancel_backend(0)`,
      `select "pg_cancel_backend"(0)`,
      `select * from ${s}.w for update`,
      `declare c cursor for select 1`,
      `prepare p as select 1`,
      `copy (select 1) to stdout`,
      `select 1; select 2`,
      `explain analyze delete from ${s}.w`,
      `select 1 OPERATOR(${s}.##) 1`,
      `select ${s}.agg(id) from ${s}.w`,
      `select ${s}.sq(1)`,
    ];
    for (const query of queries) {
      const answer = await callTool(server, "execute_query", {
        connection_id: fenced.id,
        query,
      }, { authorization: `Bearer ${reader}` });
      const result = answer.json.result;
      assert(
        answer.json.error !== undefined || result?.isError === true,
        `${query} ran: ${JSON.stringify(result?.structuredContent)}`,
      );
    }
    const [row] = await fixture.admin(
      `select last_value, is_called from ${s}.q`,
    ) as { is_called: boolean }[];
    assert(row!.is_called === false, "a sequence value was taken");
    const w = await fixture.admin(`select count(*)::int as n from ${s}.w`) as {
      n: number;
    }[];
    assert(w[0]!.n === 2, "rows of w were deleted");
  },
);

Deno.test(
  "postgres: a write token cannot read a table a string names (table_to_xml of pg_authid on a superuser login)",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const open = savedConnection(
      { engine: "postgres", url: fixture.url },
      "Open",
      { externalAccess: "readWrite", safeMode: "silent" },
    );
    await using server = await serverWith([open]);
    const writer = (await server.mint("readWrite")).plaintext;
    // The names are strings: no parse tree or catalog lookup shows which
    // table they read, so the credential catalogs' rule cannot see them.
    for (
      const query of [
        `select table_to_xml('pg_authid', true, false, '')`,
        `select pg_catalog.table_to_xml_and_xmlschema('pg_catalog.pg_authid'::regclass, true, false, '')`,
        `select schema_to_xml('pg_catalog', true, false, '')`,
        `select database_to_xml(true, false, '')`,
      ]
    ) {
      const answer = await callTool(server, "execute_query", {
        connection_id: open.id,
        query,
      }, { authorization: `Bearer ${writer}` });
      const text = JSON.stringify(answer.json);
      assert(answer.json.result?.isError === true, `${query} ran: ${text}`);
      assert(text.includes("reaches"), `${query}: ${text}`);
      assert(!text.includes("SCRAM-SHA-256"), `${query}: ${text}`);
    }
  },
);
