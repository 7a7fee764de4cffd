/**
 * The PostgreSQL protocol messages dbport's own read sends (pg_read.ts), and
 * the server's ErrorResponse read as postgres.js would raise it.
 *
 * @module
 */

import { Buffer } from "node:buffer";

const ENCODER = new TextEncoder();

/** What a read's exchange carries. */
export interface ExchangeAsk {
  /** The simple query that opens the read (`BEGIN READ ONLY` ...), if any. */
  begin: string;
  text: string;
  maxRows: number;
  /** Simple queries after the statement's Sync (`ROLLBACK`, `DISCARD ALL`). */
  after: readonly string[];
  /**
   * The statement inside `BEGIN READ ONLY` … `ROLLBACK`, all three before
   * its Sync: one answer from the server, and nothing the statement did to
   * the session (a setting, a role) outlives it.
   */
  wrap?: boolean;
}

/** The read's whole exchange, as the bytes of one write. */
export function exchange(ask: ExchangeAsk): Uint8Array {
  let room = 128 + 3 * (ask.begin.length + ask.text.length);
  for (const text of ask.after) room += 6 + 3 * text.length;
  const out = new Messages(room);
  if (ask.begin !== "") out.query(ask.begin);
  if (ask.wrap === true) out.unnamed("BEGIN READ ONLY");
  // Parse: the unnamed statement, no parameter types.
  out.open(0x50).cstring("").cstring(ask.text).int16(0).close();
  // Bind: the unnamed portal; no parameters; every column as text.
  out.open(0x42).cstring("").cstring("").int16(0).int16(0).int16(0).close();
  // Describe the portal: its columns' names and types.
  out.open(0x44).byte(0x50).cstring("").close();
  // Execute: one row past the cap tells that the result was cut.
  out.open(0x45).cstring("").int32(Math.min(ask.maxRows + 1, 2 ** 31 - 1))
    .close();
  if (ask.wrap === true) out.unnamed("ROLLBACK");
  out.open(0x53).close();
  for (const text of ask.after) out.query(text);
  return out.bytes();
}

/** Simple queries, one message each, as the bytes of one write. */
export function simpleQueries(texts: readonly string[]): Uint8Array {
  let room = 0;
  for (const text of texts) room += 6 + 3 * text.length;
  const out = new Messages(room);
  for (const text of texts) out.query(text);
  return out.bytes();
}

/**
 * Messages written into one buffer (`room`: an upper bound of their size,
 * three bytes per UTF-16 unit of text): a read's exchange is one
 * allocation, not one per message and string (bench W1: 5 KB a read) — and
 * a small one is a slice of node:buffer's shared pool rather than an
 * ArrayBuffer of its own (issue 38).
 */
class Messages {
  readonly #out: Buffer;
  #at = 0;
  /** Where the open message's length goes. */
  #lengthAt = -1;

  constructor(room: number) {
    // Every byte up to #at is written before it is sent.
    this.#out = Buffer.allocUnsafe(room);
  }

  /**
   * `text` through the extended protocol with no Sync of its own: Parse,
   * Bind and Execute of the unnamed statement, its answer read as one.
   */
  unnamed(text: string): this {
    this.open(0x50).cstring("").cstring(text).int16(0).close();
    this.open(0x42).cstring("").cstring("").int16(0).int16(0).int16(0).close();
    return this.open(0x45).cstring("").int32(0).close();
  }

  /** A simple query (`Q`) of `text`. */
  query(text: string): this {
    return this.open(0x51).cstring(text).close();
  }

  /** Start a message of `type`; its length is written by {@linkcode close}. */
  open(type: number): this {
    this.#out[this.#at] = type;
    this.#lengthAt = this.#at + 1;
    this.#at += 5;
    return this;
  }

  close(): this {
    this.#out.writeUInt32BE(this.#at - this.#lengthAt, this.#lengthAt);
    return this;
  }

  byte(value: number): this {
    this.#out[this.#at++] = value;
    return this;
  }

  cstring(text: string): this {
    if (text !== "") {
      this.#at += ENCODER.encodeInto(text, this.#out.subarray(this.#at))
        .written;
    }
    this.#out[this.#at++] = 0;
    return this;
  }

  int16(value: number): this {
    this.#at = this.#out.writeInt16BE(value, this.#at);
    return this;
  }

  int32(value: number): this {
    this.#at = this.#out.writeInt32BE(value, this.#at);
    return this;
  }

  /** The messages written, as a Buffer (what a socket write takes). */
  bytes(): Uint8Array {
    return this.#out.subarray(0, this.#at);
  }
}

/** The fields of an ErrorResponse, named as postgres.js names them. */
const ERROR_FIELDS: Record<number, string> = {
  0x53: "severity_local",
  0x56: "severity",
  0x43: "code",
  0x4d: "message",
  0x44: "detail",
  0x48: "hint",
  0x50: "position",
  0x70: "internal_position",
  0x71: "internal_query",
  0x57: "where",
  0x73: "schema_name",
  0x74: "table_name",
  0x63: "column_name",
  0x64: "data type_name",
  0x6e: "constraint_name",
  0x46: "file",
  0x4c: "line",
  0x52: "routine",
};

/** A server's error as the same kind of object postgres.js raises. */
export function pgError(body: Uint8Array): Error {
  const bytes = body instanceof Buffer
    ? body
    : Buffer.from(body.buffer, body.byteOffset, body.length);
  const fields: Record<string, string> = {};
  let at = 0;
  while (at < bytes.length && bytes[at] !== 0) {
    const nul = bytes.indexOf(0, at + 1);
    if (nul < 0) break;
    const name = ERROR_FIELDS[bytes[at]!];
    if (name !== undefined) fields[name] = bytes.toString("utf8", at + 1, nul);
    at = nul + 1;
  }
  const error = new Error(fields.message ?? "the database refused the read");
  error.name = "PostgresError";
  return Object.assign(error, fields);
}
