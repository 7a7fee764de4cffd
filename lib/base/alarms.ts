/**
 * Alarms: timeouts that are nearly always cleared before they fire (a
 * request's deadline, a statement's timeout, an idle connection's cut),
 * kept on one timer of the runtime's.
 *
 * Each `setTimeout` under Deno's node compatibility is an object, a timer
 * in the runtime's queue and a cancellation; a request set and cleared five
 * (bench W1 profile, issue 38: about 8% of the server's CPU). An alarm is an
 * entry in a set: clearing it deletes the entry. The one timer is armed for
 * the earliest alarm but at most a second ahead, so a new alarm (nearly
 * always due later) arms nothing; it is cleared when no alarm is left, so
 * no timer outlives the last alarm. An alarm fires no earlier than asked
 * and, like a timer, late only by what the event loop was busy with.
 *
 * @module
 */

/** A pending alarm. */
export interface Alarm {
  /** It no longer fires; clearing it again (or after it fired) does nothing. */
  clear(): void;
}

/**
 * How far ahead the timer is armed at most: while alarms are set it fires
 * at least this often, so that a new alarm due later than the armed time
 * (nearly all: they are cleared long before they fire) needs no re-arming.
 */
const TICK_MS = 1_000;

/** One timer's worth of alarms. */
export class AlarmClock {
  readonly #entries = new Set<AlarmEntry>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When the timer fires (performance.now()); Infinity when not armed. */
  #armedFor = Infinity;

  /** How many alarms are set (for tests). */
  get size(): number {
    return this.#entries.size;
  }

  /** Whether the runtime's timer is armed (for tests). */
  get armed(): boolean {
    return this.#timer !== undefined;
  }

  /** Call `fire` in `ms` unless cleared first. */
  set(ms: number, fire: () => void): Alarm {
    const now = performance.now();
    const entry = new AlarmEntry(this, now + Math.max(0, ms), fire);
    this.#entries.add(entry);
    if (entry.due < this.#armedFor) this.#arm(now, entry.due);
    return entry;
  }

  /** `entry` was cleared: with none left, the timer is cleared too. */
  remove(entry: AlarmEntry): void {
    if (!this.#entries.delete(entry) || this.#entries.size > 0) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedFor = Infinity;
  }

  /** Arm the timer for `due`, or one tick from `now` if that is sooner. */
  #arm(now: number, due: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    const at = Math.min(due, now + TICK_MS);
    this.#armedFor = at;
    this.#timer = setTimeout(() => this.#fired(), Math.max(0, at - now));
  }

  #fired(): void {
    this.#timer = undefined;
    this.#armedFor = Infinity;
    const now = performance.now();
    const due: AlarmEntry[] = [];
    let next = Infinity;
    for (const entry of this.#entries) {
      if (entry.due <= now) due.push(entry);
      else if (entry.due < next) next = entry.due;
    }
    for (const entry of due) this.#entries.delete(entry);
    if (next !== Infinity) this.#arm(now, next);
    let failure: { error: unknown } | null = null;
    for (const entry of due) {
      // Cleared by an alarm fired before it in this same tick.
      if (entry.cleared) continue;
      entry.cleared = true;
      try {
        entry.fire();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure !== null) throw failure.error;
  }
}

/** An alarm on a clock. */
class AlarmEntry implements Alarm {
  /**
   * Cleared or fired: an entry due in the tick being fired is out of the
   * set already, so clearing it there must still stop it firing.
   */
  cleared = false;

  constructor(
    readonly clock: AlarmClock,
    readonly due: number,
    readonly fire: () => void,
  ) {}

  clear(): void {
    this.cleared = true;
    this.clock.remove(this);
  }
}

/** The process's alarms. */
const clock = new AlarmClock();

/** Call `fire` in `ms` unless cleared first (on the process's one clock). */
export function alarm(ms: number, fire: () => void): Alarm {
  return clock.set(ms, fire);
}

/**
 * Whether `work` settled (resolved or failed) within `ms`, timed on the
 * process's one clock.
 */
export async function settledWithin(
  work: PromiseLike<unknown>,
  ms: number,
): Promise<boolean> {
  let timer: Alarm | undefined;
  const late = new Promise<false>((resolve) => {
    timer = alarm(ms, () => resolve(false));
  });
  try {
    return await Promise.race([
      Promise.resolve(work).then(() => true, () => true),
      late,
    ]);
  } finally {
    timer?.clear();
  }
}
