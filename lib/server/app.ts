/**
 * The Hono app: routes and the pre-dispatch checks in the wire reference's order
 * (Host, Origin, body cap), the server switch, authentication, then the
 * endpoint.
 *
 * Runtime-neutral: `app.fetch` serves under node:http in production and
 * `app.request()` in tests alike.
 *
 * @module
 */

import { thrown } from "../base/thrown.ts";
import type { AppEnv } from "./env.ts";
import { Hono } from "hono";
import { type AuthDeps, authenticate } from "./auth/authenticate.ts";
import { availabilityGuard } from "./guards/availability_guard.ts";
import { bodyLimit, MAX_BODY_BYTES } from "./guards/body_limit.ts";
import { hostGuard } from "./guards/host_guard.ts";
import { originGuard, preflight } from "./guards/origin_guard.ts";
import { HttpError } from "./http_error.ts";
import { type EndpointDeps, mcpEndpoint } from "./mcp_endpoint.ts";
import type { ServerState } from "./state.ts";
import type { Logger } from "../base/log.ts";
import { MCP_PATH } from "../base/identity.ts";

/** What the app is built from. */
export interface AppDeps extends EndpointDeps {
  state: ServerState;
  log: Logger;
  auth: AuthDeps;
  maxBodyBytes?: number;
}

/** The path of the single MCP endpoint. */
export { MCP_PATH };

/** Whether `error` is only the client closing its connection mid-request. */
export function clientWentAway(error: unknown): boolean {
  const e = thrown(error);
  return e.message === "aborted" || e.code === "ECONNRESET" ||
    e.code === "ERR_STREAM_PREMATURE_CLOSE" || e.name === "AbortError";
}

/**
 * What a request that failed is answered: its own refusal, `client_gone`
 * for a client that hung up, or a logged `internal_error` (the Hono app and
 * the `POST /mcp` fast path alike).
 */
export function failure(error: unknown, log: Logger): HttpError {
  if (error instanceof HttpError) return error;
  // A client that hung up mid-request is expected, not an error: nothing
  // goes to the terminal where approval questions appear.
  if (clientWentAway(error)) {
    return HttpError.plain(400, "client_gone", "The client went away");
  }
  log(
    `dbport: unexpected error: ${
      error instanceof Error ? error.stack : String(error)
    }`,
  );
  return HttpError.plain(500, "internal_error", "Internal error");
}

/** Build the app. */
export function createApp(
  deps: AppDeps,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError((error) => failure(error, deps.log).toResponse());
  app.notFound(() =>
    HttpError.plain(
      404,
      "not_found",
      `Not found: the MCP endpoint is POST ${MCP_PATH}`,
    )
      .toResponse()
  );
  app.use("*", hostGuard(deps.state));
  app.use(MCP_PATH, originGuard(deps.state));
  app.options(MCP_PATH, preflight());
  app.post(
    MCP_PATH,
    bodyLimit(deps.maxBodyBytes ?? MAX_BODY_BYTES),
    availabilityGuard(deps.state),
    authenticate(deps.auth),
    mcpEndpoint(deps),
  );
  // No GET stream and no session DELETE in either era (docs/wire.md "HTTP surface").
  app.all(MCP_PATH, () =>
    HttpError.plain(
      405,
      "method_not_allowed",
      "Method not allowed: POST JSON-RPC messages to /mcp; there is no GET stream",
      { allow: "POST, OPTIONS" },
    ).toResponse());
  return app;
}
