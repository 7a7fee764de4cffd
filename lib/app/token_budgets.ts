/**
 * Per-token budgets and the kill switch, as `state.db` keeps them (table
 * `token_budgets`): calls per minute, rows read per hour, writes per hour,
 * and whether the token is paused (docs/tokens.md "Budgets and pausing").
 * Keyed by a token's id, or {@linkcode BRIDGE_BUDGET} for the stdio bridge's
 * tokens (minted anew at each start, so they are named by their role).
 *
 * Every change bumps `tokens_generation` in the same transaction, so a
 * running server reloads the budgets with the tokens within a second.
 *
 * @module
 */

import type { StateDb } from "./state_db.ts";

/** The budget key of the stdio bridge's tokens. */
export const BRIDGE_BUDGET = "bridge";

/** A token's limits; null is no limit. */
export interface TokenLimits {
  maxCallsPerMinute: number | null;
  maxRowsPerHour: number | null;
  maxWritesPerHour: number | null;
}

/** A token's budget: its limits and whether (since when) it is paused. */
export interface TokenBudget extends TokenLimits {
  pausedAt: number | null;
}

/** No limit, not paused. */
export const NO_BUDGET: Readonly<TokenBudget> = Object.freeze({
  maxCallsPerMinute: null,
  maxRowsPerHour: null,
  maxWritesPerHour: null,
  pausedAt: null,
});

/** The limits' names as the CLI flags and the console name them. */
export const LIMIT_FLAGS = {
  "max-calls-per-minute": "maxCallsPerMinute",
  "max-rows-per-hour": "maxRowsPerHour",
  "max-writes-per-hour": "maxWritesPerHour",
} as const satisfies Record<string, keyof TokenLimits>;

/**
 * A limit as typed: a positive whole number, or `off`/empty for none;
 * `undefined` for anything else.
 */
export function parseLimit(text: string): number | null | undefined {
  const trimmed = text.trim().replaceAll("_", "");
  if (trimmed === "" || trimmed === "off") return null;
  if (!/^\d+$/.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

const BUMP =
  "UPDATE meta SET value = value + 1 WHERE key = 'tokens_generation'";

/** Every budget that differs from none, by key. */
export async function loadBudgets(
  db: StateDb,
): Promise<Map<string, TokenBudget>> {
  const result = await db.client.execute("SELECT * FROM token_budgets");
  const n = (value: unknown) =>
    value === null || value === undefined ? null : Number(value);
  return new Map(result.rows.map((row) => [String(row.token_id), {
    maxCallsPerMinute: n(row.max_calls_per_minute),
    maxRowsPerHour: n(row.max_rows_per_hour),
    maxWritesPerHour: n(row.max_writes_per_hour),
    pausedAt: n(row.paused_at),
  }]));
}

/** One key's budget (none when never set). */
export async function budgetOf(
  db: StateDb,
  key: string,
): Promise<TokenBudget> {
  return (await loadBudgets(db)).get(key) ?? { ...NO_BUDGET };
}

/** Change some of a key's limits (the others are kept). */
export async function setLimits(
  db: StateDb,
  key: string,
  limits: Partial<TokenLimits>,
): Promise<TokenBudget> {
  const next = { ...await budgetOf(db, key), ...limits };
  await write(db, key, next);
  return next;
}

/** Pause (`at` a time) or resume (`null`) a key's token. */
export async function setPaused(
  db: StateDb,
  key: string,
  at: number | null,
): Promise<TokenBudget> {
  const next = { ...await budgetOf(db, key), pausedAt: at };
  await write(db, key, next);
  return next;
}

async function write(
  db: StateDb,
  key: string,
  budget: TokenBudget,
): Promise<void> {
  await db.client.batch([
    {
      sql: `INSERT INTO token_budgets (token_id, max_calls_per_minute,
              max_rows_per_hour, max_writes_per_hour, paused_at)
            VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (token_id) DO UPDATE SET
              max_calls_per_minute = excluded.max_calls_per_minute,
              max_rows_per_hour = excluded.max_rows_per_hour,
              max_writes_per_hour = excluded.max_writes_per_hour,
              paused_at = excluded.paused_at`,
      args: [
        key,
        budget.maxCallsPerMinute,
        budget.maxRowsPerHour,
        budget.maxWritesPerHour,
        budget.pausedAt,
      ],
    },
    BUMP,
  ], "write");
}

/** How a budget reads in a list: `60 calls/min, 10,000 rows/h, paused`. */
export function describeBudget(budget: TokenBudget): string {
  const parts: string[] = [];
  const n = (value: number) => value.toLocaleString("en-US");
  if (budget.maxCallsPerMinute !== null) {
    parts.push(`${n(budget.maxCallsPerMinute)} calls/min`);
  }
  if (budget.maxRowsPerHour !== null) {
    parts.push(`${n(budget.maxRowsPerHour)} rows/h`);
  }
  if (budget.maxWritesPerHour !== null) {
    parts.push(`${n(budget.maxWritesPerHour)} writes/h`);
  }
  if (budget.pausedAt !== null) parts.push("paused");
  return parts.length === 0 ? "-" : parts.join(", ");
}
