/**
 * A fault of dbport's own reader while it holds a wired session
 * (lib/db/postgres/pg_wire.ts): thrown inside the socket's `data` event it
 * would end the whole process (stop 49: a row over 256 KiB holding an empty
 * value). The read fails with what happened, the session is closed, and the
 * process goes on.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import { Buffer } from "node:buffer";
import { Duplex } from "node:stream";
import { awaitWire, type Wire, wired } from "../../lib/db/postgres/pg_wire.ts";

/** A socket that swallows what is written to it. */
function fakeSocket(): Duplex {
  return new Duplex({
    read() {},
    write(_chunk, _encoding, done) {
      done();
    },
  });
}

/** The simple query postgres.js sends for `text`: 'Q', length, text, NUL. */
function simpleQuery(text: string): Buffer {
  const body = Buffer.from(text + "\0");
  const out = Buffer.alloc(5 + body.length);
  out[0] = 0x51;
  out.writeUInt32BE(4 + body.length, 1);
  body.copy(out, 5);
  return out;
}

Deno.test("pg_wire: a reader that throws on the server's bytes fails its read and closes the session, never the process", () => {
  const socket = wired(fakeSocket());
  const closed: Error[] = [];
  let lent: Wire | null = null;
  const { marker, forget } = awaitWire({
    start: (wire) => lent = wire,
    data: () => {
      throw new TypeError("Cannot read properties of null (reading 'length')");
    },
    closed: (error) => closed.push(error),
  });
  try {
    socket.write(simpleQuery(marker));
    assert(lent !== null, "the marker lent the socket to the read");
    socket.emit("data", Buffer.from("D\0\0\0\x06\0\0"));
    assertEquals(closed.length, 1, "the read was told once");
    assertMatch(
      closed[0]!.message,
      /^dbport could not read the database's answer \(Cannot read properties of null \(reading 'length'\)\); the database session was closed$/,
    );
    assert(socket.destroyed, "the session is closed");
    // Bytes after the fault reach the read no more.
    socket.emit("data", Buffer.from("Z\0\0\0\x05I"));
    assertEquals(closed.length, 1);
  } finally {
    forget();
    socket.destroy();
  }
});
