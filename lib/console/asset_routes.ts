/**
 * The console's own files (its style sheet, icon and script) and `/events`,
 * the stream that tells a page its live part changed (docs/console.md
 * "Pages").
 *
 * @module
 */

import { Hono } from "hono";
import { CONSOLE_CSS, CONSOLE_ICON, CONSOLE_JS } from "./assets.ts";
import type { ConsoleDeps } from "./deps.ts";
import { eventStream } from "./event_stream.ts";
import type { ConsoleEnv } from "./guards.ts";

/** `/static/…` and `/events`. */
export function assetRoutes(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.get(
    "/static/console.css",
    (c) =>
      c.body(CONSOLE_CSS, 200, { "content-type": "text/css; charset=utf-8" }),
  );
  app.get(
    "/static/icon.svg",
    (c) => c.body(CONSOLE_ICON, 200, { "content-type": "image/svg+xml" }),
  );
  app.get("/static/console.js", (c) =>
    c.body(CONSOLE_JS, 200, {
      "content-type": "text/javascript; charset=utf-8",
    }));
  app.get(
    "/events",
    (c) => eventStream(deps.events, c.req.raw.signal, deps.shutdown),
  );
  return app;
}
