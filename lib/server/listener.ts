/**
 * The socket: node:http under Deno through `@hono/node-server`, which gives the
 * transport limits `Deno.serve` cannot (contract: "Limits"): 16 KB of headers
 * (431), 64 concurrent connections, a 30 s idle timeout.
 *
 * @module
 */

import { serve } from "@hono/node-server";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { Socket } from "node:net";

/** The transport limits. */
export interface ListenOptions {
  hostname?: string;
  port: number;
  maxHeaderBytes?: number;
  maxConnections?: number;
  idleTimeoutMs?: number;
}

/** A bound listener. */
export interface Listener {
  readonly port: number;
  /**
   * Stop accepting, close idle sockets at once, let answers being written
   * finish, and cut whatever is still open after `graceMs`.
   */
  close(graceMs?: number): Promise<void>;
}

/** Bind `fetch` on 127.0.0.1 with the contract's limits. */
export function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  options: ListenOptions,
): Promise<Listener> {
  const idle = options.idleTimeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const server = serve({
      fetch,
      hostname: options.hostname ?? "127.0.0.1",
      port: options.port,
      createServer,
      serverOptions: {
        maxHeaderSize: options.maxHeaderBytes ?? 16 * 1024,
        keepAliveTimeout: idle,
        // Slow-header clients are cut as well as silent ones.
        headersTimeout: idle,
        requestTimeout: 0,
      },
      // Without this the adapter replaces globalThis.Request/Response, which
      // breaks Deno.serve and fetch users in the same process.
      overrideGlobalObjects: false,
    }) as Server;
    server.maxConnections = options.maxConnections ?? 64;
    // Requests being answered keep their socket: a long statement with no
    // progress must not be cut by the idle timer. Idle sockets are closed.
    const busy = new WeakMap<Socket, number>();
    server.on("request", (request: IncomingMessage, response) => {
      const socket = request.socket;
      busy.set(socket, (busy.get(socket) ?? 0) + 1);
      response.once(
        "close",
        () => busy.set(socket, (busy.get(socket) ?? 1) - 1),
      );
    });
    server.setTimeout(idle, (socket: Socket) => {
      if ((busy.get(socket) ?? 0) > 0) return;
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
