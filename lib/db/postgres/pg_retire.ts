/**
 * A PostgreSQL pool's retirement: replaced after losing a session
 * (postgres.ts `lost`) or closed, a pool hands out no more sessions, and a
 * session still awaited from it fails at once (pg_reserve.ts).
 *
 * @module
 */

import { DbError } from "../errors.ts";
import { askAgain } from "./pg_ask_again.ts";
import { giveBackAll } from "./pg_parked.ts";

/** Pools replaced after losing a session (postgres.ts `lost`), by pool. */
const retiring = new WeakMap<object, AbortController>();

function retirementController(sql: object): AbortController {
  let controller = retiring.get(sql);
  if (controller === undefined) {
    controller = new AbortController();
    retiring.set(sql, controller);
  }
  return controller;
}

/** Aborted, with the reason why, once `sql` is retired (`retirePool`). */
export function retirementOf(sql: object): AbortSignal {
  return retirementController(sql).signal;
}

/** Why a pool was retired when a new one replaced it. */
const REPLACED_WHY = "the connection's pool was replaced";

/**
 * Mark `sql` as replaced (or, with `why`, closed): a session still awaited
 * from it fails at once — asked again of the pool that replaced it
 * (`askingAgain`: nothing ran), or lost when the driver closed. postgres.js
 * never settles a `reserve()` left waiting on a pool that is ending, so a
 * read queued behind the lost sessions would hang for good.
 */
export function retirePool(
  sql: object,
  why = REPLACED_WHY,
): Promise<void> {
  // Its parked sessions go back to it, to end with it: settles once they
  // are back (the pool is ended after).
  const returned = giveBackAll(sql);
  // A pool retired twice keeps its first reason.
  retirementController(sql).abort(why);
  return returned;
}

/** Whether `sql` was replaced (`retirePool`). */
export function poolRetired(sql: object): boolean {
  return retiring.get(sql)?.signal.aborted ?? false;
}

/**
 * The refusal of a session asked of a pool that `retired` says is retired:
 * asked again of the new pool when it was replaced (an outsider saw a
 * quarter of the reads under ended sessions fail so, nothing run), lost
 * when it was closed.
 */
export function retiredRefusal(retired: AbortSignal): DbError {
  const why = typeof retired.reason === "string"
    ? retired.reason
    : REPLACED_WHY;
  const error = new DbError(
    "connect",
    `the database session closed before the read began: ${why}; try again`,
  );
  return why === REPLACED_WHY ? askAgain(error) : error;
}
