/**
 * Authentication of every request (docs/wire.md "Authentication",
 * "Authentication lockout"): the `Authorization` header, then the token, and
 * for a request that fails, the lockout. Sets the request's principal or
 * refuses with the wire reference's code, status and `WWW-Authenticate`.
 *
 * Every refusal is a failed attempt counted against the client address and,
 * when one was presented, the credential (by digest: the plaintext is never
 * kept); every refusal is logged, without the credential.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import type { AppEnv, PrincipalVariables } from "../env.ts";
import { sha256Hex } from "../../app/digest.ts";
import type { Principal } from "../../features/context.ts";
import { META_CLIENT_INFO, metaOf, traceOf } from "../../protocol/envelope.ts";
import { ErrorCode, WireError } from "../../protocol/errors.ts";
import { SERVICE_NAME } from "../../base/identity.ts";
import { isJsonObject } from "../../protocol/jsonrpc.ts";
import { activityEntry, type ActivitySink } from "../activity.ts";
import { HttpError } from "../http_error.ts";
import { peekRequest } from "../peek.ts";
import type { ServerState } from "../state.ts";
import type { Lockout } from "./lockout.ts";
import { ANONYMOUS } from "./principals.ts";
import type { TokenVerifier, Verification } from "./verifier.ts";

export type { PrincipalVariables };

/** What authentication needs. */
export interface AuthDeps {
  state: ServerState;
  verifier: TokenVerifier;
  lockout: Lockout;
  activity: ActivitySink;
  now: () => number;
  /** Called with each verified principal (to stamp the token's last use). */
  onVerified?: (principal: Principal) => void;
  /**
   * Re-read the tokens now if they changed (at most once per 50 ms): a token
   * the CLI made a moment ago is known before a miss is refused.
   */
  refresh?: () => Promise<void>;
}

/**
 * RFC 6750 §2.1: the scheme (case-insensitive), one space, a b64token. Our
 * tokens are base64url, so this accepts every token we mint and more.
 */
const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

const REALM = `Bearer realm="${SERVICE_NAME}"`;

/** The refusal for each way a credential can fail. */
function refusal(
  problem: "missing" | "malformed" | Exclude<Verification["kind"], "ok">,
): WireError {
  switch (problem) {
    case "missing":
      return new WireError(
        ErrorCode.Unauthenticated,
        "Unauthenticated: send Authorization: Bearer <token> (create a token with: deno task dbport tokens create)",
        undefined,
        { "www-authenticate": REALM },
      );
    case "malformed":
      return new WireError(
        ErrorCode.HeaderMismatch,
        'Header mismatch: Authorization must be "Bearer <token>"',
        { header: "Authorization" },
      );
    case "unknown":
    case "revoked":
      return new WireError(
        ErrorCode.Unauthenticated,
        "Unauthenticated: the token is unknown or was revoked",
        undefined,
        { "www-authenticate": 'Bearer error="invalid_token"' },
      );
    case "expired":
      return new WireError(
        ErrorCode.TokenExpired,
        "Token expired: create a new token in the app (deno task dbport tokens create)",
        undefined,
        {
          "www-authenticate":
            'Bearer error="invalid_token", error_description="token expired"',
        },
      );
  }
}

/** What authentication reads of one request. */
export interface Credentials {
  /** The `Authorization` header, if sent. */
  authorization: string | undefined;
  /** The client's address ("unknown" when there is no socket). */
  address: string;
  /** The body, for the refusal's id and the activity record. */
  body: Uint8Array | undefined;
}

/**
 * Who calls, or the refusal thrown as an {@linkcode HttpError}: the one
 * decision the Hono middleware and the `POST /mcp` fast path (`mcp_post.ts`)
 * both ask.
 */
export async function authenticateRequest(
  deps: AuthDeps,
  request: Credentials,
): Promise<Principal> {
  const header = request.authorization;
  // The credential's key is a hash, computed only when the lockout has
  // something to look up or count: a clean request skips it.
  const keys = () => {
    const address = `address:${request.address}`;
    return header === undefined
      ? [address]
      : [address, `credential:${sha256Hex(header)}`];
  };

  const refuse = (error: WireError, detail: string, counts: boolean) => {
    if (counts) deps.lockout.fail(keys());
    const peeked = peekRequest(request.body);
    const meta = metaOf(peeked.params);
    const info = meta?.[META_CLIENT_INFO];
    deps.activity(activityEntry({
      time: deps.now(),
      durationMs: 0,
      principal: null,
      clientInfo: isJsonObject(info) && typeof info.name === "string"
        ? {
          name: info.name,
          ...(typeof info.version === "string"
            ? { version: info.version }
            : {}),
        }
        : undefined,
      method: peeked.method,
      params: peeked.params,
      trace: traceOf(meta),
      ended: { errorCode: error.code },
      detail,
    }));
    return HttpError.wire(error, peeked.id);
  };

  // A valid token is served even from a locked-out address: every local
  // client shares 127.0.0.1, and one misconfigured client must not lock
  // out the rest (docs/security.md "Lockout"). Verification takes the same
  // constant time either way; only a request that fails is refused by the
  // lockout, and only a failure counts toward it.
  const locked = () => {
    const lockedMs = deps.lockout.size === 0
      ? 0
      : deps.lockout.lockedFor(keys());
    if (lockedMs <= 0) return null;
    const seconds = Math.ceil(lockedMs / 1000);
    return refuse(
      new WireError(
        ErrorCode.RateLimited,
        `Rate limited: too many failed authentication attempts; try again in ${seconds} s`,
        { retryAfterSeconds: seconds },
        { "retry-after": String(seconds) },
      ),
      "locked out",
      false,
    );
  };
  const fail = (error: WireError, detail: string) =>
    locked() ?? refuse(error, detail, true);

  if (header === undefined) {
    if (!deps.state.settings.requireAuth) return ANONYMOUS;
    throw fail(refusal("missing"), "no token");
  }
  const match = BEARER.exec(header);
  if (match === null) {
    throw fail(refusal("malformed"), "malformed Authorization");
  }
  let verified = deps.verifier.verify(match[1]!);
  if (verified.kind === "unknown" && deps.refresh !== undefined) {
    await deps.refresh();
    verified = deps.verifier.verify(match[1]!);
  }
  if (verified.kind !== "ok") {
    throw fail(refusal(verified.kind), `${verified.kind} token`);
  }
  deps.onVerified?.(verified.principal);
  return verified.principal;
}

/** Authenticate every request. */
export function authenticate(
  deps: AuthDeps,
): MiddlewareHandler<AppEnv> {
  return async function authenticate(c, next) {
    c.set(
      "principal",
      await authenticateRequest(deps, {
        authorization: c.req.header("authorization"),
        address: c.env?.incoming?.socket.remoteAddress ?? "unknown",
        body: c.get("body"),
      }),
    );
    await next();
  };
}
