/**
 * The Tokens page's budgets and kill switch (docs/tokens.md "Budgets and
 * pausing"): per token (and for the stdio bridge's tokens) a small form of
 * its three limits and a Pause/Resume button (their routes:
 * token_routes.tsx).
 *
 * @module
 */

import {
  BRIDGE_BUDGET,
  LIMIT_FLAGS,
  NO_BUDGET,
  type TokenBudget,
} from "../../app/token_budgets.ts";
import { at, Csrf } from "./layout.tsx";

/** The form fields of the limits: `max_calls_per_minute`, … */
export const BUDGET_FIELDS = Object.entries(LIMIT_FLAGS).map(([flag, key]) => ({
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
        {BUDGET_FIELDS.map(({ field, key, label }) => (
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
