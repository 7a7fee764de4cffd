/**
 * `main.ts serve` loads the features' code (the tools, the SQL classifier)
 * and each engine's driver at the first call that needs them, not at start
 * (docs/performance.md "Memory"): the very first calls after start, one per
 * engine, each answer their rows, and so does the first `tools/list`.
 */
import { assert, assertEquals } from "@std/assert";
import { saveConnections } from "../../lib/app/connections.ts";
import { inAppDir } from "../../lib/app/paths.ts";
import { CONNECTIONS_FILE } from "../../lib/base/identity.ts";
import { savedConnection } from "../_connections.ts";
import { ENGINES, MYSQL_URL, needs, POSTGRES_URL } from "../_db.ts";
import { spawnServe } from "../_main.ts";
import { modernRequest, postModern } from "../_server.ts";

Deno.test({
  name:
    "main.ts serve: the first call after start is each engine's first execute_query, and each answers its row",
  ...needs(...ENGINES),
  async fn() {
    const home = await Deno.makeTempDir({ prefix: "dbport-first-" });
    const sqlite = `${home}/first.db`;
    await Deno.writeFile(sqlite, new Uint8Array());
    const urls = { postgres: POSTGRES_URL, mysql: MYSQL_URL, sqlite };
    const connections = ENGINES.map((engine) =>
      savedConnection({ engine, url: urls[engine] }, engine)
    );
    await saveConnections(inAppDir(home, CONNECTIONS_FILE), connections);
    const serve = await spawnServe(home);
    try {
      assert(serve.url !== undefined, serve.out);
      const { token } = JSON.parse(
        await Deno.readTextFile(`${home}/mcp-handshake.json`),
      );
      const authorization = `Bearer ${token}`;
      // Nothing asked before: the first request loads the features too.
      for (const [i, connection] of connections.entries()) {
        const answer = await postModern(
          serve.url,
          modernRequest("tools/call", {
            name: "execute_query",
            arguments: {
              connection_id: connection.id,
              query: `select ${i + 41} as answer`,
            },
          }, i + 1),
          { authorization },
        );
        assertEquals(answer.status, 200, answer.text);
        const result = answer.json.result;
        assertEquals(result.isError, undefined, answer.text);
        assertEquals(result.structuredContent.columns, ["answer"]);
        assertEquals(result.structuredContent.rows, [[i + 41]]);
      }
      const listed = await postModern(
        serve.url,
        modernRequest("tools/list", {}, 10),
        { authorization },
      );
      assertEquals(listed.status, 200, listed.text);
      assert(
        listed.json.result.tools.some((tool: { name: string }) =>
          tool.name === "execute_query"
        ),
        listed.text,
      );
    } finally {
      serve.child.kill("SIGTERM");
      await serve.readRest();
      await serve.child.status;
      await serve.child.stderr.cancel();
      await Deno.remove(home, { recursive: true });
    }
  },
});
