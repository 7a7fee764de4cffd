/**
 * The socket: node:http under Deno through `@hono/node-server`, which gives the
 * transport limits `Deno.serve` cannot (docs/wire.md "Limits"): 16 KB of headers
 * (431), 64 concurrent connections, a 30 s idle timeout, and 30 s to send a
 * request (head and body) however slowly it trickles in. A connection past the 64th
 * waits up to 2 s for a free slot, then gets `503` with `Retry-After: 1` and
 * a JSON body - never a bare reset (docs/wire.md "Limits"). Before it waits,
 * the least recently used idle keep-alive connection (one that was answered
 * and asks nothing now) is closed to make room: its client reconnects when
 * it next asks, and a 503 is left for when every connection is at work.
 *
 * @module
 */

import {
  createServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { Socket } from "node:net";
import { ConnectionSlots } from "./connection_slots.ts";

/** The transport limits. */
export interface ListenOptions {
  hostname?: string;
  port: number;
  maxHeaderBytes?: number;
  maxConnections?: number;
  idleTimeoutMs?: number;
  /** How long a connection past the cap waits for a slot before its 503. */
  slotWaitMs?: number;
}

/** What a connection that found no free slot is told. */
const BUSY_BODY = JSON.stringify({
  error: "too_many_connections",
  message:
    "dbport is serving its maximum of concurrent connections; retry in a second",
});
const BUSY_RESPONSE = `HTTP/1.1 503 Service Unavailable\r
Content-Type: application/json\r
Retry-After: 1\r
Content-Length: ${new TextEncoder().encode(BUSY_BODY).length}\r
Connection: close\r
\r
${BUSY_BODY}`;

/** A bound listener. */
export interface Listener {
  readonly port: number;
  /**
   * Stop accepting, close idle sockets at once, let answers being written
   * finish, and cut whatever is still open after `graceMs`.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * A handler that answers some requests on node:http itself (the `POST /mcp`
 * fast path, `mcp_post.ts`): true when it took the request.
 */
export type DirectHandler = (
  request: IncomingMessage,
  response: ServerResponse,
  /** Headers the answer carries (`Keep-Alive`), for its own writeHead. */
  headers: Readonly<Record<string, string>>,
) => boolean;

/** The adapter's listener: a web `fetch` served on node:http. */
type Adapted = (
  request: IncomingMessage,
  response: ServerResponse,
) => Promise<unknown>;

/** No headers to add. */
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * Bind `fetch` on 127.0.0.1 with the wire reference's limits; a request
 * `direct` takes never reaches `fetch`.
 */
export function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  options: ListenOptions,
  direct?: DirectHandler,
): Promise<Listener> {
  const idle = options.idleTimeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    // Without overrideGlobalObjects: false the adapter replaces
    // globalThis.Request/Response, which breaks Deno.serve and fetch users
    // in the same process.
    const hostname = options.hostname ?? "127.0.0.1";
    // The adapter (and node:http2, which it imports) is loaded at the first
    // request `direct` leaves to it, not at start: an idle server does not
    // hold it (docs/performance.md "Memory").
    let adapter: Promise<Adapted> | null = null;
    const adapted = (request: IncomingMessage, response: ServerResponse) => {
      adapter ??= import("@hono/node-server").then((module) =>
        module.getRequestListener(fetch, {
          hostname,
          overrideGlobalObjects: false,
        })
      );
      // The adapter answers its own failures; a failure to load it leaves
      // nothing to answer with but the socket's end.
      return adapter.then((listener) => listener(request, response)).catch(
        () => response.destroy(),
      );
    };
    // Idle connections are timed by the slots' alarms: node:http's own
    // keep-alive and socket timeouts were two runtime timers a request
    // (issue 38), so both are off and its Keep-Alive header is set here.
    // Whole seconds, rounded down as node:http did: a client told more than
    // the server keeps the connection reuses it as it is closed.
    const keepAlive = `timeout=${Math.floor(idle / 1000)}`;
    const keepAliveHeader = Object.freeze({ "keep-alive": keepAlive });
    const server = createServer({
      maxHeaderSize: options.maxHeaderBytes ?? 16 * 1024,
      keepAliveTimeout: 0,
      // Slow-header clients are cut as well as silent ones.
      headersTimeout: idle,
      requestTimeout: 0,
    }, (request, response) => {
      const kept = response.shouldKeepAlive ? keepAliveHeader : NO_HEADERS;
      if (direct?.(request, response, kept)) return;
      // Set before the adapter's writeHead (the fast path passes it to its
      // own writeHead: a header set ahead sends node:http's writeHead down
      // its slow path, one setHeader a header).
      if (kept !== NO_HEADERS) response.setHeader("keep-alive", keepAlive);
      void adapted(request, response);
    });
    server.listen(options.port, hostname);
    // The cap is counted by the slots rather than with server.maxConnections,
    // which destroys the connection past it with no answer at all.
    const slots = new ConnectionSlots({
      max: options.maxConnections ?? 64,
      idleMs: idle,
      slotWaitMs: options.slotWaitMs ?? 2_000,
      busyResponse: BUSY_RESPONSE,
    });
    server.on("connection", (socket: Socket) => slots.connected(socket));
    server.on(
      "request",
      (request: IncomingMessage, response: ServerResponse) =>
        slots.requested(request, response),
    );
    server.once("error", reject);
    server.once("listening", () => {
      server.off("error", reject);
      const address = server.address();
      const port = typeof address === "object" && address !== null
        ? address.port
        : 0;
      resolve({
        port,
        close: (graceMs = 1_000) =>
          new Promise<void>((done) => {
            const force = setTimeout(
              () => server.closeAllConnections(),
              graceMs,
            );
            server.close(() => {
              clearTimeout(force);
              done();
            });
            server.closeIdleConnections();
          }),
      });
    });
  });
}
