/**
 * `execute_query`'s `params`: values bound to the statement's placeholders
 * (`$1…` on PostgreSQL, `?` on MariaDB and SQLite) by the engine's own
 * protocol, so a value is never quoted into the text (docs/wire.md "Bind
 * parameters"). The statement is vetted with its placeholders in place; a
 * placeholder is a value, so it cannot change what the statement does.
 *
 * @module
 */

import { array, SCALAR } from "../../base/schema.ts";
import { type Engine, ENGINES } from "../../db/engines.ts";
import { placeholderCount } from "../../db/sql/placeholders.ts";
import type { BindValue } from "../../db/types.ts";
import type { ValuesArgument } from "./arguments.ts";
import { invalidArgument } from "./failure.ts";

/** The most values one statement binds. */
export const MAX_PARAMS = 1_000;

/** `params`: the values, in placeholder order. */
// tools/list is lean (issue 36): the limit and the big-integer rule are said
// by the error that enforces them.
export const PARAMS = array(SCALAR, {
  description: "Values for $1…/? placeholders.",
}) satisfies ValuesArgument;

/**
 * Check `params` against `sql` on `engine`: as many values as the
 * statement's placeholders take, and no integer a JSON number cannot hold
 * exactly (past 2^53 it must come as a string, which the engine converts).
 * Without `params` the statement runs as it always did (the engine answers
 * a placeholder it has no value for), so nothing a client sent before
 * changes meaning.
 */
export function checkParams(
  params: readonly BindValue[] | undefined,
  sql: string,
  engine: Engine,
  /**
   * Values that are approximate by their declared type (a saved query's
   * `float` parameter, typed `number` in its schema, so no string form):
   * a large one such as 1e20 is a float, not an integer that lost digits.
   */
  approximate: readonly boolean[] = [],
): readonly BindValue[] {
  if (params === undefined) return [];
  const values = params;
  if (values.length > MAX_PARAMS) {
    throw invalidArgument(
      `params has ${values.length} values; the limit is ${MAX_PARAMS}`,
    );
  }
  values.forEach((value, i) => {
    if (
      typeof value === "number" && !Number.isSafeInteger(value) &&
      Number.isInteger(value) && approximate[i] !== true
    ) {
      throw invalidArgument(
        `params[${i}] is ${value}, an integer past 2^53, where a JSON number loses digits: pass it as a string ("${
          BigInt(value)
        }" is what arrived)`,
      );
    }
  });
  const wanted = placeholderCount(sql, engine);
  if (wanted !== values.length) {
    throw invalidArgument(
      `the statement has ${wanted} placeholder${wanted === 1 ? "" : "s"} (${
        ENGINES[engine].placeholders
      }) but params has ${values.length} value${
        values.length === 1 ? "" : "s"
      }: pass one value per placeholder, in order`,
    );
  }
  return values;
}

/** The statement as the user is asked about it: its bound values said. */
export function withValues(
  sql: string,
  params: readonly BindValue[],
): string {
  return params.length === 0
    ? sql
    : `${sql}\n-- bound values, in order: ${JSON.stringify(params)}`;
}
