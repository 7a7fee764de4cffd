// deno-lint-ignore-file no-console
/**
 * `deno task bench:heap`: what dbport
 * allocates per W1 read (`SELECT 1` through `execute_query` on PostgreSQL),
 * by V8's sampling heap profiler over the inspector — every allocation
 * counted, those the garbage collector took since included — summed by
 * function and by module, in bytes per request. Flags: `--survivors`
 * (only what outlived the young generation), `--seconds=N`
 * (default 5), `--c=N` (default 8), `--top=N` rows (default 40),
 * `--method=tools/list`.
 *
 * @module
 */

import { MYSQL_URL } from "../tests/_db.ts";
import { runLoad } from "./load.ts";
import { closeConnections, mcpRequest } from "./mcp_request.ts";
import { benchHome, startDbport } from "./targets.ts";

const flag = (name: string, fallback: string) =>
  Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ??
    fallback;
const seconds = Number(flag("seconds", "5"));
const concurrency = Number(flag("c", "8"));
const top = Number(flag("top", "40"));
const method = flag("method", "tools/call");
const INSPECT_PORT = 9339;
/**
 * `--survivors`: only what the young generation's collections did not
 * take — what was promoted to the old generation (or still lives).
 */
const survivors = Deno.args.includes("--survivors");

/** A node of a sampling heap profile. */
interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

/** A minimal Chrome DevTools Protocol session over the inspector. */
async function inspector(port: number) {
  const list = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const socket = new WebSocket(list[0].webSocketDebuggerUrl);
  await new Promise((resolve) => socket.onopen = resolve);
  let next = 1;
  const pending = new Map<number, (value: unknown) => void>();
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    pending.get(message.id)?.(message.result);
    pending.delete(message.id);
  };
  return {
    send(method: string, params: unknown = {}): Promise<unknown> {
      const id = next++;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve) => pending.set(id, resolve));
    },
    close: () => socket.close(),
  };
}

const dir = await Deno.makeTempDir({ prefix: "dbport-heap-" });
const home = await benchHome(dir, MYSQL_URL);
await Deno.writeFile(home.sqlitePath, new Uint8Array());
{
  await using dbport = await startDbport(home, [
    `--inspect=127.0.0.1:${INSPECT_PORT}`,
  ]);
  const request = method === "tools/call"
    ? mcpRequest(dbport, "tools/call", {
      name: "execute_query",
      arguments: { connection_id: home.ids.postgres, query: "select 1" },
    })
    : mcpRequest(dbport, method);
  if (!await request()) throw new Error("dbport did not answer right");
  const session = await inspector(INSPECT_PORT);
  await runLoad({ concurrency, seconds: 1, warmupSeconds: 1, request });
  await session.send("HeapProfiler.enable");
  await session.send("HeapProfiler.startSampling", {
    samplingInterval: 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: !survivors,
  });
  const result = await runLoad({
    concurrency,
    seconds,
    warmupSeconds: 0,
    request,
  });
  const { profile } = await session.send("HeapProfiler.stopSampling") as {
    profile: { head: HeapNode };
  };
  session.close();
  closeConnections();
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.replace(/^file:\/\/.*?\/(lib|npm|node_modules)\//, "$1/");
    const fn = `${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + node.selfSize);
    byModule.set(where, (byModule.get(where) ?? 0) + node.selfSize);
    total += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  const per = (bytes: number) => (bytes / result.requests).toFixed(0);
  console.log(
    `${method} C=${concurrency}: ${result.requests} requests, ${
      per(total)
    } bytes allocated per request`,
  );
  for (
    const [title, map] of [["module", byModule], [
      "function",
      byFunction,
    ]] as const
  ) {
    console.log(`\n## by ${title} (bytes per request)`);
    for (
      const [name, bytes] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)
    ) {
      console.log(`${per(bytes).padStart(7)}  ${name}`);
    }
  }
}
await Deno.remove(dir, { recursive: true });
