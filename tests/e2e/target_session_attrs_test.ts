/**
 * A PostgreSQL URL's `target_session_attrs` (libpq's: which server of a
 * list a session may use) through execute_query. postgres.js read dbport's
 * own `default_transaction_read_only = on` startup setting as the server's,
 * so `read-write` (the usual value of a failover URL) failed every call
 * ("write CONNECTION_DESTROYED"); `any`, libpq's default, was an internal
 * error; a one-host `prefer-standby` failed every call.
 */
import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture, POSTGRES_URL } from "../_db.ts";
import { callTool } from "../_tool_call.ts";

function withAttrs(url: string, value: string): string {
  return `${url}${url.includes("?") ? "&" : "?"}target_session_attrs=${value}`;
}

Deno.test(
  "postgres: target_session_attrs read-write, primary, any and prefer-standby reach a primary",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const values = ["read-write", "primary", "any", "prefer-standby"];
    const connections = values.map((value) =>
      savedConnection(
        { engine: "postgres", url: withAttrs(fixture.url, value) },
        `T ${value}`,
        { safeMode: "silent" },
      )
    );
    await using server = await serverWith(connections);
    const reader = (await server.mint("readOnly")).plaintext;
    for (const connection of connections) {
      for (const query of ["select 41 + 1 as x", "select 2 as x"]) {
        const answer = await callTool(server, "execute_query", {
          connection_id: connection.id,
          query,
        }, { authorization: `Bearer ${reader}` });
        const text = JSON.stringify(answer.json);
        assert(
          answer.json.result?.isError !== true,
          `${connection.name}: ${text}`,
        );
        assertEquals(answer.json.result.structuredContent.row_count, 1, text);
      }
      const tables = await callTool(server, "list_tables", {
        connection_id: connection.id,
      }, { authorization: `Bearer ${reader}` });
      assert(
        tables.json.result?.isError !== true,
        `${connection.name}: ${JSON.stringify(tables.json)}`,
      );
    }
  },
);

Deno.test(
  "postgres: target_session_attrs standby on a primary fails as unreachable, without a storm of sessions; an unknown value is named",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    // A database of its own: its session count is this test's alone.
    const database = `dbp_tsa_${crypto.randomUUID().slice(0, 8)}`;
    await fixture.admin(`create database ${database}`);
    const admin = postgres(POSTGRES_URL, { onnotice: () => {} });
    try {
      const url = new URL(POSTGRES_URL);
      url.pathname = `/${database}`;
      const standby = savedConnection(
        { engine: "postgres", url: withAttrs(url.href, "standby") },
        "Standby",
        { safeMode: "silent" },
      );
      const bogus = savedConnection(
        { engine: "postgres", url: withAttrs(url.href, "master") },
        "Bogus",
        { safeMode: "silent" },
      );
      await using server = await serverWith([standby, bogus]);
      const reader = (await server.mint("readOnly")).plaintext;
      const refused = await callTool(server, "execute_query", {
        connection_id: bogus.id,
        query: "select 1",
      }, { authorization: `Bearer ${reader}` });
      const text = JSON.stringify(refused.json);
      assert(
        text.includes('target_session_attrs=\\"master\\" is not one of'),
        text,
      );
      assert(!text.includes("Internal error"), text);
      const sessions = async () =>
        Number(
          (await admin`select sessions from pg_stat_database where datname = ${database}`)[
            0
          ]!
            .sessions,
        );
      const before = await sessions();
      const started = performance.now();
      const answer = await callTool(server, "execute_query", {
        connection_id: standby.id,
        query: "select 1",
      }, { authorization: `Bearer ${reader}` });
      const elapsed = performance.now() - started;
      assertEquals(
        answer.json.result?.isError,
        true,
        JSON.stringify(answer.json),
      );
      assert(
        answer.json.result.content[0].text.startsWith("not_connected"),
        answer.json.result.content[0].text,
      );
      assert(elapsed < 12_000, `answered after ${elapsed} ms`);
      // pg_stat_database counts a session as it ends: the refused ones
      // have.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const opened = (await sessions()) - before;
      assert(opened <= 6, `${opened} sessions opened for one call`);
    } finally {
      await admin.end();
      await fixture.admin(`drop database if exists ${database} with (force)`);
    }
  },
);
