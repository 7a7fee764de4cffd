/**
 * Keeps a running server's view of the user's tokens in step with `state.db`,
 * which the CLI (another process) changes: the change counter is polled every
 * 250 ms and the tokens reloaded when it moves, so a new or revoked token
 * takes effect within a second, without a restart. A revoked token's
 * requests and sessions are ended at once (docs/wire.md "Authentication" 9).
 *
 * @module
 */

import { messageOf } from "../../base/message_of.ts";
import type { TokenStore } from "../../app/tokens.ts";
import type { TokenBudget } from "../../app/token_budgets.ts";
import type { Principal } from "../../features/context.ts";
import type { Logger } from "../../base/log.ts";
import { tokenKey } from "./principals.ts";
import type { TokenVerifier } from "./verifier.ts";

/** How often the change counter is read. */
export const TOKEN_POLL_MS = 250;

/** A token's last use is written at most this often. */
const TOUCH_EVERY_MS = 60_000;

/** What the sync needs. */
export interface TokenSyncDeps {
  store: TokenStore;
  verifier: TokenVerifier;
  /** Called with the principal keys of tokens that were revoked or deleted. */
  onRevoked: (principalKeys: string[]) => void;
  /**
   * The tokens' budgets (app/token_budgets.ts), reloaded with the tokens and
   * handed to `onBudgets`.
   */
  budgets?: () => Promise<Map<string, TokenBudget>>;
  onBudgets?: (budgets: Map<string, TokenBudget>) => void;
  log: Logger;
  now: () => number;
  intervalMs?: number;
}

/** The poller. */
export class TokenSync {
  readonly #deps: TokenSyncDeps;
  #generation = -1;
  #active = new Set<string>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;
  #failing = false;
  #running: Promise<void> = Promise.resolve();
  readonly #touched = new Map<string, number>();

  constructor(deps: TokenSyncDeps) {
    this.#deps = deps;
  }

  /** Load the tokens, then keep polling. */
  async start(): Promise<void> {
    await this.#reload(await this.#deps.store.generation());
    this.#schedule();
  }

  #lastSoon = 0;
  #soon: Promise<void> = Promise.resolve();

  /**
   * {@linkcode poll}, at most once per 50 ms however many callers ask (a
   * verification miss asks, so a flood of bad tokens cannot turn into a
   * flood of reads of state.db).
   */
  pollSoon(): Promise<void> {
    const now = this.#deps.now();
    if (now - this.#lastSoon >= 50) {
      this.#lastSoon = now;
      this.#soon = this.poll().catch(() => {});
    }
    return this.#soon;
  }

  /** Read the counter now and reload if it moved. */
  async poll(): Promise<void> {
    const generation = await this.#deps.store.generation();
    if (generation !== this.#generation) await this.#reload(generation);
  }

  async #reload(generation: number): Promise<void> {
    const tokens = await this.#deps.store.all();
    const budgets = await this.#deps.budgets?.();
    this.#deps.verifier.setUserTokens(tokens);
    if (budgets !== undefined) this.#deps.onBudgets?.(budgets);
    this.#generation = generation;
    const active = new Set(
      tokens.filter((t) => t.revokedAt === null).map((t) => t.id),
    );
    const gone = [...this.#active].filter((id) => !active.has(id));
    this.#active = active;
    if (gone.length > 0) this.#deps.onRevoked(gone.map(tokenKey));
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.poll().then(
        () => {
          this.#failing = false;
        },
        (error) => {
          // Say it once per outage, not four times a second.
          if (!this.#failing) {
            this.#deps.log(
              `dbport: cannot read tokens from the state database: ${
                messageOf(error)
              }; keeping the tokens in force`,
            );
          }
          this.#failing = true;
        },
      ).finally(() => this.#schedule());
    }, this.#deps.intervalMs ?? TOKEN_POLL_MS);
  }

  /** Stamp a user token's last use, at most once a minute per token. */
  noteUse(principal: Principal): void {
    if (principal.kind !== "token" || principal.tokenId === null) return;
    const now = this.#deps.now();
    const last = this.#touched.get(principal.tokenId) ?? -Infinity;
    if (now - last < TOUCH_EVERY_MS) return;
    this.#touched.set(principal.tokenId, now);
    this.#deps.store.touch(principal.tokenId, now).catch(() => {
      // Last use is informational; a busy database must not fail a request.
    });
  }

  /** Stop polling; resolves once a poll under way has finished. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }
}
