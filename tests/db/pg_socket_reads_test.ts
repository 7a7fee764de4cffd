import { assert, assertEquals } from "@std/assert";
import { createServer, type Server, type Socket } from "node:net";
import { Buffer } from "node:buffer";
import {
  connectReading,
  ownCopy,
  takesViews,
} from "../../lib/db/postgres/pg_socket_reads.ts";
import { wired } from "../../lib/db/postgres/pg_wire.ts";

/** A server that sends `chunks` one by one, each after the last was read. */
async function sender(
  chunks: Uint8Array[],
): Promise<{ server: Server; port: number; next(): void }> {
  let client: Socket | null = null;
  let at = 0;
  const server = createServer((socket) => {
    client = socket;
    socket.write(chunks[at++]!);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    server,
    port,
    next: () => {
      if (at < chunks.length) client!.write(chunks[at++]!);
      else client!.end();
    },
  };
}

const FIRST = Buffer.alloc(1000, 0x61);
const SECOND = Buffer.alloc(1000, 0x62);

/** Read `socket` to its end, asking for each chunk after the last. */
function readAll(
  socket: Socket,
  next: () => void,
): Promise<Uint8Array[]> {
  const seen: Uint8Array[] = [];
  return new Promise((resolve, reject) => {
    socket.on("data", (chunk: Uint8Array) => {
      seen.push(chunk);
      next();
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(seen));
  });
}

Deno.test("a socket reading into its own buffer hands its listeners copies, which later reads never change", async () => {
  const { server, port, next } = await sender([FIRST, SECOND]);
  try {
    const socket = connectReading(port, "127.0.0.1");
    const seen = await readAll(socket, next);
    const all = Buffer.concat(seen);
    assertEquals(all.length, 2000);
    // The first chunk kept is still the first chunk's bytes, though the
    // socket's one buffer was filled again after it.
    assertEquals(Buffer.from(seen[0]!).toString(), "a".repeat(seen[0]!.length));
    assertEquals(all.toString(), "a".repeat(1000) + "b".repeat(1000));
  } finally {
    server.close();
  }
});

Deno.test("a wired socket's listeners (postgres.js) get copies of its read buffer's views", async () => {
  const { server, port, next } = await sender([FIRST, SECOND]);
  try {
    const socket = wired(connectReading(port, "127.0.0.1"), false);
    const seen = await readAll(socket, next);
    assertEquals(
      Buffer.concat(seen).toString(),
      "a".repeat(1000) + "b".repeat(1000),
    );
    for (const chunk of seen) {
      // A copy: ownCopy() leaves it as it is.
      assert(ownCopy(chunk) === chunk);
    }
    assertEquals(Buffer.from(seen[0]!).toString()[0], "a");
  } finally {
    server.close();
  }
});

Deno.test("ownCopy() copies a view of a read buffer only", async () => {
  const plain = new Uint8Array([1, 2, 3]);
  assert(ownCopy(plain) === plain);
  const { server, port, next } = await sender([FIRST]);
  try {
    const socket = connectReading(port, "127.0.0.1");
    // Taken as views (as pg_wire.ts `wired` takes them), then copied.
    takesViews(socket);
    const views: Uint8Array[] = [];
    const copies: Uint8Array[] = [];
    await new Promise<void>((resolve) => {
      socket.on("data", (chunk: Uint8Array) => {
        views.push(chunk);
        copies.push(ownCopy(chunk));
        next();
      });
      socket.on("close", () => resolve());
    });
    assert(views.length > 0);
    for (const [i, view] of views.entries()) {
      assert(copies[i] !== view);
      assertEquals([...copies[i]!], [...view]);
    }
  } finally {
    server.close();
  }
});
