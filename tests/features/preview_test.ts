import { assertEquals, assertThrows } from "@std/assert";
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
