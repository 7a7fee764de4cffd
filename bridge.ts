/**
 * `dbport-mcp`: the stdio bridge. An MCP client configured with nothing but
 * this program reaches whichever dbport server runs on this machine (starting
 * one if needed), speaking newline-delimited JSON-RPC on stdin/stdout. Every
 * diagnostic goes to stderr; stdout carries nothing but JSON-RPC (contract:
 * "Stdio bridge").
 *
 * It imports only `lib/protocol/`, its own `lib/bridge/` (which imports only
 * `lib/protocol/`) and web/Deno APIs: no npm.
 *
 * @module
 */

import { acquire } from "./lib/bridge/launch.ts";
import { Proxy } from "./lib/bridge/proxy.ts";
import { LineWriter, readLines } from "./lib/bridge/stdio.ts";
import {
  BridgeFailure,
  discover,
  type Endpoint,
} from "./lib/bridge/upstream.ts";
import { appDataDir } from "./lib/protocol/app_dir.ts";
import { ErrorCode } from "./lib/protocol/errors.ts";
import { BRIDGE_EXECUTABLE, MCP_PATH } from "./lib/protocol/identity.ts";

const encoder = new TextEncoder();
const log = (line: string) => {
  Deno.stderr.writeSync(encoder.encode(line + "\n"));
};
const stdout = Deno.stdout.writable.getWriter();
const writer = new LineWriter((bytes) => stdout.write(bytes));

/** Find the server, prove it, and return where to forward. */
async function connect(dir: string, launch: boolean): Promise<{
  endpoint: Endpoint;
  result: Record<string, unknown>;
}> {
  const trusted = await acquire(dir, { log, launch });
  const { handshake } = trusted;
  const endpoint: Endpoint = {
    url: `http://127.0.0.1:${handshake.port}${MCP_PATH}`,
    token: handshake.token!,
    instanceId: handshake.instanceId,
    handshakePath: trusted.path,
  };
  const result = await discover(endpoint, AbortSignal.timeout(10_000));
  return { endpoint, result };
}

async function main(): Promise<number> {
  let dir: string;
  let endpoint: Endpoint;
  let discovered: Record<string, unknown>;
  try {
    dir = appDataDir();
    ({ endpoint, result: discovered } = await connect(dir, true));
  } catch (error) {
    const failure = error instanceof BridgeFailure ? error : new BridgeFailure(
      ErrorCode.ServiceUnavailable,
      error instanceof Error ? error.message : String(error),
    );
    log(`${BRIDGE_EXECUTABLE}: ${failure.message}`);
    await writer.line(
      JSON.stringify({
        jsonrpc: "2.0",
        id: null,
        error: { code: failure.code, message: failure.message },
      }),
    );
    return 1;
  }
  log(`${BRIDGE_EXECUTABLE}: forwarding to ${endpoint.url}`);
  const proxy = new Proxy({
    endpoint: () => endpoint,
    // A rotated or revoked token: the server has written a new handshake.
    refresh: async () => {
      ({ endpoint } = await connect(dir, false));
      return endpoint;
    },
    discover: discovered,
    write: (line) => writer.line(line),
    log,
  });
  for await (const line of readLines(Deno.stdin.readable)) {
    if ("tooLong" in line) {
      await writer.line(JSON.stringify({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: ErrorCode.PayloadTooLarge,
          message: "the message is over 10 MB",
        },
      }));
      continue;
    }
    proxy.handle(line.text);
  }
  // stdin closed: the client is gone. Nothing may linger.
  proxy.abortAll();
  await Promise.race([
    proxy.settled(),
    new Promise((resolve) => setTimeout(resolve, 500)),
  ]);
  await Promise.race([
    writer.flushed(),
    new Promise((resolve) => setTimeout(resolve, 200)),
  ]);
  return 0;
}

if (import.meta.main) Deno.exit(await main());
