/**
 * Every AI statement signed (docs/security.md "Signed statements"): a DBA
 * looking at pg_stat_activity (or MariaDB's process list) during an AI read
 * sees `dbport/<client>` and the leading comment with the client, token and
 * call id — the same id as in the activity log — and a client name cannot
 * close the comment or change what runs.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import {
  setApplicationName,
  signatureComment,
  signatureName,
} from "../../lib/db/signature.ts";
import { META_CLIENT_INFO } from "../../lib/protocol/envelope.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture } from "../_db.ts";
import { callTool } from "../_tool_call.ts";
import { waitUntil } from "../_wait.ts";

Deno.test("a signature's names cannot close the comment or the setting's literal", () => {
  for (
    const name of [
      "a*/ drop table x; /*",
      "x'; select 1; --",
      "line\nbreak",
      "back\\slash",
      "ünïcode",
    ]
  ) {
    const safe = signatureName(name);
    assertMatch(safe, /^[A-Za-z0-9._:@+-]{1,48}$/);
  }
  const comment = signatureComment({
    client: "evil */ drop table t; /*",
    token: "t*/",
    call: "0123abcd",
  });
  assertEquals(
    comment,
    "/* dbport client=evil____drop_table_t____ token=t__ call=0123abcd */ ",
  );
  // One comment: it opens once and closes once, at its end.
  assertEquals(comment.indexOf("*/"), comment.length - 3);
  assertEquals(comment.lastIndexOf("/*"), 0);
  assertEquals(
    setApplicationName({ client: "o'brien", token: "x", call: "1" }),
    "; SET LOCAL application_name = 'dbport/o_brien'",
  );
  assertEquals(signatureName(""), "unknown");
  assertEquals(signatureName("x".repeat(100)).length, 48);
});

/** A read that runs for seconds without pg_sleep (off the allowlist). */
function heavyRead(marker: string, engine: "postgres" | "mysql"): string {
  return engine === "postgres"
    ? `select count(*) as ${marker} from generate_series(1, 20000) a cross join generate_series(1, 20000) b`
    : `select count(*) as ${marker} from information_schema.columns a, information_schema.columns b, information_schema.columns c`;
}

for (const engine of ["postgres", "mysql"] as const) {
  Deno.test(
    `${engine}: a DBA sees the client, the token and the call id of an AI read while it runs`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      const saved = savedConnection(fixture, "Shop");
      await using server = await serverWith([saved]);
      const marker = `m_${
        crypto.randomUUID().replaceAll("-", "").slice(0, 10)
      }`;
      const running = callTool(server, "execute_query", {
        connection_id: saved.id,
        query: heavyRead(marker, engine),
        timeout_seconds: 4,
      }, {
        meta: {
          [META_CLIENT_INFO]: { name: "agent */ x", version: "1.0" },
        },
      });
      const seen = engine === "postgres"
        ? `select application_name as app, query from pg_stat_activity where query like '%${marker}%' and pid <> pg_backend_pid()`
        : `select '' as app, info as query from information_schema.processlist where info like '%${marker}%' and id <> connection_id()`;
      const row = await waitUntil(
        "the read to be seen running",
        async () =>
          (await fixture.admin(seen) as { app: string; query: string }[])
            .find((r) => r.query.startsWith("/* dbport")),
        { timeoutMs: 15_000, intervalMs: 50 },
      ).finally(async () => {
        await running;
      });
      if (engine === "postgres") assertEquals(row.app, "dbport/agent____x");
      const match =
        /^\/\* dbport client=agent____x token=test_readOnly call=([0-9a-f]{8}) \*\/ select count/
          .exec(row.query);
      assert(match !== null, row.query);
      // The same call id in the activity log.
      await server.server.activity.flush();
      const logged = await server.server.activity.recent(100);
      assert(
        logged.some((entry) =>
          entry.detail?.includes(`call=${match[1]}`) === true
        ),
        JSON.stringify(logged.map((entry) => entry.detail)),
      );
      if (engine === "postgres") {
        // Back to plain "dbport" after the read's transaction.
        const after = await fixture.admin(
          `select count(*)::int as n from pg_stat_activity where application_name like 'dbport/%' and query like '%${marker}%' and state = 'active'`,
        ) as { n: number }[];
        assertEquals(after[0]!.n, 0);
      }
    },
  );
}
