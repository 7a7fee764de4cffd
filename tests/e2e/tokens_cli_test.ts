/**
 * The management CLI (`deno task dbport ...`) as a user runs it, against a
 * running server sharing its app directory: tokens take effect and stop
 * within a second, plaintext is printed once and stored nowhere, and the
 * activity log and client list read back what the server recorded.
 */
import {
  assert,
  assertEquals,
  assertMatch,
  assertStringIncludes,
} from "@std/assert";
import { META_CLIENT_INFO } from "../../lib/protocol/envelope.ts";
import { mainArgs } from "../_main.ts";
import {
  modernRequest,
  postModern,
  startTestServer,
  type TestServer,
} from "../_server.ts";
import { waitUntil } from "../_wait.ts";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function dbport(home: string, ...args: string[]): Promise<Run> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: mainArgs(...args),
    env: { DBPORT_HOME: home, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: output.code,
    stdout: new TextDecoder().decode(output.stdout),
    stderr: new TextDecoder().decode(output.stderr),
  };
}

function discover(t: TestServer, token: string, client?: string) {
  return postModern(
    t.url,
    modernRequest(
      "server/discover",
      {},
      1,
      client === undefined
        ? {}
        : { [META_CLIENT_INFO]: { name: client, version: "9.9" } },
    ),
    { authorization: `Bearer ${token}` },
  );
}

/** Poll until the status is the wanted one; returns how long it took. */
async function until(
  check: () => Promise<number>,
  wanted: number,
  ms: number,
): Promise<number> {
  const started = Date.now();
  let status = 0;
  await waitUntil(
    `status ${wanted}`,
    async () => (status = await check()) === wanted,
    { timeoutMs: ms, intervalMs: 20 },
  ).catch(() => {
    throw new Error(
      `status stayed ${status}, wanted ${wanted} within ${ms} ms`,
    );
  });
  return Date.now() - started;
}

async function diskText(home: string, names: string[]): Promise<string> {
  let text = "";
  for (const name of names) {
    const bytes = await Deno.readFile(`${home}/${name}`).catch(() =>
      new Uint8Array()
    );
    text += new TextDecoder("latin1").decode(bytes);
  }
  return text;
}

Deno.test("tokens create/list/revoke through the CLI against a running server", async () => {
  // The server polls state.db at its production interval (250 ms).
  await using t = await startTestServer({ token: null, tokenPollMs: 250 });

  const created = await dbport(
    t.home,
    "tokens",
    "create",
    "--name",
    "laptop",
    "--level",
    "readWrite",
    "--json",
  );
  assertEquals(created.code, 0, created.stderr);
  const json = JSON.parse(created.stdout);
  assertEquals(Object.keys(json).sort(), [
    "connections",
    "expiresAt",
    "id",
    "level",
    "name",
    "token",
  ]);
  assertEquals([json.name, json.level, json.connections], [
    "laptop",
    "readWrite",
    null,
  ]);
  assertMatch(json.token, /^dbp_[A-Za-z0-9_-]{43}$/);
  const days = (Date.parse(json.expiresAt) - Date.now()) / 86_400_000;
  assert(days > 89.9 && days <= 90, `expires in ${days} days`);
  // A new token is accepted at once: a miss re-reads the tokens before it
  // refuses, so the first request after `tokens create` is served.
  assertEquals((await discover(t, json.token)).status, 200);

  const scoped = await dbport(
    t.home,
    "tokens",
    "create",
    "--name",
    "ci",
    "--level",
    "readOnly",
    "--connections",
    "c1,c2",
    "--expires",
    "never",
    "--json",
  );
  assertEquals(scoped.code, 0, scoped.stderr);
  const ci = JSON.parse(scoped.stdout);
  assertEquals([ci.connections, ci.expiresAt], [["c1", "c2"], null]);

  const listed = await dbport(t.home, "tokens", "list", "--json");
  assertEquals(listed.code, 0, listed.stderr);
  const tokens = JSON.parse(listed.stdout);
  assertEquals(tokens.map((x: { name: string }) => x.name), ["laptop", "ci"]);
  for (const token of tokens) {
    assertEquals("token" in token || "hash" in token || "salt" in token, false);
    assertEquals(token.status, "active");
  }
  const text = await dbport(t.home, "tokens", "list");
  for (const output of [listed.stdout, text.stdout]) {
    assertEquals(output.includes(json.token), false);
    assertEquals(output.includes(ci.token), false);
  }
  assertStringIncludes(text.stdout, "laptop");
  assertStringIncludes(text.stdout, "readWrite");

  const revoked = await dbport(t.home, "tokens", "revoke", "laptop");
  assertEquals(revoked.code, 0, revoked.stderr);
  assertStringIncludes(revoked.stdout, json.id);
  const refusedAfter = await until(
    () => discover(t, json.token).then((a) => a.status),
    401,
    1_000,
  );
  assert(refusedAfter <= 1_000);
  const afterList = JSON.parse(
    (await dbport(t.home, "tokens", "list", "--json")).stdout,
  );
  assertEquals(afterList[0].status, "revoked");

  // No plaintext on disk but the bridge token in the 0600 handshake.
  const disk = await diskText(t.home, [
    "state.db",
    "state.db-wal",
    "state.db-shm",
  ]);
  for (const plaintext of [json.token, ci.token]) {
    assertEquals(disk.includes(plaintext), false);
  }
  const bridge =
    JSON.parse(await Deno.readTextFile(t.server.handshakePath)).token;
  assertEquals(disk.includes(bridge), false);
});

Deno.test("the CLI refuses bad input with exit status 2 and a message naming it", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-cli-" });
  try {
    const cases: [string[], string][] = [
      [["tokens", "create", "--name", "x", "--level", "admin"], '"admin"'],
      [["tokens", "create", "--level", "readOnly"], "--name"],
      [[
        "tokens",
        "create",
        "--name",
        "x",
        "--level",
        "readOnly",
        "--expires",
        "5y",
      ], '"5y"'],
      [
        ["tokens", "create", "--name", "x", "--level", "readOnly", "--colour"],
        "colour",
      ],
      [["tokens", "frobnicate"], '"frobnicate"'],
      [["activity", "--limit", "0"], "--limit"],
    ];
    for (const [args, mention] of cases) {
      const run = await dbport(home, ...args);
      assertEquals(run.code, 2, args.join(" "));
      assertStringIncludes(run.stderr, mention);
    }
    const missing = await dbport(home, "tokens", "revoke", "nobody");
    assertEquals(missing.code, 1);
    assertStringIncludes(missing.stderr, '"nobody"');
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("clients and activity read back what the server recorded", async () => {
  await using t = await startTestServer();
  assertEquals((await discover(t, t.token!, "cursor")).status, 200);
  assertEquals((await discover(t, t.token!, "cursor")).status, 200);
  await postModern(t.url, modernRequest("tools/list"), {
    authorization: "Bearer dbp_nope",
  });
  await t.server.activity.flush();

  const clients = await dbport(t.home, "clients", "--json");
  assertEquals(clients.code, 0, clients.stderr);
  const [client, ...others] = JSON.parse(clients.stdout);
  assertEquals(others, []);
  assertEquals(
    [client.name, client.version, client.tokenName, client.requests],
    ["cursor", "9.9", "test readOnly", 2],
  );
  const table = await dbport(t.home, "clients");
  assertStringIncludes(table.stdout, "cursor");

  const activity = await dbport(t.home, "activity", "--json", "--limit", "2");
  assertEquals(activity.code, 0, activity.stderr);
  const lines = activity.stdout.trim().split("\n").map((line) =>
    JSON.parse(line)
  );
  assertEquals(lines.map((row) => [row.method, row.outcome]), [
    ["server/discover", "success"],
    ["tools/list", "denied"],
  ]);
  const human = await dbport(t.home, "activity");
  assertStringIncludes(human.stdout, "server/discover");
  assertEquals(human.stdout.includes(t.token!), false);
});

Deno.test("activity --follow prints new entries as they happen and stops on SIGTERM", async () => {
  await using t = await startTestServer();
  const child = new Deno.Command(Deno.execPath(), {
    args: mainArgs("activity", "--follow", "--json"),
    env: { DBPORT_HOME: t.home, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  // Never hang the suite: a follower that shows nothing is killed, and the
  // assertion below fails.
  const guard = setTimeout(() => child.kill("SIGKILL"), 20_000);
  try {
    // Give the follower time to start (it prints nothing before the first new
    // entry, so its readiness shows nowhere), then make a request it must show.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assertEquals((await discover(t, t.token!, "follower-check")).status, 200);
    let out = "";
    while (!out.includes("follower-check")) {
      const { done, value } = await reader.read();
      if (done) break;
      out += value;
    }
    assertStringIncludes(out, "follower-check");
    child.kill("SIGTERM");
    assertEquals((await child.status).code, 0);
  } finally {
    clearTimeout(guard);
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await reader.cancel().catch(() => {});
  }
});
