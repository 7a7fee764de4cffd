/**
 * `dbport-mcp`: the stdio bridge. An MCP client configured with nothing but
 * this program reaches whichever dbport server runs on this machine (starting
 * one if needed), speaking newline-delimited JSON-RPC on stdin/stdout. Every
 * diagnostic goes to stderr; stdout carries nothing but JSON-RPC (docs/wire.md
 * "Stdio bridge").
 *
 * It imports only `lib/protocol/`, its own `lib/bridge/` (which imports only
 * `lib/protocol/`) and web/Deno APIs: no npm.
 *
 * @module
 */

import { messageOf } from "./lib/base/message_of.ts";
import { acquire } from "./lib/bridge/launch.ts";
import { Proxy } from "./lib/bridge/proxy.ts";
import { LineWriter, readLines } from "./lib/bridge/stdio.ts";
import {
  BridgeFailure,
  discover,
  type Endpoint,
  parseJson,
} from "./lib/bridge/upstream.ts";
import { appDataDir } from "./lib/base/app_dir.ts";
import { ErrorCode } from "./lib/protocol/errors.ts";
import { isJsonObject, type JsonObject } from "./lib/protocol/jsonrpc.ts";
import { BRIDGE_EXECUTABLE, MCP_PATH } from "./lib/base/identity.ts";

const encoder = new TextEncoder();
const log = (line: string) => {
  Deno.stderr.writeSync(encoder.encode(line + "\n"));
};
const stdout = Deno.stdout.writable.getWriter();
const writer = new LineWriter((bytes) => stdout.write(bytes));

/** Find the server, prove it, and return where to forward. */
async function connect(dir: string, launch: boolean): Promise<{
  endpoint: Endpoint;
  result: JsonObject;
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

/** A failure as the bridge reports it. */
function asFailure(error: unknown): BridgeFailure {
  return error instanceof BridgeFailure ? error : new BridgeFailure(
    ErrorCode.ServiceUnavailable,
    messageOf(error),
  );
}

async function main(): Promise<number> {
  const dir = appDataDir();
  let endpoint: Endpoint | undefined;
  let proxy: Proxy | null = null;
  const start = (found: { endpoint: Endpoint; result: JsonObject }) => {
    endpoint = found.endpoint;
    log(`${BRIDGE_EXECUTABLE}: forwarding to ${endpoint.url}`);
    proxy = new Proxy({
      endpoint: () => endpoint!,
      // A rotated or revoked token: the server has written a new handshake.
      refresh: async () => {
        ({ endpoint } = await connect(dir, false));
        return endpoint;
      },
      discover: found.result,
      write: (line) => writer.line(line),
      log,
    });
    return proxy;
  };
  let failure: BridgeFailure | null = null;
  try {
    start(await connect(dir, true));
  } catch (error) {
    // Stay up: every request is answered with what is wrong and how to fix
    // it (a client shows that, where an exit shows "Connection closed"), and
    // the next request looks for a handshake again.
    failure = asFailure(error);
    log(`${BRIDGE_EXECUTABLE}: ${failure.message}`);
  }
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
    if (proxy === null) {
      const message = parseJson(line.text);
      const request = isJsonObject(message) && "id" in message &&
        typeof message.method === "string";
      if (!request) {
        if (message === undefined || !isJsonObject(message)) {
          await writer.line(JSON.stringify({
            jsonrpc: "2.0",
            id: null,
            error: {
              code: ErrorCode.ParseError,
              message: "Parse error: not JSON",
            },
          }));
        }
        continue; // a notification: nothing to do without a server
      }
      try {
        start(await connect(dir, false));
      } catch (error) {
        failure = asFailure(error);
        await writer.line(JSON.stringify({
          jsonrpc: "2.0",
          id: message.id,
          error: { code: failure.code, message: failure.message },
        }));
        continue;
      }
    }
    proxy!.handle(line.text);
  }
  // stdin closed: the client is gone. Nothing may linger.
  const running = proxy as Proxy | null;
  running?.abortAll();
  await Promise.race([
    running?.settled() ?? Promise.resolve(),
    new Promise((resolve) => setTimeout(resolve, 500)),
  ]);
  await Promise.race([
    writer.flushed(),
    new Promise((resolve) => setTimeout(resolve, 200)),
  ]);
  return 0;
}

if (import.meta.main) Deno.exit(await main());
