/**
 * A PostgreSQL session's startup, read as its bytes pass to postgres.js:
 * each message the server sends from the first byte handed to a listener
 * that may end the socket before postgres.js sees it (`followStartup`: the
 * several-host picker, pg_hosts.ts, and the own pool's sockets,
 * pg_pool_sockets.ts, follow a session's start with it), and the role check
 * of a one-host URL's `target_session_attrs` built on it (`checkedRole`).
 *
 * @module
 */

import type { Duplex } from "node:stream";

type Emit = (event: string | symbol, ...args: unknown[]) => boolean;

/**
 * Hand each message the server sends on `socket` to `message`, from its
 * first byte, before the socket's own listeners see the bytes: `true` once
 * it needs no more (the bytes then pass unread), an Error to end the socket
 * with it before the message reaches them (a session refused as it starts),
 * `false` to go on. The socket's bytes pass unchanged.
 */
export function followStartup(
  socket: Duplex,
  message: (type: number, bytes: Uint8Array) => boolean | Error,
): void {
  const emit = socket.emit.bind(socket) as Emit;
  let head = new Uint8Array(0);
  let body: Uint8Array | null = null;
  let filled = 0;
  let done = false;
  (socket as unknown as { emit: Emit }).emit = (event, ...args) => {
    if (done || event !== "data" || !(args[0] instanceof Uint8Array)) {
      return emit(event, ...args);
    }
    let chunk = args[0];
    while (chunk.length > 0 && !done) {
      if (body === null) {
        const part = chunk.subarray(0, 5 - head.length);
        const joined = new Uint8Array(head.length + part.length);
        joined.set(head);
        joined.set(part, head.length);
        head = joined;
        chunk = chunk.subarray(part.length);
        if (head.length < 5) break;
        const length = new DataView(head.buffer, head.byteOffset, 5)
          .getInt32(1);
        body = new Uint8Array(Math.max(0, length - 4));
        filled = 0;
      }
      const n = Math.min(body.length - filled, chunk.length);
      body.set(chunk.subarray(0, n), filled);
      filled += n;
      chunk = chunk.subarray(n);
      if (filled < body.length) break;
      const type = head[0]!;
      const bytes = body;
      head = new Uint8Array(0);
      body = null;
      const said = message(type, bytes);
      if (said instanceof Error) {
        done = true;
        socket.destroy(said);
        return true;
      }
      if (said) done = true;
    }
    return emit(event, ...args);
  };
}

/**
 * `open`'s sessions checked against `target_session_attrs` on a URL of one
 * host: a server of the other role ends its session as it starts, with an
 * error saying which it is. postgres.js's own check destroyed the session
 * with "write CONNECTION_DESTROYED", naming nothing (outsider stop 53).
 * `open` gives the session's bytes in clear (TLS's clear side).
 */
export function checkedRole(
  open: () => Promise<Duplex>,
  want: "primary" | "standby",
): () => Promise<Duplex> {
  return async () => {
    const socket = await open();
    followStartup(socket, (type, bytes) => {
      if (type === 0x53) { // ParameterStatus
        const [name, value] = new TextDecoder().decode(bytes).split("\0");
        if (name !== "in_hot_standby") return false;
        const standby = value === "on";
        if (standby === (want === "standby")) return false;
        return Object.assign(
          new Error(
            `the server is ${
              standby
                ? "a standby (in recovery)"
                : "a primary (not in recovery)"
            }, and the URL's target_session_attrs asks for a ${
              want === "primary"
                ? "primary (read-write)"
                : "standby (read-only)"
            }`,
          ),
          { code: "ENOTARGET" },
        );
      }
      return type === 0x5a; // ReadyForQuery: nothing more to read
    });
    return socket;
  };
}
