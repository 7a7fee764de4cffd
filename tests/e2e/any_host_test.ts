/**
 * dbport reaches a database wherever the user saved it: by the host name
 * `localhost`, by another address (127.0.0.2 and ::1 through a forwarder),
 * with TLS required where the URL says so — all through `main.ts serve` with
 * the `deno task serve` permissions, while it still listens on 127.0.0.1.
 */

import { assert, assertEquals } from "@std/assert";
import { saveConnections } from "../../lib/app/connections.ts";
import { inAppDir } from "../../lib/app/paths.ts";
import { CONNECTIONS_FILE } from "../../lib/base/identity.ts";
import { savedConnection } from "../_connections.ts";
import { MYSQL_URL, POSTGRES_URL } from "../_db.ts";
import { forward } from "../_forward.ts";
import { spawnServe } from "../_main.ts";
import { modernRequest, postModern } from "../_server.ts";

function withHost(url: string, host: string, port?: number): string {
  const parsed = new URL(url);
  parsed.hostname = host;
  if (port !== undefined) parsed.port = String(port);
  return parsed.toString();
}

Deno.test("serve reaches PostgreSQL and MariaDB through localhost, 127.0.0.2 and ::1, and refuses plain text where TLS is required", async () => {
  const pgPort = Number(new URL(POSTGRES_URL).port || 5432);
  const myPort = Number(new URL(MYSQL_URL).port || 3306);
  await using pg2 = forward("127.0.0.2", pgPort);
  await using my2 = forward("127.0.0.2", myPort);
  await using pg6 = forward("::1", pgPort);
  await using my6 = forward("::1", myPort);
  const reachable = [
    savedConnection({
      engine: "postgres",
      url: withHost(POSTGRES_URL, "localhost"),
    }, "pg localhost"),
    savedConnection({
      engine: "postgres",
      url: withHost(POSTGRES_URL, pg2.host, pg2.port),
    }, "pg 127.0.0.2"),
    savedConnection({
      engine: "postgres",
      url: withHost(POSTGRES_URL, pg6.host, pg6.port),
    }, "pg ::1"),
    savedConnection(
      { engine: "mysql", url: withHost(MYSQL_URL, "localhost") },
      "my localhost",
    ),
    savedConnection({
      engine: "mysql",
      url: withHost(MYSQL_URL, my2.host, my2.port),
    }, "my 127.0.0.2"),
    savedConnection({
      engine: "mysql",
      url: withHost(MYSQL_URL, my6.host, my6.port),
    }, "my ::1"),
  ];
  const tls = [
    savedConnection({
      engine: "postgres",
      url: `${POSTGRES_URL}?sslmode=require`,
    }, "pg require"),
    savedConnection({
      engine: "postgres",
      url: `${POSTGRES_URL}?sslmode=verify-full`,
    }, "pg verify-full"),
    savedConnection({
      engine: "mysql",
      url: `${MYSQL_URL}?ssl={"rejectUnauthorized":true}`,
    }, "my ssl"),
  ];
  const home = await Deno.makeTempDir({ prefix: "dbport-hosts-" });
  await saveConnections(inAppDir(home, CONNECTIONS_FILE), [
    ...reachable,
    ...tls,
  ]);
  const serve = await spawnServe(home);
  try {
    assert(serve.url?.startsWith("http://127.0.0.1:"), serve.out);
    const { token } = JSON.parse(
      await Deno.readTextFile(`${home}/mcp-handshake.json`),
    );
    const run = async (id: string) =>
      (await postModern(
        serve.url!,
        modernRequest("tools/call", {
          name: "execute_query",
          arguments: { connection_id: id, query: "SELECT 1 AS one" },
        }),
        { authorization: `Bearer ${token}` },
      )).json.result;
    for (const connection of reachable) {
      const result = await run(connection.id);
      assert(
        result.isError !== true,
        `${connection.name}: ${result.content[0].text}`,
      );
      assertEquals(result.structuredContent.rows, [[1]], connection.name);
    }
    for (const connection of tls) {
      const result = await run(connection.id);
      assertEquals(result.isError, true, connection.name);
      const text: string = result.content[0].text;
      assert(
        /^not_connected: .*(SSL|secure connection)/i.test(text),
        `${connection.name}: ${text}`,
      );
      // Redacted for clients past what list_connections shows them: no
      // URL, no user; and what the user can do comes last.
      assert(!text.includes("://") && !text.includes("postgres@"), text);
      assert(text.includes("connections test"), text);
    }
    // The fixtures log in as superusers: list_connections and the terminal
    // say so, with the command that makes a login for AI reads.
    const listed = (await postModern(
      serve.url!,
      modernRequest("tools/call", { name: "list_connections", arguments: {} }),
      { authorization: `Bearer ${token}` },
    )).json.result.structuredContent.connections as {
      name: string;
      login_warning?: string;
    }[];
    const warned = listed.find((c) => c.name === "pg localhost");
    assert(
      warned?.login_warning?.includes("connections harden"),
      JSON.stringify(warned),
    );
    serve.child.kill("SIGTERM");
    const printed = await serve.readRest();
    assert(
      /Warning: the login of "pg localhost" is a superuser/.test(printed),
      printed,
    );
  } finally {
    try {
      serve.child.kill("SIGTERM");
    } catch { /* already stopped */ }
    await serve.readRest();
    await serve.child.status;
    await serve.child.stderr.cancel();
    await Deno.remove(home, { recursive: true });
  }
});
