/**
 * The SQL text side of write previews (preview.ts): what a rollback could
 * not undo (the drivers make a tracked write return its changed rows), the table
 * a statement changes or drops. What differs per engine is the engine's
 * dialect's (lib/db/dialect.ts).
 *
 * @module
 */

import type { Classified } from "../../db/sql/classifier.ts";
import { DIALECTS } from "../../db/dialect.ts";
import type { Engine } from "../../db/engines.ts";

/** Changed rows shown in a preview. */
export const SAMPLE_ROWS = 5;

/**
 * Why a rollback would not undo the statement, or null. The engine's own
 * transaction decides for what it can undo; these it cannot.
 */
export function outsideEffect(
  statement: Classified,
  engine: Engine,
): string | null {
  const atOnce = DIALECTS[engine].commitsAtOnce(statement.keyword);
  if (atOnce !== null) return atOnce;
  if (statement.reach !== null) {
    return `it ${statement.reach}, which a rollback cannot undo`;
  }
  const outside = OUTSIDE_FUNCTIONS.exec(statement.text);
  if (outside !== null) {
    return `it calls ${outside[1]}(), whose effect a rollback does not undo`;
  }
  return null;
}

/** Functions whose effect outlives a rollback (a sequence, a session lock, another host). */
const OUTSIDE_FUNCTIONS =
  /\b(nextval|setval|pg_advisory_lock\w*|pg_advisory_xact_lock\w*|pg_try_advisory\w*|dblink\w*|pg_terminate_backend|pg_cancel_backend|get_lock|release_lock|sleep|pg_sleep)\s*\(/i;

const NAME = String
  .raw`(?:"(?:[^"]|"")+"|\x60[^\x60]+\x60|[A-Za-z_][A-Za-z0-9_$]*)`;
const NAMES = new RegExp(NAME, "g");
const QUALIFIED = new RegExp(`^${NAME}(?:\\s*\\.\\s*${NAME}){0,2}$`);

const TARGET = new RegExp(
  String
    .raw`^\s*(?:UPDATE(?:\s+ONLY)?|DELETE\s+FROM(?:\s+ONLY)?|INSERT\s+(?:IGNORE\s+)?INTO|REPLACE\s+INTO)\s+(${NAME}(?:\s*\.\s*${NAME}){0,2})`,
  "i",
);

/** The table a DML statement changes, as written, or null. */
export function targetTable(statement: Classified): string | null {
  // Its names joined by dots: the spaces around a dot go, those inside a
  // quoted name ("My Table") stay.
  return TARGET.exec(statement.text)?.[1]?.match(NAMES)?.join(".") ?? null;
}

/** DROP TABLE / TRUNCATE's tables, as written; null for any other form. */
export function droppedTables(
  statement: Classified,
): { tables: string[]; ifExists: boolean } | null {
  const match =
    /^\s*(?:DROP\s+TABLE(\s+IF\s+EXISTS)?|TRUNCATE(?:\s+TABLE)?(?:\s+ONLY)?)\s+([\s\S]+?)(?:\s+(?:RESTART|CONTINUE)\s+IDENTITY)?(?:\s+(?:CASCADE|RESTRICT))?\s*$/i
      .exec(statement.text);
  if (match === null) return null;
  const tables = match[2]!.split(",").map((name) => name.trim());
  return tables.every((name) => QUALIFIED.test(name))
    ? { tables, ifExists: match[1] !== undefined }
    : null;
}
