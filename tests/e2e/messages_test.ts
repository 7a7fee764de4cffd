/**
 * Messages that tell the truth: an ambiguous table is called ambiguous, and
 * a client that hangs up mid-request is no error in the terminal.
 */

import { assert, assertEquals } from "@std/assert";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture } from "../_db.ts";
import { modernRequest, postModern, startTestServer } from "../_server.ts";

Deno.test(
  "postgres: describe_table without schema names every schema holding the table",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const other = `${fixture.schema}_b`;
    await fixture.admin(`create schema ${other}`);
    try {
      await fixture.admin(`create table ${other}.authors (id int)`);
      const saved = savedConnection(fixture, "Two schemas");
      await using server = await serverWith([saved]);
      const describe = async (args: Record<string, string>) =>
        (await postModern(
          server.url,
          modernRequest("tools/call", {
            name: "describe_table",
            arguments: { connection_id: saved.id, table: "authors", ...args },
          }),
        )).json.result;
      const ambiguous = await describe({});
      assertEquals(ambiguous.isError, true);
      const text: string = ambiguous.content[0].text;
      assert(text.startsWith("invalid_argument: "), text);
      assert(text.includes(fixture.schema) && text.includes(other), text);
      // Naming the schema answers.
      const named = await describe({ schema: other });
      assert(named.isError !== true, JSON.stringify(named));
      assertEquals(named.structuredContent.schema, other);
    } finally {
      await fixture.admin(`drop schema ${other} cascade`);
    }
  },
);

Deno.test("a client that disconnects mid-request is not logged as an unexpected error", async () => {
  const lines: string[] = [];
  await using t = await startTestServer({ log: (line) => lines.push(line) });
  for (let i = 0; i < 3; i++) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: t.port });
    const body = JSON.stringify(modernRequest("tools/list"));
    await conn.write(
      new TextEncoder().encode(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${t.port}\r\nContent-Type: application/json\r\nAuthorization: Bearer ${t.token}\r\nContent-Length: ${
          body.length + 500
        }\r\n\r\n${body.slice(0, 20)}`,
      ),
    );
    // The client's own pace: it stalls mid-body, then leaves.
    await new Promise((resolve) => setTimeout(resolve, 50));
    conn.close();
  }
  // A log line that must never come: the server sees the three closes
  // meanwhile (it waits on nothing here).
  await new Promise((resolve) => setTimeout(resolve, 300));
  // The server is fine, and said nothing alarming.
  const answer = await postModern(t.url, modernRequest("tools/list"));
  assertEquals(answer.status, 200);
  assertEquals(
    lines.filter((line) => /unexpected error|aborted/.test(line)),
    [],
  );
});
