/**
 * A TCP proxy on a free loopback port in front of a database server, for
 * tests that watch or delay what a driver sends: `pass` handles each client
 * connection (it opens its own to the server with `connect`); the proxy's URL
 * is the server's with the proxy's port.
 */

/** A running proxy. */
export interface TcpProxy {
  /** `target` with the proxy's host and port. */
  readonly url: string;
  /** Stop listening and close every connection through the proxy. */
  close(): Promise<void>;
}

/** Start a proxy in front of `target`; see the module's comment. */
export function tcpProxy(
  target: URL,
  pass: (
    client: Deno.Conn,
    connect: () => Promise<Deno.Conn>,
  ) => Promise<void>,
): TcpProxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  let closed = false;
  const connect = async () => {
    const server = await Deno.connect({
      hostname: target.hostname,
      port: Number(target.port || 5432),
    });
    // Opened as the proxy closed: closed at once, never left to outlive it.
    if (closed) {
      server.close();
      throw new Error("the proxy closed");
    }
    conns.add(server);
    return server;
  };
  const serving = (async () => {
    for await (const client of listener) {
      conns.add(client);
      void pass(client, connect).catch(() => {});
    }
  })().catch(() => {});
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String((listener.addr as Deno.NetAddr).port);
  return {
    url: url.toString(),
    async close() {
      closed = true;
      listener.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // Closed already.
        }
      }
      await serving;
    },
  };
}

/**
 * The first chunk a proxy's client sent, and whether it is the protocol's
 * CancelRequest (16 bytes: length 16, code 80877102); null when the client
 * closed first (its socket closed). `reader` reads the rest.
 */
export async function firstMessage(client: Deno.Conn): Promise<
  {
    reader: ReadableStreamDefaultReader<Uint8Array>;
    head: Uint8Array;
    cancel: boolean;
  } | null
> {
  const reader = client.readable.getReader();
  const first = await reader.read();
  if (first.done) {
    client.close();
    return null;
  }
  const head = first.value;
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const cancel = head.length >= 8 && view.getInt32(0) === 16 &&
    view.getInt32(4) === 80877102;
  return { reader, head, cancel };
}

/**
 * A proxy that holds back each cancel request (a connection whose first
 * message is the protocol's CancelRequest) by `delayMs` before passing it on
 * — a slow network, a tunnel, a busy postmaster — and counts them;
 * everything else passes at once (outsider stops 49, 49b).
 */
export function slowCancelProxy(
  target: URL,
  delayMs: number,
): TcpProxy & { readonly stats: { cancels: number } } {
  const stats = { cancels: 0 };
  // Holds still running when the proxy closes end then (a test that ended
  // before a held request went through leaves no timer).
  const holds = new Map<ReturnType<typeof setTimeout>, () => void>();
  let closing = false;
  const proxy = tcpProxy(target, async (client, connect) => {
    const first = await firstMessage(client);
    if (first === null) return;
    const { reader, head } = first;
    if (first.cancel) {
      stats.cancels++;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          holds.delete(timer);
          resolve();
        }, delayMs);
        holds.set(timer, resolve);
      });
      // A request still held when the proxy closes is dropped: passed on,
      // its connection to the server would outlive the test (CI: a TCP
      // connection left open by outsider_stop49b's test).
      if (closing) {
        try {
          client.close();
        } catch {
          // Closed already.
        }
        return;
      }
    }
    const server = await connect();
    server.readable.pipeTo(client.writable).catch(() => {});
    const writer = server.writable.getWriter();
    try {
      await writer.write(head);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        await writer.write(value);
      }
      await writer.close();
    } catch {
      // Either side closed.
    }
  });
  return {
    url: proxy.url,
    stats,
    close: () => {
      closing = true;
      for (const [timer, resolve] of holds) {
        clearTimeout(timer);
        resolve();
      }
      holds.clear();
      return proxy.close();
    },
  };
}

/**
 * A proxy that holds back what a session sends (every connection but a
 * cancel request) by `delayMs`, in order, while cancel requests pass at once:
 * a cancel request then reaches the server before the backend has read the
 * statement it is meant to stop — the backend drops a signal that finds it
 * waiting for a command — as on a slow link, a tunnel or a busy server,
 * deterministically. Counts the cancel requests, and holds the n-th back
 * by `cancelDelaysMs[n]` (a request sent again that arrives late).
 */
export function slowStatementProxy(
  target: URL,
  delayMs: number,
  /** How long the n-th cancel request is held back (0 past the list). */
  cancelDelaysMs: readonly number[] = [],
  /**
   * Close each cancel request's connection without passing it on: the
   * request looks delivered and stops nothing (a statement the server
   * cannot interrupt).
   */
  swallowCancels = false,
): TcpProxy & { readonly stats: { cancels: number } } {
  const stats = { cancels: 0 };
  // Cleared on close: a chunk or a request still held back is dropped.
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });
  const proxy = tcpProxy(target, async (client, connect) => {
    const first = await firstMessage(client);
    if (first === null) return;
    const { reader, head, cancel } = first;
    if (cancel) {
      const hold = cancelDelaysMs[stats.cancels++] ?? 0;
      if (hold > 0) await wait(hold);
      if (swallowCancels) return client.close();
    }
    const server = await connect();
    server.readable.pipeTo(client.writable).catch(() => {});
    const writer = server.writable.getWriter();
    // Each chunk is due `delayMs` after it arrived; written in order.
    let last = Promise.resolve();
    const pass = (chunk: Uint8Array) => {
      const due = performance.now() + (cancel ? 0 : delayMs);
      last = last.then(async () => {
        const left = due - performance.now();
        if (left > 0) await wait(left);
        await writer.write(chunk);
      });
      return last;
    };
    try {
      // The startup exchange passes at once: only statements are slow.
      await writer.write(head);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        void pass(value).catch(() => {});
      }
      await last;
      await writer.close();
    } catch {
      // Either side closed.
    }
  });
  return {
    url: proxy.url,
    stats,
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      return proxy.close();
    },
  };
}

/**
 * A proxy that holds every cancel request (a connection whose first message
 * is the protocol's CancelRequest) until `letThrough()`, counting those
 * received and those delivered (the server closed its side, having
 * signalled the session); everything else passes at once. `hangUp()`
 * closes the held requests' client sides at once — a relay (a tunnel, a
 * middlebox) that took the request and gave up on its client, yet still
 * delivers it once let through (outsider stops 50, 51).
 */
export function heldCancelProxy(target: URL) {
  const stats = { cancels: 0, delivered: 0 };
  let open = () => {};
  const opened = new Promise<void>((resolve) => open = resolve);
  const held = new Set<Deno.Conn>();
  const hung = new Set<Deno.Conn>();
  const proxy = tcpProxy(target, async (client, connect) => {
    const first = await firstMessage(client);
    if (first === null) return;
    const { reader, head } = first;
    if (first.cancel) {
      stats.cancels++;
      held.add(client);
      await opened;
      const server = await connect();
      const writer = server.writable.getWriter();
      await writer.write(head).catch(() => {});
      // The server closes once it has signalled the session.
      const back = hung.has(client) ? new WritableStream() : client.writable;
      await server.readable.pipeTo(back).catch(() => {});
      stats.delivered++;
      return;
    }
    const server = await connect();
    const answered = server.readable.pipeTo(client.writable).catch(() => {});
    const writer = server.writable.getWriter();
    try {
      await writer.write(head);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        await writer.write(value);
      }
      await writer.close();
    } catch {
      // Either side closed.
    }
    await answered;
  });
  return {
    url: proxy.url,
    stats,
    letThrough: () => open(),
    hangUp: () => {
      for (const client of held) {
        if (hung.has(client)) continue;
        hung.add(client);
        try {
          client.close();
        } catch {
          // Closed already.
        }
      }
    },
    close: () => proxy.close(),
  };
}
