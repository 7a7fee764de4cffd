/**
 * A connection whose database cannot be reached answers the same way on
 * every engine: `resources/read` and `prompts/get` with `-32602` naming the
 * connection, tools with `not_connected`.
 */

import { assert, assertEquals } from "@std/assert";
import { savedConnection, serverWith } from "../_connections.ts";
import { modernRequest, postModern } from "../_server.ts";

Deno.test("an unreachable database is -32602 for resources and prompts and not_connected for tools, on every engine", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dbport-gone-" });
  const gone = [
    savedConnection(
      { engine: "postgres", url: "postgres://u@127.0.0.1:1/db" },
      "pg",
    ),
    savedConnection({ engine: "mysql", url: "mysql://u@127.0.0.1:1/db" }, "my"),
    savedConnection({ engine: "sqlite", url: `${dir}/missing.db` }, "lite"),
    savedConnection({ engine: "sqlite", url: "http://127.0.0.1:1" }, "remote"),
  ];
  try {
    await using server = await serverWith(gone);
    for (const connection of gone) {
      const read = await postModern(
        server.url,
        modernRequest("resources/read", {
          uri: `dbport://connections/${connection.id}/schema`,
        }),
      );
      assertEquals(
        read.json.error?.code,
        -32602,
        `${connection.name}: ${read.text}`,
      );
      const prompt = await postModern(
        server.url,
        modernRequest("prompts/get", {
          name: "explain_schema",
          arguments: { connection: connection.id },
        }),
      );
      assertEquals(
        prompt.json.error?.code,
        -32602,
        `${connection.name}: ${prompt.text}`,
      );
      const tool = await postModern(
        server.url,
        modernRequest("tools/call", {
          name: "list_tables",
          arguments: { connection_id: connection.id },
        }),
      );
      const text: string = tool.json.result.content[0].text;
      assert(text.startsWith("not_connected: "), `${connection.name}: ${text}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
