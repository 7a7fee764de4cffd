/**
 * What the console's open pages are told: a topic changed (approvals,
 * activity, history, connections, tokens), so a page showing it fetches its
 * list again. Bursts are merged: under load the activity log changes
 * thousands of times a second, and a page needs one refresh per quarter
 * second at most. With no page open, telling costs a size check.
 *
 * @module
 */

/** The topics a page can follow. */
export const TOPICS = [
  "approvals",
  "activity",
  "history",
  "connections",
  "tokens",
] as const;
export type Topic = typeof TOPICS[number];

/** How long changes of one topic are gathered into one event. */
export const MERGE_MS = 250;

/** The console's change events. */
export class ConsoleEvents {
  readonly #listeners = new Set<(topic: Topic) => void>();
  readonly #due = new Map<Topic, ReturnType<typeof setTimeout>>();

  /** How many pages listen (an open console tab is one). */
  get listeners(): number {
    return this.#listeners.size;
  }

  /** Say a topic changed; approvals are said at once, others merged. */
  changed(topic: Topic): void {
    if (this.#listeners.size === 0 || this.#due.has(topic)) return;
    if (topic === "approvals") return this.#tell(topic);
    this.#due.set(
      topic,
      setTimeout(() => {
        this.#due.delete(topic);
        this.#tell(topic);
      }, MERGE_MS),
    );
  }

  /** Listen; the returned function stops listening. */
  listen(listener: (topic: Topic) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.close();
    };
  }

  /** Drop pending merged events (at stop). */
  close(): void {
    for (const timer of this.#due.values()) clearTimeout(timer);
    this.#due.clear();
  }

  #tell(topic: Topic): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(topic);
      } catch {
        // A page that went away is dropped by its own stream's cancel.
      }
    }
  }
}
