/**
 * Outsider attack pins (branch attack): a readOnly token never reads a
 * PostgreSQL credential catalog, in any spelling, through a view or a SQL
 * function body.
 */
import { assert, assertMatch } from "@std/assert";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture } from "../_db.ts";
import { callTool } from "../_tool_call.ts";

Deno.test(
  "postgres: a readOnly token reads no credential catalog, however named",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const s = fixture.schema;
    await fixture.admin(
      `create view ${s}.vv as select rolname, rolpassword from pg_catalog.pg_authid`,
    );
    await fixture.admin(`create view ${s}.vvv as select * from ${s}.vv`);
    await fixture.admin(
      `create function ${s}.pw() returns setof text stable language sql set search_path = pg_catalog as 'select passwd from pg_shadow'`,
    );
    const url = `${fixture.url}?search_path=${s}`;
    const fenced = savedConnection({ engine: "postgres", url }, "Fenced", {
      externalAccess: "readOnly",
      safeMode: "silent",
    });
    await using server = await serverWith([fenced]);
    const reader = (await server.mint("readOnly")).plaintext;
    const queries = [
      `select * from pg_catalog."pg_authid"`,
      `table pg_authid`,
      `select * from (table pg_shadow) x`,
      `select * from U&"pg\\005fauthid"`,
      `select * from pg_catalog.U&"pg!005fshadow" UESCAPE '!'`,
      `select umoptions from pg_user_mappings`,
      `select * from ${s}.vvv`,
      `select * from ${s}.pw()`,
      `with x as (select * from pg_authid) select count(*) from x`,
    ];
    for (const query of queries) {
      for (const tool of ["execute_query", "explain_query"]) {
        const answer = await callTool(server, tool, {
          connection_id: fenced.id,
          query,
        }, { authorization: `Bearer ${reader}` });
        const result = answer.json.result;
        const said = answer.json.error?.message ?? result?.content?.[0]?.text ??
          "";
        assert(
          answer.json.error !== undefined || result?.isError === true,
          `${tool} ${query} ran: ${JSON.stringify(result?.structuredContent)}`,
        );
        assertMatch(said, /credential catalog|denied/, `${tool} ${query}`);
      }
    }
  },
);
