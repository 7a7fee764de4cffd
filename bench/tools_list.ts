// deno-lint-ignore-file no-console
/**
 * What a client pays in context for each server's tool surface: the
 * characters of the `tools` array of tools/list as each server sends it, and
 * ≈ tokens (characters / 4), for dbport (readOnly and fullAccess tokens),
 * DBHub, MCP Toolbox for Databases and the minimal SDK v2 server. Runs on
 * its own (`deno run --config deno.dev.json -A bench/tools_list.ts`) and as
 * a part of `deno task bench`.
 *
 * @module
 */

import mysql from "mysql2/promise";
import { MYSQL_URL, POSTGRES_URL } from "../tests/_db.ts";
import { freePort } from "../tests/_server.ts";
import { callOnce } from "./mcp_request.ts";
import {
  benchHome,
  mintToken,
  startDbport,
  startSdkV2Peer,
  startToolbox,
  type Target,
} from "./targets.ts";

const BENCH_USER = { user: "dbport_bench", password: "bench" };
/** DBHub, the peer with the smallest surface (two tools). */
const DBHUB = "npm:@bytebase/dbhub@1.4.0";

/** The `tools` array's text within a tools/list answer (JSON or SSE). */
function toolsArray(text: string): string {
  const data = text.includes("data: ")
    ? text.split("\n").filter((l) => l.startsWith("data: ")).map((l) =>
      l.slice(6)
    ).find((l) => l.includes('"tools"')) ?? text
    : text;
  const start = data.indexOf('"tools":') + '"tools":'.length;
  // Re-serialised compactly: servers that pretty-print pay for it on the
  // wire, not in a model's context.
  return JSON.stringify(
    JSON.parse(data).result.tools ?? JSON.parse(
      data.slice(start, data.lastIndexOf("]") + 1),
    ),
  );
}

/** tools/list from a server of the 2025 era: initialize, then the list. */
async function legacyToolsList(url: string): Promise<string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const init = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      },
    }),
  });
  const session = init.headers.get("mcp-session-id");
  await init.body?.cancel();
  if (session !== null) headers["mcp-session-id"] = session;
  headers["mcp-protocol-version"] = "2025-06-18";
  await (await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/initialized",
    }),
  })).body?.cancel();
  const list = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
  });
  return await list.text();
}

/** DBHub over HTTP on PostgreSQL. */
async function startDbhub(): Promise<Target> {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      // A dev dependency (deno.dev.json, locked in deno.dev.lock).
      `--config=${new URL("../deno.dev.json", import.meta.url).pathname}`,
      "-A",
      DBHUB,
      "--transport",
      "http",
      "--port",
      String(port),
      "--dsn",
      `${POSTGRES_URL}?sslmode=disable`,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  for (let i = 0; i < 1200; i++) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    name: "DBHub",
    url: `http://127.0.0.1:${port}/mcp`,
    pid: child.pid,
    headers: {},
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
    },
  };
}

/** One row per server: characters and ≈ tokens of its tools. */
export async function measureToolsList(dir: string): Promise<string[]> {
  const conn = await mysql.createConnection({ uri: MYSQL_URL });
  await conn.query(
    `CREATE USER IF NOT EXISTS '${BENCH_USER.user}'@'%' IDENTIFIED BY '${BENCH_USER.password}'`,
  );
  await conn.query(`GRANT SELECT ON *.* TO '${BENCH_USER.user}'@'%'`);
  await conn.end();
  const my = new URL(MYSQL_URL);
  my.username = BENCH_USER.user;
  my.password = BENCH_USER.password;
  const home = await benchHome(dir, my.toString());
  const full = await mintToken(home.home, "fullAccess", "bench full");
  const rows: [string, string][] = [];
  {
    await using dbport = await startDbport(home);
    rows.push([
      "dbport (readOnly)",
      toolsArray(await callOnce(dbport, "tools/list")),
    ]);
    rows.push([
      "dbport (fullAccess)",
      toolsArray(
        await callOnce(
          { ...dbport, headers: { authorization: `Bearer ${full}` } },
          "tools/list",
        ),
      ),
    ]);
  }
  for (
    const [name, start, list] of [
      ["DBHub", startDbhub, (t: Target) => legacyToolsList(t.url)],
      [
        "Toolbox",
        () => startToolbox(dir, home.sqlitePath, BENCH_USER),
        (t: Target) => callOnce(t, "tools/list"),
      ],
      [
        "SDK v2 server",
        startSdkV2Peer,
        (t: Target) => callOnce(t, "tools/list"),
      ],
    ] as const
  ) {
    try {
      await using target = await start();
      rows.push([name, toolsArray(await list(target))]);
    } catch (error) {
      rows.push([name, `(not measured: ${String(error).slice(0, 120)})`]);
    }
  }
  return [
    "| server | tools | tools/list characters | ≈ tokens |",
    "|---|---|---|---|",
    ...rows.map(([name, text]) => {
      if (!text.startsWith("[")) return `| ${name} | – | ${text} | – |`;
      const tools = JSON.parse(text).length;
      return `| ${name} | ${tools} | ${text.length.toLocaleString("en-US")} | ${
        Math.round(text.length / 4).toLocaleString("en-US")
      } |`;
    }),
  ];
}

if (import.meta.main) {
  const dir = await Deno.makeTempDir({ prefix: "dbport-bench-tools-" });
  try {
    for (const line of await measureToolsList(dir)) console.log(line);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
