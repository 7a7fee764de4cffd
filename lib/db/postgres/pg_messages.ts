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
}

/** The read's whole exchange, as the bytes of one write. */
export function exchange(ask: ExchangeAsk): Uint8Array {
  const parts: Uint8Array[] = [];
  if (ask.begin !== "") parts.push(query(ask.begin));
  parts.push(
    // Parse: the unnamed statement, no parameter types.
    message(0x50, cstring(""), cstring(ask.text), int16(0)),
    // Bind: the unnamed portal; no parameters; every column as text.
    message(0x42, cstring(""), cstring(""), int16(0), int16(0), int16(0)),
    // Describe the portal: its columns' names and types.
    message(0x44, Uint8Array.of(0x50), cstring("")),
    // Execute: one row past the cap tells that the result was cut.
    message(0x45, cstring(""), int32(Math.min(ask.maxRows + 1, 2 ** 31 - 1))),
    message(0x53),
  );
  for (const text of ask.after) parts.push(query(text));
  return Buffer.concat(parts);
}

/** Simple queries, one message each, as the bytes of one write. */
export function simpleQueries(texts: readonly string[]): Uint8Array {
  return Buffer.concat(texts.map(query));
}

/** A simple query (`Q`) of `text`. */
function query(text: string): Uint8Array {
  return message(0x51, cstring(text));
}

function message(type: number, ...parts: Uint8Array[]): Uint8Array {
  let length = 4;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(1 + length);
  out[0] = type;
  new DataView(out.buffer).setUint32(1, length);
  let at = 5;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function cstring(text: string): Uint8Array {
  const bytes = ENCODER.encode(text);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  return out;
}

function int16(value: number): Uint8Array {
  return Uint8Array.of(value >> 8 & 0xff, value & 0xff);
}

function int32(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setInt32(0, value);
  return out;
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
