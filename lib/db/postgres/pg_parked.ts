/**
 * Wired sessions parked between reads (issue 38). A read that ended clean
 * leaves its session reserved and its socket held (pg_wire.ts `hold`): the
 * next read of the same pool takes it as it is, with no `reserve()`, no
 * marker and no release through postgres.js — a third of what a wired
 * read cost dbport besides the statement (bench W1 profile: postgres.js's
 * reserve, marker query, release and idle timer, 8 KB allocated a read).
 *
 * A parked session is given back to postgres.js after {@linkcode PARK_MS}
 * unused, at once when a statement of postgres.js's own path needs a
 * session of the pool (pg_reserve.ts `reserveSession`), and dropped with a
 * pool that is replaced. Parked, it is idle outside any transaction, as in
 * postgres.js's own pool.
 *
 * @module
 */

import { type Alarm, alarm } from "../../base/alarms.ts";
import type { Wire } from "./pg_wire.ts";

/** How long a parked session waits for the next read. */
export const PARK_MS = 2_000;

/** The environment variable that turns parking off (`0`). */
export const PARK_ENV = "DBPORT_PG_PARK";

let parking: boolean | null = null;

/**
 * Whether clean sessions are parked: on unless `DBPORT_PG_PARK=0`. (It was
 * off for a stop: a read waited for ever after sessions were ended while
 * parked — a driver closed while that read asked its new pool for a
 * session, which postgres.js never settles on an ending pool; PgPools.close
 * now refuses it: tests/db/session_gone_test.ts.)
 */
export function parkingOn(): boolean {
  parking ??= Deno.env.get(PARK_ENV) !== "0";
  return parking;
}

/** Turn parking on or off for this process (tests); null: as the environment says. */
export function setParking(on: boolean | null): void {
  parking = on;
}

/** A session parked idle, and how it leaves. */
export interface Parked<R extends { release(): void } = { release(): void }> {
  readonly wire: Wire;
  /** The postgres.js reservation it belongs to. */
  readonly reserved: R;
  /** The marker postgres.js still waits to be answered. */
  readonly marker: Promise<unknown>;
  /**
   * Give it back to postgres.js (answer the marker, release); settles once
   * it is released (or, when postgres.js never took the answer, dropped).
   */
  giveBack(): Promise<void>;
}

interface Entry {
  parked: Parked;
  alarm: Alarm;
}

/** Parked sessions by pool, the most recently parked last. */
const parkedBy = new WeakMap<object, Entry[]>();

/**
 * Park `parked` for `pool`'s next read. It is given back after
 * {@linkcode PARK_MS} unless taken first.
 */
export function park(pool: object, parked: Parked): void {
  let entries = parkedBy.get(pool);
  if (entries === undefined) {
    entries = [];
    parkedBy.set(pool, entries);
  }
  const list = entries;
  const entry: Entry = {
    parked,
    alarm: alarm(PARK_MS, () => {
      if (remove(list, entry)) void parked.giveBack();
    }),
  };
  list.push(entry);
}

/** A parked session of `pool` for a read, or null (the most recent first). */
export function takeParked<R extends { release(): void }>(
  pool: object,
): Parked<R> | null {
  const entry = parkedBy.get(pool)?.pop();
  if (entry === undefined) return null;
  entry.alarm.clear();
  // Parked by this pool's reads: its reservation is the pool's kind.
  return entry.parked as Parked<R>;
}

/**
 * Take `parked` out of its pool's list without giving it back (its session
 * closed or spoke while parked); false when it was not parked.
 */
export function unpark(pool: object, parked: Parked): boolean {
  const list = parkedBy.get(pool);
  const entry = list?.find((e) => e.parked === parked);
  if (list === undefined || entry === undefined) return false;
  remove(list, entry);
  entry.alarm.clear();
  return true;
}

/**
 * Give one parked session of `pool` back to postgres.js, for a statement of
 * its own path about to ask for a session: settles once it is released
 * (null: none was parked). Asked before then, postgres.js would open a
 * session more rather than wait for this one (an outsider's plain and
 * bound reads, one after another, grew the pool to its four sessions).
 */
export function giveBackOne(pool: object): Promise<void> | null {
  return takeParked(pool)?.giveBack() ?? null;
}

/**
 * Give back every parked session of `pool` (it is being replaced or
 * closed); settles once all are released — the pool is ended after, or
 * postgres.js would start a released session's idle timer on an ended pool.
 */
export function giveBackAll(pool: object): Promise<void> {
  const returned: Promise<void>[] = [];
  for (let parked = takeParked(pool); parked !== null;) {
    returned.push(parked.giveBack());
    parked = takeParked(pool);
  }
  return Promise.all(returned).then(() => {});
}

/** How many sessions of `pool` are parked (for tests). */
export function parkedCount(pool: object): number {
  return parkedBy.get(pool)?.length ?? 0;
}

function remove(list: Entry[], entry: Entry): boolean {
  const at = list.indexOf(entry);
  if (at < 0) return false;
  list.splice(at, 1);
  return true;
}
