/**
 * The Tokens page's routes (docs/tokens.md): the list, a token created (its
 * plaintext shown once, on the page after), revoked; each token's budget
 * and its Pause/Resume ("Budgets and pausing"). Each change tells the
 * server at once.
 *
 * @module
 */

import { Hono } from "hono";
import { parseDuration } from "../app/duration.ts";
import {
  BRIDGE_BUDGET,
  loadBudgets,
  parseLimit,
  setLimits,
  setPaused,
  type TokenLimits,
} from "../app/token_budgets.ts";
import { isLevel } from "../app/tokens.ts";
import { HttpError } from "../server/http_error.ts";
import type { ConsoleDeps } from "./deps.ts";
import type { ConsoleEnv } from "./guards.ts";
import { TOKEN_LIFETIMES, TokensPage } from "./pages/tokens.tsx";
import { BUDGET_FIELDS } from "./pages/tokens_budget.tsx";
import type { ConsoleView } from "./view.tsx";

/** The Tokens page. */
export function tokenRoutes(
  deps: ConsoleDeps,
  view: ConsoleView,
): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const see = view.see;
  app.get("/tokens", async (c) => {
    const session = c.get("session");
    // The plaintext is shown once: taken from the session as it is shown.
    const created = session.flash;
    delete session.flash;
    return view.page(
      c,
      { title: "Tokens", path: "/tokens" },
      <TokensPage
        tokens={await deps.tokens.list()}
        connections={deps.connections.all()}
        csrf={session.csrf}
        now={deps.now()}
        created={created}
        notice={view.notice(c)}
        budgets={await loadBudgets(deps.tokens.db)}
      />,
    );
  });

  app.post("/tokens", async (c) => {
    const form = c.get("form");
    const name = (form.name ?? "").trim();
    if (name === "" || name.length > 100) {
      throw HttpError.plain(
        400,
        "bad_name",
        "A token needs a name of 1 to 100 characters",
      );
    }
    const level = form.level ?? "";
    if (!isLevel(level)) {
      throw HttpError.plain(
        400,
        "bad_level",
        `level must be readOnly, readWrite or fullAccess, got ${
          JSON.stringify(level)
        }`,
      );
    }
    const expires = form.expires ?? "90d";
    const lifetime = parseDuration(expires);
    if (!TOKEN_LIFETIMES.includes(expires) || !lifetime.ok) {
      throw HttpError.plain(
        400,
        "bad_expiry",
        `expires must be one of ${TOKEN_LIFETIMES.join(", ")}`,
      );
    }
    const known = new Set(deps.connections.all().map((c) => c.id));
    const chosen = (form.connections ?? "").split(",").filter((id) =>
      id !== ""
    );
    for (const id of chosen) {
      if (!known.has(id)) {
        throw HttpError.plain(
          400,
          "bad_connection",
          "A chosen connection is not saved",
        );
      }
    }
    const now = deps.now();
    const { token, plaintext } = await deps.tokens.create({
      name,
      level,
      connections: chosen.length === 0 ? null : chosen,
      expiresAt: lifetime.ms === null ? null : now + lifetime.ms,
    }, now);
    // The server knows it at once, not at the next poll.
    await deps.tokensChanged();
    c.get("session").flash = { name: token.name, plaintext };
    deps.log(
      `dbport: console: created the token "${token.name}" (${token.level})`,
    );
    return see("/tokens");
  });

  app.post("/tokens/:id/revoke", async (c) => {
    const id = c.req.param("id");
    const found = (await deps.tokens.list()).find((token) => token.id === id);
    if (found === undefined) {
      throw HttpError.plain(404, "no_token", "No token has this id");
    }
    await deps.tokens.revoke(id, deps.now());
    await deps.tokensChanged();
    deps.log(`dbport: console: revoked the token "${found.name}"`);
    return see("/tokens?notice=revoked");
  });
  app.route("/", budgetRoutes(deps, view));
  return app;
}

/** POST /tokens/:id/budget, /pause and /resume. */
function budgetRoutes(deps: ConsoleDeps, view: ConsoleView): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const see = view.see;
  const target = async (id: string) => {
    if (id === BRIDGE_BUDGET) return "the stdio bridge's tokens";
    const found = (await deps.tokens.list()).find((token) => token.id === id);
    if (found === undefined) {
      throw HttpError.plain(404, "no_token", "No token has this id");
    }
    return `the token "${found.name}"`;
  };
  app.post("/tokens/:id/budget", async (c) => {
    const id = c.req.param("id");
    const label = await target(id);
    const form = c.get("form");
    const limits: Partial<TokenLimits> = {};
    for (const { field, key } of BUDGET_FIELDS) {
      const value = parseLimit(form[field] ?? "");
      if (value === undefined) {
        throw HttpError.plain(
          400,
          "bad_limit",
          `${field} must be a positive whole number, or empty for none`,
        );
      }
      limits[key] = value;
    }
    await setLimits(deps.tokens.db, id, limits);
    await deps.tokensChanged();
    deps.log(`dbport: console: set the budget of ${label}`);
    return see("/tokens");
  });
  for (const action of ["pause", "resume"] as const) {
    app.post(`/tokens/:id/${action}`, async (c) => {
      const id = c.req.param("id");
      const label = await target(id);
      await setPaused(
        deps.tokens.db,
        id,
        action === "pause" ? deps.now() : null,
      );
      // The server stops the token's running requests as it reloads.
      await deps.tokensChanged();
      deps.log(`dbport: console: ${action}d ${label}`);
      return see("/tokens");
    });
  }
  return app;
}
