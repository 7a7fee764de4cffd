/**
 * Approvals waiting on the console: the host dialog `"console"` (and `"auto"`
 * where there is no terminal and no desktop dialog). Each waits until the
 * user clicks Approve or Deny on the Approvals page, until its request ends
 * (withdrawn), or until `approvalTimeoutSeconds` pass (the caller aborts it).
 *
 * @module
 */

import type {
  Dialog,
  DialogAnswer,
  DialogRequest,
} from "../app/host_dialog.ts";

/** One approval on the page. */
export interface PendingApproval {
  /** Random: a page can only answer an approval it was shown. */
  readonly id: string;
  readonly request: DialogRequest;
  /** When it was asked (ms since the epoch). */
  readonly askedAt: number;
}

interface Entry {
  approval: PendingApproval;
  settle(answer: DialogAnswer): void;
}

/** The approvals waiting for the user. */
export class PendingApprovals {
  readonly #entries = new Map<string, Entry>();
  readonly #onChange: () => void;
  readonly #onAsk: (approval: PendingApproval) => void;
  readonly #now: () => number;

  /**
   * `onChange` after each approval added or ended; `onAsk` when one starts
   * waiting (the console opens itself in the browser there).
   */
  constructor(options: {
    onChange?: () => void;
    onAsk?: (approval: PendingApproval) => void;
    now?: () => number;
  } = {}) {
    this.#onChange = options.onChange ?? (() => {});
    this.#onAsk = options.onAsk ?? (() => {});
    this.#now = options.now ?? Date.now;
  }

  /** The dialog that asks on the page. */
  readonly dialog: Dialog = {
    ask: (request, signal) => this.#ask(request, signal),
  };

  /** Waiting approvals, oldest first. */
  list(): PendingApproval[] {
    return [...this.#entries.values()].map((entry) => entry.approval);
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * The user's click. False when the approval is no longer waiting (answered
   * in another tab, withdrawn, timed out): nothing happens then.
   */
  answer(id: string, approve: boolean): boolean {
    const entry = this.#entries.get(id);
    if (entry === undefined) return false;
    entry.settle({ answer: approve ? "approve" : "deny" });
    return true;
  }

  /** End every waiting approval unanswered (at stop). */
  dismissAll(): void {
    for (const entry of [...this.#entries.values()]) {
      entry.settle({ answer: "dismissed" });
    }
  }

  #ask(request: DialogRequest, signal: AbortSignal): Promise<DialogAnswer> {
    if (signal.aborted) return Promise.resolve({ answer: "dismissed" });
    return new Promise((resolve) => {
      const approval: PendingApproval = {
        id: crypto.randomUUID(),
        request,
        askedAt: this.#now(),
      };
      const withdraw = () => entry.settle({ answer: "dismissed" });
      const entry: Entry = {
        approval,
        settle: (answer) => {
          if (!this.#entries.delete(approval.id)) return;
          signal.removeEventListener("abort", withdraw);
          resolve(answer);
          this.#onChange();
        },
      };
      this.#entries.set(approval.id, entry);
      signal.addEventListener("abort", withdraw, { once: true });
      this.#onChange();
      this.#onAsk(approval);
    });
  }
}
