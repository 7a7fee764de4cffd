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
  outgoing.writeHead(answer.status, {
    "content-type": "application/json",
    ...answer.headers,
    ...extra,
    "content-length": Buffer.byteLength(text),
  });
  outgoing.end(text);
}
