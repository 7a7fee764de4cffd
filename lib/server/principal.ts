/**
 * Who is calling. Until token authentication lands, a request without an
 * `Authorization` header is the anonymous loopback principal and a request
 * with one is keyed by a digest of that header, so legacy sessions and
 * cancellation are already bound to the credential that was presented.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import type { Principal, Scope } from "../features/context.ts";

/** Context variables this middleware provides. */
export type PrincipalVariables = { principal: Principal };

/** Read scopes of the anonymous loopback principal (contract "Authentication" 5). */
export const READ_SCOPES: ReadonlySet<Scope> = new Set<Scope>([
  "tools:read",
  "resources:read",
]);

/** The anonymous loopback principal. */
export const ANONYMOUS: Principal = Object.freeze({
  key: "anonymous",
  kind: "anonymous",
  name: "anonymous",
  scopes: READ_SCOPES,
});

async function digest(text: string): Promise<string> {
  const bytes = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(text),
  );
  return Array.from(
    new Uint8Array(bytes),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
}

/** Decide the principal from the `Authorization` header. */
export function principalMiddleware(): MiddlewareHandler<
  { Variables: PrincipalVariables }
> {
  return async function principal(c, next) {
    const authorization = c.req.header("authorization");
    c.set(
      "principal",
      authorization === undefined ? ANONYMOUS : {
        key: `credential:${await digest(authorization)}`,
        kind: "token",
        name: "unverified credential",
        scopes: READ_SCOPES,
      },
    );
    await next();
  };
}
