/**
 * The fast path of `POST /mcp` (issue 38): answered on node:http itself,
 * without the adapter's web Request and Response round trip (bench: ~70 µs
 * of CPU a call). The checks are the app's own, in its order - Host
 * (`hostRefusal`), Origin (`originRefusal`, CORS on every later answer),
 * the body cap (`declaredTooLarge`, `readIncoming`), the server switch
 * (`unavailable`), authentication (`authenticateRequest`) - then the
 * endpoint (`answerPost`); its answer is written straight to the socket
 * (`writeAnswer`). Every other method and path is left to the Hono app.
 *
 * @module
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { MCP_PATH } from "../base/identity.ts";
import { type Answer, errorAnswer, writeAnswer } from "./answer.ts";
import type { AppDeps } from "./app.ts";
import { failure } from "./failure.ts";
import { authenticateRequest } from "./auth/authenticate.ts";
import { outgoingSignal } from "./connection_signal.ts";
import { unavailable } from "./guards/availability_guard.ts";
import {
  declaredTooLarge,
  MAX_BODY_BYTES,
  readIncoming,
} from "./guards/body_limit.ts";
import { hostRefusal } from "./guards/host_guard.ts";
import { corsHeaders, originRefusal } from "./guards/origin_guard.ts";
import { answerPost } from "./mcp_endpoint.ts";
import { RawHeaders } from "./raw_headers.ts";

/** The fast path, as the listener calls it. */
export interface McpPostPath {
  /**
   * Answer `request` if it is `POST /mcp`; false leaves it to the app.
   * `headers` (the listener's `Keep-Alive`) go with the answer.
   */
  handle(
    request: IncomingMessage,
    response: ServerResponse,
    headers?: Readonly<Record<string, string>>,
  ): boolean;
  /** How many requests it took (a marker for tests, not a metric). */
  readonly served: number;
}

/** How long, and how much, an unread body is drained before closing. */
const DRAIN_MS = 500;
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;

/** Whether a request target is the endpoint (its query ignored, as Hono does). */
function isMcpTarget(url: string | undefined): boolean {
  return url === MCP_PATH ||
    (url !== undefined && url.startsWith(`${MCP_PATH}?`));
}

/** Build the fast path from the app's own dependencies. */
export function createMcpPost(deps: AppDeps): McpPostPath {
  const max = deps.maxBodyBytes ?? MAX_BODY_BYTES;
  let served = 0;
  return {
    handle(request, response, headers = {}) {
      if (request.method !== "POST" || !isMcpTarget(request.url)) {
        return false;
      }
      served++;
      void serve(deps, max, request, response, headers);
      return true;
    },
    get served() {
      return served;
    },
  };
}

/** Run the checks and the endpoint; write whatever they answer. */
async function serve(
  deps: AppDeps,
  max: number,
  request: IncomingMessage,
  response: ServerResponse,
  extra: Readonly<Record<string, string>>,
): Promise<void> {
  drainAfterAnswer(request, response);
  const headers = new RawHeaders(request.rawHeaders);
  let cors: Readonly<Record<string, string>> = extra;
  let answer: Answer;
  try {
    const host = hostRefusal(headers.value("host"), deps.state.port);
    if (host !== null) throw host;
    const origin = headers.value("origin");
    if (origin !== undefined) {
      const refused = originRefusal(origin, deps.state.settings.allowedOrigins);
      if (refused !== null) throw refused;
      cors = { ...corsHeaders(origin), ...extra };
    }
    const declared = declaredTooLarge(
      headers.value("content-length"),
      headers.value("transfer-encoding"),
      max,
    );
    if (declared !== null) throw declared;
    const body = await readIncoming(request, max);
    const off = unavailable(deps.state, body);
    if (off !== null) throw off;
    const principal = await authenticateRequest(deps.auth, {
      authorization: headers.value("authorization"),
      address: request.socket.remoteAddress ?? "unknown",
      body,
    });
    answer = await answerPost(deps, {
      body,
      headers,
      principal,
      connection: outgoingSignal(response),
    });
  } catch (error) {
    answer = errorAnswer(failure(error, deps.log));
  }
  if (response.headersSent || response.destroyed) return;
  try {
    writeAnswer(response, answer, cors);
  } catch (error) {
    // Nothing can be answered any more: say so once and drop the socket.
    failure(error, deps.log);
    response.destroy();
  }
}

/**
 * A body left unread (a refusal before it was read, or past the cap) is
 * drained for a moment after the answer, so the client reads the answer
 * rather than a reset, then the connection is closed - as the adapter does.
 */
function drainAfterAnswer(
  request: IncomingMessage,
  response: ServerResponse,
): void {
  response.once("finish", () => {
    if (request.complete) return;
    let read = 0;
    const close = () => {
      clearTimeout(timer);
      request.off("data", count);
      const socket = request.socket;
      if (!socket.destroyed) socket.destroySoon();
    };
    const count = (chunk: Uint8Array) => {
      read += chunk.byteLength;
      if (read > DRAIN_MAX_BYTES) close();
    };
    const timer = setTimeout(close, DRAIN_MS);
    request.on("data", count);
    request.once("end", () => {
      clearTimeout(timer);
      request.off("data", count);
    });
    request.resume();
  });
}
