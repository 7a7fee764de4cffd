/**
 * The Tokens page's budgets and kill switch (docs/tokens.md "Budgets and
 * pausing"): per token (and for the stdio bridge's tokens) a small form of
 * its three limits and a Pause/Resume button, and the routes they post to.
 * Each change bumps the tokens' generation: the server applies it at once.
 *
 * @module
 */

import type { Hono } from "hono";
import {
  BRIDGE_BUDGET,
  LIMIT_FLAGS,
  NO_BUDGET,
  parseLimit,
  setLimits,
  setPaused,
  type TokenBudget,
  type TokenLimits,
} from "../../app/token_budgets.ts";
import { HttpError } from "../../server/http_error.ts";
import type { ConsoleDeps } from "../deps.ts";
import type { ConsoleEnv } from "../guards.ts";
import { at, Csrf } from "./layout.tsx";

/** The form fields of the limits: `max_calls_per_minute`, … */
const FIELDS = Object.entries(LIMIT_FLAGS).map(([flag, key]) => ({
  field: flag.replaceAll("-", "_"),
  key,
  label: flag === "max-calls-per-minute"
    ? "calls/min"
    : flag === "max-rows-per-hour"
    ? "rows/h"
    : "writes/h",
}));

/** One token's budget: its limits form and its Pause/Resume button. */
export function BudgetCell(props: {
  id: string;
  budget: TokenBudget | undefined;
  csrf: string;
}) {
  const budget = props.budget ?? NO_BUDGET;
  const paused = budget.pausedAt !== null;
  return (
    <div class="budget" data-budget={props.id}>
      <form
        class="inline"
        method="post"
        action={at(`/tokens/${props.id}/budget`)}
      >
        <Csrf token={props.csrf} />
        {FIELDS.map(({ field, key, label }) => (
          <label>
            <input
              name={field}
              size={6}
              inputmode="numeric"
              placeholder="off"
              value={budget[key] === null ? "" : String(budget[key])}
            />
            {label}
          </label>
        ))}
        <button type="submit">Set</button>
      </form>
      <form
        class="inline"
        method="post"
        action={at(`/tokens/${props.id}/${paused ? "resume" : "pause"}`)}
      >
        <Csrf token={props.csrf} />
        <button class={paused ? "resume" : "pause"} type="submit">
          {paused ? "Resume" : "Pause"}
        </button>
      </form>
      {paused ? <span class="status-revoked">paused</span> : null}
    </div>
  );
}

/** The stdio bridge's tokens' budget, under the list. */
export function BridgeBudget(props: {
  budget: TokenBudget | undefined;
  csrf: string;
}) {
  return (
    <section class="card">
      <h2>Stdio bridge</h2>
      <p class="muted">
        The tokens the stdio bridge uses (minted at each start) share this
        budget.
      </p>
      <BudgetCell id={BRIDGE_BUDGET} budget={props.budget} csrf={props.csrf} />
    </section>
  );
}

/** POST /tokens/:id/budget, /pause and /resume. */
export function tokenBudgetRoutes(
  app: Hono<ConsoleEnv>,
  deps: ConsoleDeps,
  base: string,
  see: (location: string) => Response,
): void {
  const target = async (id: string) => {
    if (id === BRIDGE_BUDGET) return "the stdio bridge's tokens";
    const found = (await deps.tokens.list()).find((token) => token.id === id);
    if (found === undefined) {
      throw HttpError.plain(404, "no_token", "No token has this id");
    }
    return `the token "${found.name}"`;
  };
  app.post(`${base}/tokens/:id/budget`, async (c) => {
    const id = c.req.param("id");
    const label = await target(id);
    const form = c.get("form");
    const limits: Partial<TokenLimits> = {};
    for (const { field, key } of FIELDS) {
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
    app.post(`${base}/tokens/:id/${action}`, async (c) => {
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
}
