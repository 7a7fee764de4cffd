/**
 * The Queries page's route (read-only, docs/queries.md): the saved queries
 * as the server holds them now.
 *
 * @module
 */

import { Hono } from "hono";
import type { ConsoleDeps } from "./deps.ts";
import type { ConsoleEnv } from "./guards.ts";
import { QueriesTable } from "./pages/queries.tsx";
import type { ConsoleView } from "./view.tsx";

/** The Queries page. */
export function queriesRoutes(
  deps: ConsoleDeps,
  view: ConsoleView,
): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  // Read per request from the server's store, which the queries.json watch
  // replaces: a `dbport queries add` shows at the next load.
  app.get("/queries", (c) =>
    view.page(
      c,
      { title: "Queries", path: "/queries" },
      <QueriesTable
        queries={deps.queries.all()}
        connections={deps.connections.all()}
      />,
    ));
  return app;
}
