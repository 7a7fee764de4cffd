/**
 * `subscriptions/listen` end to end with the official SDK v2 client:
 * `updated` after ALTER TABLE on a subscribed connection (each engine),
 * `list_changed` after `connections.json` changes, the honoured filter, and
 * how a subscription ends (client close, revocation, server stop).
 */

import { assert, assertEquals } from "@std/assert";
import type { SavedConnection } from "../../lib/app/connections.ts";
import { saveConnections } from "../../lib/app/connections.ts";
import { inAppDir } from "../../lib/app/paths.ts";
import { CONNECTIONS_FILE } from "../../lib/base/identity.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { ENGINES, needs, openFixture } from "../_db.ts";
import { SchemaCheck, sdkClient } from "../_sdk.ts";
import { initializeSession, postLegacy } from "../_server.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

/** Resolves with the params of the first `method` notification, or rejects after `ms`. */
function next(
  client: Any,
  method: string,
  ms = 5_000,
): { received: Promise<Any>; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const received = new Promise<Any>((resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no ${method} within ${ms} ms`)),
      ms,
    );
    client.setNotificationHandler(method, (notification: Any) => {
      clearTimeout(timer);
      resolve(notification.params);
    });
  });
  return { received, cancel: () => clearTimeout(timer) };
}

function schemaUri(connection: SavedConnection): string {
  return `dbport://connections/${connection.id}/schema`;
}

for (const engine of ENGINES) {
  Deno.test(
    `${engine}: listen() hears "updated" within 5 s of ALTER TABLE on a subscribed schema`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      const saved = savedConnection(fixture, "Shop");
      const other = savedConnection(fixture, "Other");
      const hidden = savedConnection(fixture, "Hidden", { aiPolicy: "never" });
      await using server = await serverWith([saved, other, hidden]);
      const check = new SchemaCheck();
      const client = await sdkClient(server.url, server.token!, { check });
      try {
        const sub = await client.listen({
          resourcesListChanged: true,
          toolsListChanged: true,
          promptsListChanged: true,
          resourceSubscriptions: [
            // Canonicalised: an upper-case id is the same resource.
            schemaUri(saved).replace(saved.id, saved.id.toUpperCase()),
            schemaUri(saved),
            schemaUri(hidden),
            `dbport://connections/${saved.id}/tables`,
            "dbport://connections",
            "file:///etc/passwd",
          ],
        });
        assertEquals(sub.honoredFilter, {
          resourcesListChanged: true,
          resourceSubscriptions: [schemaUri(saved)],
        });
        // No wait here: the acknowledgement comes once the schema watch
        // (schema_watch.ts) has its baseline, so a change made right after
        // it is heard (a fixed 300 ms wait was outlasted by the SQLite
        // worker's start on a starved machine, and the change became the
        // baseline).
        const updated = next(client, "notifications/resources/updated");
        const started = performance.now();
        await fixture.admin(
          `alter table ${
            engine === "postgres" ? `${fixture.schema}.` : ""
          }authors add column email varchar(80)`,
        );
        const params = await updated.received;
        assert(performance.now() - started < 5_000);
        assertEquals(params.uri, schemaUri(saved));
        assertEquals(
          params._meta["io.modelcontextprotocol/subscriptionId"] !== undefined,
          true,
        );
        await sub.close();
        assertEquals(await sub.closed, "local");
      } finally {
        await client.close();
      }
      await check.assertValid();
    },
  );
}

Deno.test("listen() hears list_changed within 5 s when connections.json changes, and nothing for others' changes", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Shop");
  const stranger = savedConnection(fixture, "Stranger");
  await using server = await serverWith([saved, stranger]);
  // A token that may only see "Shop": changes to "Stranger" are not its business.
  const limited = await server.mint("readOnly", { connections: [saved.id] });
  const check = new SchemaCheck();
  const client = await sdkClient(server.url, limited.plaintext, { check });
  const path = inAppDir(server.home, CONNECTIONS_FILE);
  try {
    const sub = await client.listen({ resourcesListChanged: true });
    assertEquals(sub.honoredFilter, { resourcesListChanged: true });

    let heard = 0;
    client.setNotificationHandler(
      "notifications/resources/list_changed",
      () => void heard++,
    );
    await saveConnections(path, [saved, { ...stranger, safeMode: "silent" }]);
    // A list_changed that must never come: one and a half of the list
    // poll's LIST_POLL_MS (1 s, resource_source.ts) pass first.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assertEquals(heard, 0, "a change it cannot see is not announced");

    const changed = next(client, "notifications/resources/list_changed");
    const started = performance.now();
    await saveConnections(path, [{ ...saved, externalAccess: "blocked" }]);
    const params = await changed.received;
    assert(performance.now() - started < 5_000);
    assertEquals(
      typeof params._meta["io.modelcontextprotocol/subscriptionId"],
      "string",
    );
    await sub.close();
  } finally {
    await client.close();
  }
  await check.assertValid();
});

Deno.test("listen() ends with a complete result when the server stops, and on revocation", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Shop");
  await using server = await serverWith([saved]);
  const revoked = await server.mint("readOnly");
  const a = await sdkClient(server.url, revoked.plaintext);
  const b = await sdkClient(server.url, server.token!);
  try {
    const first = await a.listen({ resourcesListChanged: true });
    const second = await b.listen({
      resourceSubscriptions: [schemaUri(saved)],
    });
    assertEquals(second.honoredFilter, {
      resourceSubscriptions: [schemaUri(saved)],
    });
    await server.server.tokens.revoke(revoked.id);
    await server.server.syncTokens();
    assert(["graceful", "remote"].includes(await first.closed));
    await server.server.stop();
    assertEquals(await second.closed, "graceful");
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("subscriptions/listen is modern only: a legacy session gets -32601", async () => {
  await using fixture = await openFixture("sqlite");
  await using server = await serverWith([savedConnection(fixture, "Shop")]);
  const session = await initializeSession(server.url, "2025-11-25");
  const answer = await postLegacy(server.url, {
    jsonrpc: "2.0",
    id: 2,
    method: "subscriptions/listen",
    params: { notifications: { resourcesListChanged: true } },
  }, { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" });
  assertEquals(answer.json.error.code, -32601);
});
