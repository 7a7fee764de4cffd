import { assert, assertEquals, assertThrows } from "@std/assert";
import { DbError } from "../../lib/db/errors.ts";
import type { QueryResult } from "../../lib/db/types.ts";
import {
  estimateReason,
  holdTo,
  previewMode,
  type WritePreview,
} from "../../lib/features/tools/preview.ts";
import {
  previewDigest,
  previewHeadline,
} from "../../lib/features/tools/preview_text.ts";

const EXACT: WritePreview = {
  exact: true,
  rowsAffected: 3,
  table: "orders",
  columns: [],
  rows: [],
  tables: [],
  note: null,
  changes: null,
  keys: null,
  unbound: null,
  choice: null,
};

function ran(rowsAffected: number): QueryResult {
  return {
    columns: [],
    rows: [],
    rowsAffected,
    truncated: false,
    truncation: { rows: false, bytes: false, cells: 0 },
  };
}

Deno.test("holdTo() lets the approved count commit and rolls back any other", () => {
  const hold = holdTo(EXACT)!;
  hold(ran(3));
  const error = assertThrows(() => hold(ran(4)), DbError);
  assertEquals(error.kind, "changed");
  assertEquals(
    error.message,
    "the statement would now change 4 rows, not the 3 that were approved; nothing was written; ask again",
  );
});

Deno.test("holdTo() holds nothing to an estimate or to no preview", () => {
  assertEquals(holdTo(null), undefined);
  assertEquals(holdTo({ ...EXACT, exact: false, note: "estimate" }), undefined);
});

Deno.test("previewHeadline() says what changes, how sure it is, and why not", () => {
  assertEquals(previewHeadline(EXACT), "Changes 3 rows of orders");
  assertEquals(
    previewHeadline({ ...EXACT, rowsAffected: 1, table: null }),
    "Changes 1 row",
  );
  assertEquals(
    previewHeadline({ ...EXACT, exact: false, rowsAffected: 1200, note: "n" }),
    "No dry run of orders: n — the estimate: ~1,200 rows",
  );
  assertEquals(
    previewHeadline({
      ...EXACT,
      exact: false,
      rowsAffected: null,
      note: "why",
    }),
    "No preview of orders: why",
  );
  assertEquals(
    previewHeadline({ ...EXACT, tables: [{ table: "t", rows: 1 }] }),
    "Removes t with 1 row",
  );
});

Deno.test("previewDigest() changes with the count, not with the sample rows", () => {
  assertEquals(previewDigest(null), "");
  assertEquals(
    previewDigest(EXACT),
    previewDigest({ ...EXACT, columns: ["id"], rows: [[7]] }),
  );
  assertEquals(
    previewDigest(EXACT) === previewDigest({ ...EXACT, rowsAffected: 4 }),
    false,
  );
});

const base = {
  id: crypto.randomUUID(),
  name: "c",
  engine: "postgres" as const,
  url: "postgres://h/db",
  externalAccess: "readWrite" as const,
  aiPolicy: "alwaysAllow" as const,
  safeMode: "alert" as const,
};

Deno.test("previewMode() is the estimate by default where AI reads run as an aiLogin", () => {
  assertEquals(previewMode(base), "dryRun");
  const hardened = { ...base, aiLogin: { user: "ai", password: "x" } };
  assertEquals(previewMode(hardened), "estimate");
  assertEquals(previewMode({ ...hardened, writePreview: "dryRun" }), "dryRun");
  assertEquals(previewMode({ ...base, writePreview: "estimate" }), "estimate");
});

/** A dry run's preview that changed `changes`, bound by `keys`. */
function measuredPreview(
  changes: { table: string; rows: number }[],
  keys: string | null = "k1",
  notes: Partial<WritePreview> = {},
): WritePreview {
  return {
    ...EXACT,
    table: "w",
    rowsAffected: changes.find((c) => c.table === "w")?.rows ?? 0,
    changes,
    keys,
    ...notes,
  };
}

function ranWith(
  changes: { table: string; rows: number }[],
  keys: string | null = "k1",
): QueryResult {
  return {
    ...ran(changes.find((c) => c.table === "w")?.rows ?? 0),
    changes: { tables: changes, keys, unbound: null, choice: null },
  };
}

Deno.test("previewHeadline() names every table the write changes", () => {
  assertEquals(
    previewHeadline(measuredPreview([{ table: "w", rows: 1 }])),
    "Changes 1 row of w",
  );
  assertEquals(
    previewHeadline(
      measuredPreview([{ table: "log", rows: 8 }, { table: "w", rows: 1 }]),
    ),
    "Changes 8 rows of log and 1 row of w",
  );
  assertEquals(
    previewHeadline(
      measuredPreview([
        { table: "a", rows: 1 },
        { table: "b", rows: 2_500 },
        { table: "w", rows: 3 },
      ]),
    ),
    "Changes 1 row of a, 2,500 rows of b and 3 rows of w",
  );
  // Nothing changed: the count and the statement's table.
  assertEquals(previewHeadline(measuredPreview([])), "Changes 0 rows of w");
  assertEquals(
    previewHeadline(
      measuredPreview([{ table: "w", rows: 2 }], null, {
        choice: "which rows it changes may differ from run to run (random())",
        unbound: "the table has no primary key, so only its counts are bound",
      }),
    ),
    "Changes 2 rows of w (which rows it changes may differ from run to run (random()); the table has no primary key, so only its counts are bound)",
  );
});

Deno.test("holdTo() refuses another table, another count or other keys", () => {
  const approved = [{ table: "log", rows: 8 }, { table: "w", rows: 1 }];
  const hold = holdTo(measuredPreview(approved))!;
  hold(ranWith([{ table: "w", rows: 1 }, { table: "log", rows: 8 }]));
  const more = assertThrows(
    () => hold(ranWith([{ table: "log", rows: 9 }, { table: "w", rows: 1 }])),
    DbError,
  );
  assertEquals(
    more.message,
    "the statement would now change 9 rows of log and 1 row of w, not the 8 rows of log and 1 row of w that were approved; nothing was written; ask again",
  );
  const other = assertThrows(
    () =>
      hold(
        ranWith([{ table: "log", rows: 8 }, { table: "w", rows: 1 }, {
          table: "audit",
          rows: 1,
        }]),
      ),
    DbError,
  );
  assertEquals(other.kind, "changed");
  const fewer = assertThrows(
    () => hold(ranWith([{ table: "w", rows: 1 }])),
    DbError,
  );
  assertEquals(
    fewer.message,
    "the statement would now change 1 row of w, not the 8 rows of log and 1 row of w that were approved; nothing was written; ask again",
  );
  const keys = assertThrows(() => hold(ranWith(approved, "k2")), DbError);
  assertEquals(
    keys.message,
    "the statement would now change other rows of log, w than the ones that were approved (their primary keys differ); nothing was written; ask again",
  );
  // Unbound keys hold the counts alone.
  holdTo(measuredPreview(approved, null))!(ranWith(approved, "anything"));
});

Deno.test("previewDigest() changes with the tables and the keys", () => {
  const one = measuredPreview([{ table: "w", rows: 1 }]);
  assertEquals(previewDigest(one), previewDigest({ ...one }));
  assert(
    previewDigest(one) !== previewDigest({ ...one, keys: "k2" }),
  );
  assert(
    previewDigest(one) !==
      previewDigest({
        ...one,
        changes: [{ table: "w", rows: 1 }, { table: "log", rows: 1 }],
      }),
  );
});

Deno.test("estimateReason() says why a preview is only the estimate", () => {
  assertEquals(
    estimateReason({ ...base, writePreview: "estimate" }),
    "this connection's write preview is set to the estimate",
  );
  assertEquals(
    estimateReason({
      ...base,
      aiLogin: { user: "dbport_ai_1", password: "x" },
    }),
    "this connection's AI login (dbport_ai_1) keeps reads least-privilege, and a dry run would run as the saved login before anyone approves",
  );
});
