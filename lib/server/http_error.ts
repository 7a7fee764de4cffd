/**
 * One HTTP error type that maps to a response (the Hono way): guards throw it,
 * the app's error handler renders it.
 *
 * @module
 */

import { errorResponse, type WireError } from "../protocol/errors.ts";
import type { JsonRpcId } from "../protocol/jsonrpc.ts";
import { encodeMessage } from "../protocol/json_text.ts";

/** An answer that ends a request early. */
export class HttpError extends Error {
  override name = "HttpError";
  readonly status: number;
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) {
    super(`HTTP ${status}`);
    this.status = status;
    this.body = body;
    this.headers = headers;
  }

  /** A JSON-RPC error response at the status its code is given by the wire reference. */
  static wire(error: WireError, id: JsonRpcId | null = null): HttpError {
    return new HttpError(error.status, errorResponse(id, error), {
      ...error.headers,
    });
  }

  /**
   * A non-JSON-RPC refusal: `{"error": "<code>", "message": "..."}`. Used for
   * answers given before a body is read (forbidden host or origin, unknown
   * path, wrong HTTP method), where there is no JSON-RPC request to answer.
   */
  static plain(
    status: number,
    code: string,
    message: string,
    headers: Record<string, string> = {},
  ): HttpError {
    return new HttpError(status, { error: code, message }, headers);
  }

  /** Render as a Response. */
  toResponse(): Response {
    return jsonResponse(this.status, this.body, this.headers);
  }
}

/** A JSON response with exact headers. */
export function jsonResponse(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  return new Response(encodeMessage(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}
