/**
 * The console's Hono app: the policies (guards.ts) in front of its pages,
 * each page a Hono app of its own under the per-start prefix (its live part
 * at `?fragment=1`, its forms, docs/console.md).
 *
 * Loaded at the console's first request, not at `serve` start: an idle
 * server holds none of the pages' code (docs/performance.md "Memory").
 *
 * @module
 */

import { Hono } from "hono";
import { allowedHostsGuard } from "../server/guards/host_guard.ts";
import { HttpError } from "../server/http_error.ts";
import { approvalRoutes } from "./approval_routes.tsx";
import { assetRoutes } from "./asset_routes.ts";
import { connectionRoutes } from "./connection_routes.tsx";
import type { ConsoleDeps } from "./deps.ts";
import {
  CONSOLE_HOSTS,
  type ConsoleEnv,
  keyExchange,
  requireSession,
  sameOriginWithToken,
  securityHeaders,
  underPrefix,
} from "./guards.ts";
import { hardenRoutes } from "./harden_routes.tsx";
import { logRoutes } from "./log_routes.tsx";
import { queriesRoutes } from "./queries_routes.tsx";
import { queryRoutes } from "./query_routes.tsx";
import { schemaRoutes } from "./schema_routes.tsx";
import { tokenRoutes } from "./token_routes.tsx";
import { consoleView } from "./view.tsx";

/** Build the console app. */
export function createConsoleApp(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const base = deps.keys.prefix;
  app.onError((error) => {
    if (error instanceof HttpError) return error.toResponse();
    deps.log(
      `dbport: console: unexpected error: ${
        error instanceof Error ? error.stack : String(error)
      }`,
    );
    return HttpError.plain(500, "internal_error", "Internal error")
      .toResponse();
  });
  app.notFound(() =>
    HttpError.plain(404, "not_found", "Not found").toResponse()
  );
  app.use("*", securityHeaders());
  app.use("*", allowedHostsGuard(CONSOLE_HOSTS, deps.port));
  app.use("*", underPrefix(base));
  app.use("*", keyExchange(deps.keys, deps.port));
  app.use("*", requireSession(deps.keys, deps.port));
  app.use("*", sameOriginWithToken());

  // Mounted at `<prefix>/`: a page's "/" is the prefix with its slash.
  const view = consoleView(deps);
  const at = `${base}/`;
  app.route(at, assetRoutes(deps));
  app.route(at, approvalRoutes(deps, view));
  app.route(at, logRoutes(deps, view));
  app.route(at, connectionRoutes(deps, view));
  app.route(at, hardenRoutes(deps, view));
  app.route(at, queryRoutes(deps, view));
  app.route(at, schemaRoutes(deps, view));
  app.route(at, queriesRoutes(deps, view));
  app.route(at, tokenRoutes(deps, view));
  return app;
}
