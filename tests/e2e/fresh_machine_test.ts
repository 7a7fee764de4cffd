/**
 * The README's first command on a machine where dbport never ran: no home
 * directory and no app directory. `deno task serve` must create the app
 * directory (0700, parents included), build the demo shop and answer.
 */

import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { SERVE_PERMISSIONS } from "../../lib/cli/integration.ts";
import { spawnServe } from "../_main.ts";
import { modernRequest, postModern } from "../_server.ts";

Deno.test("deno task serve starts on a fresh machine with no HOME and no DBPORT_HOME yet", async () => {
  const root = await Deno.makeTempDir({ prefix: "dbport-fresh-" });
  const home = `${root}/home-not-yet`;
  const appDir = `${home}/.config/nested/dbport`;
  // The Deno cache is the one this test runs with: a fresh machine would
  // download the same packages into an empty one.
  const denoDir = Deno.env.get("DENO_DIR") ??
    `${Deno.env.get("HOME")}/.cache/deno`;
  const serve = await spawnServe(appDir, {
    task: true,
    env: { HOME: home, DENO_DIR: denoDir },
  });
  try {
    assert(serve.url !== undefined, serve.out);
    assertStringIncludes(serve.out, "Created the demo connection");
    assertEquals((await Deno.stat(appDir)).mode! & 0o777, 0o700);
    const handshake = JSON.parse(
      await Deno.readTextFile(`${appDir}/mcp-handshake.json`),
    );
    const auth = { authorization: `Bearer ${handshake.token}` };
    const listed = await postModern(
      serve.url,
      modernRequest("tools/call", { name: "list_connections", arguments: {} }),
      auth,
    );
    const connections = listed.json.result.structuredContent.connections;
    assertEquals(connections.length, 1);
    const counted = await postModern(
      serve.url,
      modernRequest("tools/call", {
        name: "execute_query",
        arguments: {
          connection_id: connections[0].id,
          query: "SELECT count(*) AS n FROM products",
        },
      }),
      auth,
    );
    const result = counted.json.result;
    assert(result.isError !== true, JSON.stringify(result));
    assert(Number(result.structuredContent.rows[0][0]) > 0);
  } finally {
    serve.child.kill("SIGTERM");
    await serve.readRest();
    await serve.child.status;
    await serve.child.stderr.cancel();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("serve explains a start-up failure in one sentence", async () => {
  const root = await Deno.makeTempDir({ prefix: "dbport-fail-" });
  try {
    await Deno.writeTextFile(`${root}/a-file`, "");
    const cases: [string, (dir: string) => Promise<void>, RegExp][] = [
      [
        `${root}/a-file/dbport`,
        async () => {},
        /cannot create or write the app directory .* set DBPORT_HOME/,
      ],
      [`${root}/damaged`, async (dir) => {
        await Deno.mkdir(dir);
        await Deno.writeTextFile(
          `${dir}/state.db`,
          "not a database at all, not even close".repeat(40),
        );
      }, /the state database in .* is damaged .* move state\.db aside/],
    ];
    for (const [dir, prepare, expected] of cases) {
      await prepare(dir);
      const { code, stderr } = await new Deno.Command(Deno.execPath(), {
        args: ["task", "serve"],
        cwd: new URL("../../", import.meta.url).pathname,
        env: { DBPORT_HOME: dir, NO_COLOR: "1" },
        stdout: "null",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(stderr).trim().split("\n").at(-1)!;
      assertEquals(code, 1);
      assert(expected.test(text), text);
      assert(text.startsWith("dbport: cannot start: "), text);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("serve gives way when its port is in use, and says so in one sentence", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-port-" });
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = (taken.addr as Deno.NetAddr).port;
    await Deno.writeTextFile(`${home}/settings.json`, JSON.stringify({ port }));
    const serve = await spawnServe(home, { task: true });
    assert(serve.url !== undefined, serve.out);
    assert(serve.url !== `http://127.0.0.1:${port}/mcp`, serve.url);
    serve.child.kill("SIGTERM");
    await serve.readRest();
    await serve.child.status;
    const stderr = await new Response(serve.child.stderr).text();
    const said = stderr.split("\n").filter((line) => line.includes("in use"));
    assertEquals(said.length, 1, stderr);
    assert(
      said[0]!.startsWith(
        `dbport: 127.0.0.1:${port} ("port" in settings.json) is in use;`,
      ),
      said[0],
    );
    assert(said[0]!.includes(serve.url.slice(7, -4)), said[0]);
  } finally {
    taken.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("with narrower permissions a host is not_connected naming the missing permission, never a prompt", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-perm-" });
  const { saveConnections } = await import("../../lib/app/connections.ts");
  const { savedConnection } = await import("../_connections.ts");
  const { POSTGRES_URL } = await import("../_db.ts");
  const url = new URL(POSTGRES_URL);
  url.hostname = "localhost";
  const saved = savedConnection(
    { engine: "postgres", url: url.toString() },
    "Local",
  );
  await saveConnections(`${home}/connections.json`, [saved]);
  // As an older task ran it: net to 127.0.0.1 only, and no --no-prompt.
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...SERVE_PERMISSIONS.filter((flag) => flag !== "--no-prompt").map((
        flag,
      ) => flag === "--allow-net" ? "--allow-net=127.0.0.1" : flag),
      new URL("../../main.ts", import.meta.url).pathname,
      "serve",
    ],
    env: { DBPORT_HOME: home, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("Ctrl+C")) {
    const { done, value } = await reader.read();
    if (done) break;
    out += value;
  }
  try {
    const endpoint = /MCP endpoint:\s+(\S+)/.exec(out)![1]!;
    const { token } = JSON.parse(
      await Deno.readTextFile(`${home}/mcp-handshake.json`),
    );
    const answer = await postModern(
      endpoint,
      modernRequest("tools/call", {
        name: "execute_query",
        arguments: { connection_id: saved.id, query: "SELECT 1" },
      }),
      { authorization: `Bearer ${token}` },
    );
    const text: string = answer.json.result.content[0].text;
    assert(text.startsWith("not_connected: "), text);
    assertStringIncludes(text, "without network access");
    assertStringIncludes(text, "deno task serve");
    assert(!/Requires net access|--allow-net flag/.test(text), text);
  } finally {
    child.kill("SIGTERM");
    while (!(await reader.read()).done) { /* drain */ }
    await child.status;
    await child.stderr.cancel();
    await Deno.remove(home, { recursive: true });
  }
});
