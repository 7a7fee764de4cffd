/**
 * `server/discover` (modern) and `initialize` (legacy): who we are and what we
 * can do (docs/wire.md "server/discover result", "Legacy session").
 *
 * @module
 */

import { INSTANCE_ID_META_KEY, SERVER_INFO } from "../base/identity.ts";
import type { JsonObject } from "../protocol/jsonrpc.ts";
import { SUPPORTED_VERSIONS } from "../protocol/versions.ts";
import { INSTRUCTIONS } from "./instructions.ts";

/** Modern capabilities, exactly the wire reference's table. */
export const MODERN_CAPABILITIES = Object.freeze({
  tools: { listChanged: false },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: false },
  completions: {},
  extensions: {},
});

/**
 * Legacy capabilities. Legacy clients see `resources.subscribe: false`
 * (docs/wire.md "Versioning" 4). They also get no change notifications at all -
 * there is no GET stream (405) and `subscriptions/listen` is modern-only - so
 * `listChanged` is false as well rather than a promise we could not keep.
 * `logging` is declared because `logging/setLevel` answers in this era.
 */
export const LEGACY_CAPABILITIES = Object.freeze({
  tools: { listChanged: false },
  resources: { subscribe: false, listChanged: false },
  prompts: { listChanged: false },
  completions: {},
  logging: {},
});

/**
 * The `server/discover` result before the dispatcher adds the envelope fields.
 * Built once per server start and frozen: the dispatcher copies the top level
 * and never mutates nested objects.
 */
export function discoverResult(instanceId: string): JsonObject {
  return deepFreeze({
    supportedVersions: [...SUPPORTED_VERSIONS],
    capabilities: structuredClone(MODERN_CAPABILITIES),
    instructions: INSTRUCTIONS,
    _meta: { [INSTANCE_ID_META_KEY]: instanceId },
  });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** The legacy `initialize` result for a negotiated version. */
export function initializeResult(protocolVersion: string): JsonObject {
  return {
    protocolVersion,
    capabilities: structuredClone(LEGACY_CAPABILITIES),
    serverInfo: { ...SERVER_INFO },
    instructions: INSTRUCTIONS,
  };
}
