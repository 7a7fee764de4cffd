/**
 * Shape a handler's result for its era (docs/wire.md "Result envelope", "Cache
 * hints", "Versioning" 4).
 *
 * Modern: `resultType` always, serverInfo in `_meta`, cache hints exactly on
 * the methods of the wire reference's table. Legacy: none of these.
 *
 * @module
 */

import { META_SERVER_INFO } from "../protocol/envelope.ts";
import { wire } from "../protocol/errors.ts";
import { SERVER_INFO } from "../base/identity.ts";
import { isJsonObject, type JsonObject } from "../protocol/jsonrpc.ts";
import type { Era } from "../protocol/versions.ts";
import type { MethodSpec } from "./methods.ts";

const MIN_RESOURCE_TTL = 5_000;
const MAX_RESOURCE_TTL = 300_000;

/** Finish a result for the wire. Throws `-32603` for a result no era allows. */
export function finishResult(
  result: JsonObject,
  spec: MethodSpec,
  era: Era,
  params: JsonObject,
): JsonObject {
  // A handler's own cacheScope is never trusted: the table decides it.
  const { resultType, ttlMs, cacheScope: _ignored, _meta, ...rest } = result;
  const meta: JsonObject = isJsonObject(_meta) ? { ..._meta } : {};
  if (era === "legacy") {
    delete meta[META_SERVER_INFO];
    if (resultType !== undefined && resultType !== "complete") {
      throw wire.internal(
        `Internal error: ${spec.name} cannot answer ${resultType} to a legacy client`,
      );
    }
    return Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
  }
  const type = resultType ?? "complete";
  if (
    type !== "complete" && !(type === "input_required" && spec.mayRequireInput)
  ) {
    throw wire.internal(
      `Internal error: ${spec.name} cannot answer ${String(type)}`,
    );
  }
  const finished: JsonObject = { resultType: type, ...rest };
  if (type === "complete" && spec.cache !== null) {
    // A retry carrying inputResponses or requestState is never cached. The
    // 2026-07-28 schema still requires the hint on these methods, so it is
    // given as ttlMs 0 ("stale at once") rather than stripped.
    if ("requestState" in params || "inputResponses" in params) {
      finished.ttlMs = 0;
      finished.cacheScope = "private";
    } else {
      finished.ttlMs = spec.cache.perResult && typeof ttlMs === "number"
        ? Math.min(
          MAX_RESOURCE_TTL,
          Math.max(MIN_RESOURCE_TTL, Math.round(ttlMs)),
        )
        : spec.cache.ttlMs;
      finished.cacheScope = spec.cache.cacheScope;
    }
  }
  finished._meta = { ...meta, [META_SERVER_INFO]: SERVER_INFO };
  return finished;
}
