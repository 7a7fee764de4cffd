/**
 * Levels, scopes and the principals authentication produces
 * (docs/wire.md "Authentication" 2 and 5).
 *
 * @module
 */

import type { Level } from "../../app/tokens.ts";
import type { Principal, Scope } from "../../features/context.ts";

/** The scopes each level grants: each level adds to the one before. */
export const LEVEL_SCOPES: Readonly<Record<Level, ReadonlySet<Scope>>> = Object
  .freeze({
    readOnly: new Set<Scope>(["tools:read", "resources:read"]),
    readWrite: new Set<Scope>(["tools:read", "resources:read", "tools:write"]),
    fullAccess: new Set<Scope>([
      "tools:read",
      "resources:read",
      "tools:write",
      "admin",
    ]),
  });

/**
 * The anonymous loopback principal (authentication off, no header): read
 * scopes only, never more, whatever else is configured.
 */
export const ANONYMOUS: Principal = Object.freeze({
  key: "anonymous",
  kind: "anonymous",
  name: "anonymous",
  tokenId: null,
  scopes: LEVEL_SCOPES.readOnly,
  connections: null,
});

/** The principal key of a user token. */
export function tokenKey(tokenId: string): string {
  return `token:${tokenId}`;
}

/** The principal of a verified user token. */
export function tokenPrincipal(token: {
  id: string;
  name: string;
  level: Level;
  connections: readonly string[] | null;
}): Principal {
  return Object.freeze({
    key: tokenKey(token.id),
    kind: "token",
    name: token.name,
    tokenId: token.id,
    scopes: LEVEL_SCOPES[token.level],
    connections: token.connections === null ? null : new Set(token.connections),
  });
}

/**
 * The principal of a bridge token. Its key is the bridge's, not the token's:
 * rotation mints a new token, and the bridge's requests, cancellations and
 * approvals must survive it (docs/wire.md "The stdio bridge" 3).
 */
export function bridgePrincipal(
  tokenId: string,
  name: string,
  instanceId: string,
): Principal {
  return Object.freeze({
    key: `bridge:${instanceId}`,
    kind: "bridge",
    name,
    tokenId,
    scopes: LEVEL_SCOPES.readWrite,
    connections: null,
  });
}
