/**
 * An answer to `POST /mcp` before it is written: JSON (or an empty 202) or
 * an SSE stream. The Hono app turns it into a web `Response`
 * ({@linkcode toResponse}); the fast path (`mcp_post.ts`) writes it straight
 * to the node:http `ServerResponse` ({@linkcode writeAnswer}).
 *
 * @module
 */

import type { ServerResponse } from "node:http";
import { Buffer } from "node:buffer";
import { encodeMessage } from "../protocol/json_text.ts";
import { HttpError, jsonResponse } from "./http_error.ts";
import { SseStream } from "./sse_stream.ts";

/** A JSON answer; `body` undefined is an empty one (a notification's 202). */
export interface JsonAnswer {
  readonly status: number;
  readonly body?: unknown;
  readonly headers: Readonly<Record<string, string>>;
}

/** What `POST /mcp` answers. */
export type Answer = JsonAnswer | SseStream;

/** The answer of an early refusal. */
export function errorAnswer(error: HttpError): JsonAnswer {
  return { status: error.status, body: error.body, headers: error.headers };
}

/** The answer as a web Response (the Hono app). */
export function toResponse(answer: Answer): Response {
  if (answer instanceof SseStream) return answer.response;
  if (answer.body === undefined) {
    return new Response(null, {
      status: answer.status,
      headers: answer.headers,
    });
  }
  return jsonResponse(answer.status, answer.body, { ...answer.headers });
}

/** Write the answer to a node:http response, with `extra` headers added. */
export function writeAnswer(
  outgoing: ServerResponse,
  answer: Answer,
  extra: Readonly<Record<string, string>> = {},
): void {
  if (answer instanceof SseStream) return answer.writeTo(outgoing, extra);
  if (answer.body === undefined) {
    outgoing.writeHead(answer.status, { ...answer.headers, ...extra });
    outgoing.end();
    return;
  }
  const text = encodeMessage(answer.body);
  // A large answer is encoded once: its length and the write both took a
  // UTF-8 pass and a copy of the text (bench W5: 0.7 MB a 200 KB answer).
  // A small one stays text (a Buffer each was slower for `SELECT 1`).
  const body = text.length > ENCODE_ONCE_CHARS ? ENCODER.encode(text) : text;
  outgoing.writeHead(answer.status, {
    "content-type": "application/json",
    ...answer.headers,
    ...extra,
    "content-length": typeof body === "string"
      ? Buffer.byteLength(body)
      : body.length,
  });
  outgoing.end(body);
}

/** Answers longer than this are written as their UTF-8 bytes. */
const ENCODE_ONCE_CHARS = 16 * 1024;

const ENCODER = new TextEncoder();
