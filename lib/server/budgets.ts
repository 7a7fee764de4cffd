/**
 * Per-token budgets at run time (docs/tokens.md "Budgets and pausing"):
 * sliding windows of each token's calls (a minute), rows read and writes (an
 * hour), against the limits `state.db` holds (app/token_budgets.ts), and the
 * kill switch. Held in memory: a restart starts the windows afresh.
 *
 * Only what is admitted counts: a refused call spends nothing, so a client
 * that retries when told gets in. Nothing is counted against a limit that is
 * not set (a limit set later counts from then on).
 *
 * @module
 */

import { cliCommand } from "../app/cli_command.ts";
import {
  BRIDGE_BUDGET,
  NO_BUDGET,
  type TokenBudget,
} from "../app/token_budgets.ts";
import type { CallBudget, Principal } from "../features/context.ts";

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** Why a request of a token may not run now. */
export interface BudgetRefusal {
  /** A sentence for a tool error `denied` or a protocol error. */
  message: string;
  /** The token is paused: nothing it sends runs until it is resumed. */
  paused: boolean;
  /** When a retry may succeed (null when paused). */
  retryAfterSeconds: number | null;
}

/** Amounts spent over a sliding window. */
class Window {
  #entries: { at: number; amount: number }[] = [];
  #total = 0;

  constructor(readonly spanMs: number) {}

  #prune(now: number): void {
    let drop = 0;
    while (
      drop < this.#entries.length &&
      this.#entries[drop]!.at <= now - this.spanMs
    ) {
      this.#total -= this.#entries[drop]!.amount;
      drop++;
    }
    if (drop > 0) this.#entries = this.#entries.slice(drop);
  }

  total(now: number): number {
    this.#prune(now);
    return this.#total;
  }

  add(now: number, amount: number): void {
    if (amount <= 0) return;
    this.#prune(now);
    this.#entries.push({ at: now, amount });
    this.#total += amount;
  }

  /** Milliseconds until less than `limit` is spent (0: now). */
  retryAfterMs(now: number, limit: number): number {
    let total = this.total(now);
    for (const entry of this.#entries) {
      if (total < limit) break;
      total -= entry.amount;
      if (total < limit) return entry.at + this.spanMs - now;
    }
    return 0;
  }
}

interface Usage {
  calls: Window;
  rows: Window;
  writes: Window;
  /**
   * Writes admitted and not yet run or ended: each holds a place in the
   * hour, so writes sent at once cannot all pass the check before any of
   * them is counted.
   */
  pendingWrites: number;
}

/** The budget key of a principal: its token's id, `bridge`, or none. */
export function budgetKey(principal: Principal): string | null {
  if (principal.kind === "bridge") return BRIDGE_BUDGET;
  return principal.kind === "token" ? principal.tokenId : null;
}

/** Every token's budget and what it spent. */
export class TokenBudgets {
  #budgets = new Map<string, TokenBudget>();
  readonly #usage = new Map<string, Usage>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /**
   * Replace the budgets (after a reload of `state.db`); returns the keys
   * paused by this change, whose running requests must stop.
   */
  update(budgets: ReadonlyMap<string, TokenBudget>): string[] {
    const paused = [...budgets].filter(([key, budget]) =>
      budget.pausedAt !== null &&
      (this.#budgets.get(key)?.pausedAt ?? null) === null
    ).map(([key]) => key);
    this.#budgets = new Map(budgets);
    return paused;
  }

  #budget(key: string): TokenBudget {
    return this.#budgets.get(key) ?? NO_BUDGET;
  }

  #usageOf(key: string): Usage {
    let usage = this.#usage.get(key);
    if (usage === undefined) {
      usage = {
        calls: new Window(MINUTE),
        rows: new Window(HOUR),
        writes: new Window(HOUR),
        pendingWrites: 0,
      };
      this.#usage.set(key, usage);
    }
    return usage;
  }

  /**
   * Admit one request of `principal` (and count it against its calls per
   * minute), or say why not.
   */
  admit(principal: Principal): BudgetRefusal | null {
    const key = budgetKey(principal);
    if (key === null) return null;
    const budget = this.#budget(key);
    if (budget.pausedAt !== null) {
      return {
        message: `the token ${
          JSON.stringify(principal.name)
        } is paused by the user: nothing it sends runs until they resume it (${cliCommand()} tokens resume ${
          nameOf(principal)
        })`,
        paused: true,
        retryAfterSeconds: null,
      };
    }
    const limit = budget.maxCallsPerMinute;
    // Nothing is counted without a limit: the hot path stays a map lookup.
    if (limit === null) return null;
    const now = this.#now();
    const calls = this.#usageOf(key).calls;
    if (calls.total(now) >= limit) {
      const seconds = Math.max(
        1,
        Math.ceil(calls.retryAfterMs(now, limit) / 1000),
      );
      return {
        message: `the token ${
          JSON.stringify(principal.name)
        } may make ${limit} calls a minute (its budget), and made them; try again in ${seconds} s, or ask the user to raise it (${cliCommand()} tokens set ${
          nameOf(principal)
        } --max-calls-per-minute N)`,
        paused: false,
        retryAfterSeconds: seconds,
      };
    }
    calls.add(now, 1);
    return null;
  }

  /**
   * What one call's features spend and check (undefined: no budget
   * applies). A write it admits holds a place until it is counted by
   * `spent` or the call ends (`release`).
   */
  callBudget(principal: Principal): CallBudget | undefined {
    const key = budgetKey(principal);
    if (key === null) return undefined;
    let holds = 0;
    // Once the call has ended, a handler still running (it was cancelled
    // and abandoned) holds no place: nothing would give it back.
    let ended = false;
    const release = () => {
      ended = true;
      if (holds === 0) return;
      const usage = this.#usageOf(key);
      usage.pendingWrites = Math.max(0, usage.pendingWrites - holds);
      holds = 0;
    };
    return {
      refuse: (kind) => {
        const refused = this.#refuse(principal, key, kind);
        if (
          refused === null && kind === "write" && !ended &&
          this.#budget(key).maxWritesPerHour !== null
        ) {
          this.#usageOf(key).pendingWrites++;
          holds++;
        }
        return refused;
      },
      spent: (kind, rows) => {
        const budget = this.#budget(key);
        const now = this.#now();
        if (kind === "write") {
          if (holds > 0) {
            this.#usageOf(key).pendingWrites--;
            holds--;
          }
          if (budget.maxWritesPerHour !== null) {
            this.#usageOf(key).writes.add(now, 1);
          }
        } else if (budget.maxRowsPerHour !== null) {
          this.#usageOf(key).rows.add(now, rows);
        }
      },
      release,
    };
  }

  #refuse(
    principal: Principal,
    key: string,
    kind: "read" | "write",
  ): string | null {
    const budget = this.#budget(key);
    const limit = kind === "write"
      ? budget.maxWritesPerHour
      : budget.maxRowsPerHour;
    if (limit === null) return null;
    const usage = this.#usageOf(key);
    const [window, what, flag] = kind === "write"
      ? [usage.writes, "writes", "max-writes-per-hour"]
      : [usage.rows, "rows read", "max-rows-per-hour"];
    const now = this.#now();
    // Writes admitted but not yet run hold their places too.
    const held = kind === "write" ? usage.pendingWrites : 0;
    if (window.total(now) + held < limit) return null;
    const seconds = Math.max(
      1,
      Math.ceil(window.retryAfterMs(now, Math.max(1, limit - held)) / 1000),
    );
    const spent = held > 0
      ? `has spent its ${
        limit.toLocaleString("en-US")
      } ${what} an hour (its budget; ${held} of them still running or awaiting approval)`
      : `has spent its ${
        limit.toLocaleString("en-US")
      } ${what} an hour (its budget)`;
    return `the token ${
      JSON.stringify(principal.name)
    } ${spent}; try again in ${seconds} s, or ask the user to raise it (${cliCommand()} tokens set ${
      nameOf(principal)
    } --${flag} N)`;
  }
}

/** How the CLI names a principal's token. */
function nameOf(principal: Principal): string {
  return principal.kind === "bridge"
    ? "--bridge"
    : JSON.stringify(principal.name);
}
