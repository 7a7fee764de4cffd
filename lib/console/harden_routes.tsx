/**
 * The Connections page's Harden button (docs/console.md "Harden"): the
 * first POST plans the AI login with the very code `connections harden`
 * uses and shows its statements; the second, naming that plan, runs it,
 * proves the login and saves it. Both carry the session's CSRF token like
 * every form; a plan belongs to the session and connection it was shown
 * to, is used once, and is forgotten after PLAN_TTL_MS (at most MAX_PLANS
 * wait).
 *
 * @module
 */

import { Hono } from "hono";
import type { Child } from "hono/jsx";
import { loadConnections } from "../app/connections.ts";
import {
  applyHarden,
  type PreparedHarden,
  prepareHarden,
  saveHardened,
} from "../app/harden.ts";
import { ENGINES } from "../db/engines.ts";
import { messageOf } from "../base/message_of.ts";
import { HttpError } from "../server/http_error.ts";
import type { ConsoleDeps } from "./deps.ts";
import type { ConsoleEnv } from "./guards.ts";
import { type ConsoleView, noSuchConnection } from "./view.tsx";
import { ShownPlans } from "./shown_plans.ts";
import { HardenConfirm } from "./pages/harden.tsx";

/** How long a shown plan may wait for its second click. */
export const PLAN_TTL_MS = 10 * 60_000;

/** Plans kept at most (the oldest is forgotten past it). */
export const MAX_PLANS = 16;

/** The Connections page's Harden button. */
export function hardenRoutes(
  deps: ConsoleDeps,
  view: ConsoleView,
): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const page = (title: string, body: Child) =>
    view.whole({ title, path: "/connections" }, body);
  const see = view.see;
  const plans = new ShownPlans<PreparedHarden>(
    PLAN_TTL_MS,
    MAX_PLANS,
    () => deps.now(),
  );

  app.post("/connections/:id/harden", async (c) => {
    const connection = await saved(deps, c.req.param("id"));
    if (!ENGINES[connection.engine].logins) {
      throw HttpError.plain(
        400,
        "no_logins",
        `${ENGINES[connection.engine].label} has no logins to harden`,
      );
    }
    const prepared = await prepareHarden(connection).catch((error) => {
      throw HttpError.plain(
        409,
        "harden_failed",
        `Cannot plan the AI login of "${connection.name}": ${messageOf(error)}`,
      );
    });
    if (prepared === null) throw HttpError.plain(400, "no_logins", "No logins");
    const session = c.get("session");
    const id = plans.keep(session.id, prepared);
    return page(
      "Harden",
      <HardenConfirm
        connection={connection}
        user={prepared.plan.user}
        statements={prepared.shown}
        notes={prepared.plan.notes}
        plan={id}
        csrf={session.csrf}
      />,
    );
  });

  app.post("/connections/:id/harden/apply", async (c) => {
    const prepared = plans.take(
      c.get("form").plan ?? "",
      c.get("session").id,
      (prepared) => prepared.connection.id === c.req.param("id"),
    );
    if (prepared === undefined) {
      throw HttpError.plain(
        409,
        "no_plan",
        "That Harden plan is not waiting (used, expired or another page's): press Harden again",
      );
    }
    const name = prepared.connection.name;
    let done;
    try {
      done = await applyHarden(prepared);
      await saveHardened(deps.connectionsPath, done.connection);
    } catch (error) {
      throw HttpError.plain(
        409,
        "harden_failed",
        `The AI login of "${name}" was not saved: ${
          messageOf(error).replaceAll(prepared.plan.password, "********")
        }`,
      );
    }
    deps.connections.apply(
      await Deno.readTextFile(deps.connectionsPath),
      deps.connectionsPath,
      deps.log,
    );
    deps.log(
      `dbport: console: "${name}" hardened: AI reads now run as "${prepared.plan.user}"`,
    );
    deps.events.changed("connections");
    return see("/connections?notice=hardened");
  });

  return app;
}

async function saved(deps: ConsoleDeps, id: string) {
  const loaded = await loadConnections(deps.connectionsPath);
  if (!loaded.ok) throw HttpError.plain(409, "unreadable", loaded.message);
  const connection = loaded.connections.find((c) => c.id === id);
  if (connection === undefined) {
    throw noSuchConnection();
  }
  return connection;
}
