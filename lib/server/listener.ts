/**
 * The socket: node:http under Deno through `@hono/node-server`, which gives the
 * transport limits `Deno.serve` cannot (docs/wire.md "Limits"): 16 KB of headers
 * (431), 64 concurrent connections, a 30 s idle timeout, and 30 s to send a
 * request head however slowly it trickles in. A connection past the 64th
 * waits up to 2 s for a free slot, then gets `503` with `Retry-After: 1` and
 * a JSON body — never a bare reset (docs/wire.md "Limits"). Before it waits,
 * the least recently used idle keep-alive connection (one that was answered
 * and asks nothing now) is closed to make room: its client reconnects when
 * it next asks, and a 503 is left for when every connection is at work.
 *
 * @module
 */

import { getRequestListener } from "@hono/node-server";
import {
  createServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { Socket } from "node:net";

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
) => boolean;

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
    const adapted = getRequestListener(fetch, {
      hostname,
      overrideGlobalObjects: false,
    });
    const server = createServer({
      maxHeaderSize: options.maxHeaderBytes ?? 16 * 1024,
      keepAliveTimeout: idle,
      // Slow-header clients are cut as well as silent ones.
      headersTimeout: idle,
      requestTimeout: 0,
    }, (request, response) => {
      if (direct?.(request, response)) return;
      void adapted(request, response);
    });
    server.listen(options.port, hostname);
    // The cap is counted here rather than with server.maxConnections, which
    // destroys the connection past it with no answer at all.
    const max = options.maxConnections ?? 64;
    const slotWait = options.slotWaitMs ?? 2_000;
    let open = 0;
    const waiting: { socket: Socket; timer: ReturnType<typeof setTimeout> }[] =
      [];
    // Requests being answered keep their socket: a long statement with no
    // progress must not be cut by the idle timer. Idle sockets are closed.
    const busy = new WeakMap<Socket, number>();
    // Answered connections that ask nothing now, least recently used first
    // (a Map keeps insertion order; each answer moves its socket last).
    const idleKeptAlive = new Map<Socket, true>();
    // Deno's node:http does not enforce headersTimeout: a client sending a
    // header byte a second (slow loris) would hold its slot for ever, since
    // each byte resets the idle timer. So each socket gets `idle` ms to
    // deliver a whole request head: from its connection, and again after
    // each answer.
    const headDeadline = new WeakMap<Socket, ReturnType<typeof setTimeout>>();
    const armHead = (socket: Socket) => {
      clearTimeout(headDeadline.get(socket));
      headDeadline.set(socket, setTimeout(() => socket.destroy(), idle));
    };
    const admit = (socket: Socket) => {
      open++;
      armHead(socket);
      socket.once("close", () => {
        clearTimeout(headDeadline.get(socket));
        idleKeptAlive.delete(socket);
        open--;
        const next = waiting.shift();
        if (next !== undefined) {
          clearTimeout(next.timer);
          admit(next.socket);
          next.socket.resume();
        }
      });
    };
    server.on("connection", (socket: Socket) => {
      if (open < max) return admit(socket);
      // Not read until a slot frees: node:http parses nothing meanwhile.
      socket.pause();
      const entry = {
        socket,
        timer: setTimeout(() => {
          const at = waiting.indexOf(entry);
          if (at !== -1) waiting.splice(at, 1);
          socket.end(BUSY_RESPONSE);
          setTimeout(() => socket.destroy(), 1_000).unref?.();
        }, slotWait),
      };
      waiting.push(entry);
      // Room from the connection idle the longest, if there is one: its
      // close admits the first waiting connection (above).
      const [oldest] = idleKeptAlive.keys();
      if (oldest !== undefined) {
        idleKeptAlive.delete(oldest);
        oldest.destroy();
      }
      socket.once("close", () => {
        clearTimeout(entry.timer);
        const at = waiting.indexOf(entry);
        if (at !== -1) waiting.splice(at, 1);
      });
    });
    // The request each socket is answering: one whose body has not fully
    // arrived when the idle timer fires is a stalled upload, not work.
    const current = new WeakMap<Socket, IncomingMessage>();
    server.on("request", (request: IncomingMessage, response) => {
      const socket = request.socket;
      current.set(socket, request);
      clearTimeout(headDeadline.get(socket));
      idleKeptAlive.delete(socket);
      busy.set(socket, (busy.get(socket) ?? 0) + 1);
      response.once("close", () => {
        const left = (busy.get(socket) ?? 1) - 1;
        busy.set(socket, left);
        if (left === 0 && !socket.destroyed) {
          armHead(socket);
          idleKeptAlive.set(socket, true);
        }
      });
    });
    server.setTimeout(idle, (socket: Socket) => {
      // A request still being worked on keeps its socket; but a client that
      // stopped reading its answer (bytes waiting to be sent for `idle` ms)
      // holds its slot as much as a silent one, and is cut.
      // A body that stopped arriving holds the slot like a slow loris: cut.
      const request = current.get(socket);
      const stalled = request !== undefined && !request.complete;
      if (
        (busy.get(socket) ?? 0) > 0 && socket.writableLength === 0 && !stalled
      ) return;
      socket.destroy();
    });
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
