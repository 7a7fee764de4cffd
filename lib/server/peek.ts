/**
 * A look at a body before the endpoint parses it, for refusals that happen
 * earlier (server off, authentication): the request id, so the client can
 * match the error to its request (docs/wire.md "Protocol errors"), and the method, for the log.
 * Parsed only on those refusal paths.
 *
 * @module
 */

import {
  classifyMessage,
  isJsonObject,
  type JsonObject,
  type JsonRpcId,
  parseJsonBody,
} from "../protocol/jsonrpc.ts";

/** What a refused body said, as far as it could be read. */
export interface Peeked {
  id: JsonRpcId | null;
  method: string | null;
  params: JsonObject;
}

/** Read the id, method and params of a body; never throws. */
export function peekRequest(body: Uint8Array | undefined): Peeked {
  const nothing: Peeked = { id: null, method: null, params: {} };
  if (body === undefined) return nothing;
  const parsed = parseJsonBody(body);
  if (!parsed.ok) return nothing;
  const message = classifyMessage(parsed.value);
  if (message.kind !== "request" && message.kind !== "notification") {
    return nothing;
  }
  return {
    id: message.kind === "request" ? message.id : null,
    method: message.method,
    params: isJsonObject(message.params) ? message.params : {},
  };
}
