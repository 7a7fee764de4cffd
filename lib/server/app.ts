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

import type { AppEnv } from "./env.ts";
import { Hono } from "hono";
import { type AuthDeps, authenticate } from "./auth/authenticate.ts";
import { availabilityGuard } from "./guards/availability_guard.ts";
import { bodyLimit, MAX_BODY_BYTES } from "./guards/body_limit.ts";
import { hostGuard } from "./guards/host_guard.ts";
import { originGuard, preflight } from "./guards/origin_guard.ts";
import { HttpError } from "./http_error.ts";
import { failure } from "./failure.ts";
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

export { clientWentAway, failure } from "./failure.ts";

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
