/**
 * checkStatement() against a stub engine check that agrees, disagrees both
 * ways, explains, fails or is never asked (issue 34): the lexer/parser
 * disagreement refusal and how the two verdicts combine.
 */
import { assert, assertEquals } from "@std/assert";
import { checkStatement } from "../../lib/db/sql/statement_check.ts";
import type { Tier } from "../../lib/db/sql/classifier.ts";
import {
  type Driver,
  type EngineCheck,
  NO_OPINION,
} from "../../lib/db/types.ts";
import { FakeDriver } from "../_fake_driver.ts";

/** A driver whose engine check answers `answer` and records what it was asked. */
function stubEngine(answer: EngineCheck) {
  const asked: { sql: string; tier: Tier }[] = [];
  const driver: Driver = Object.assign(new FakeDriver("sqlite"), {
    check: (sql: string, tier: Tier) => {
      asked.push({ sql, tier });
      return Promise.resolve(answer);
    },
  });
  return { driver, asked };
}

const OPTIONS = { signal: new AbortController().signal, timeoutMs: 1_000 };

function engine(
  parsedTier: Tier | null,
  tier: Tier | null,
  more: Partial<EngineCheck> = {},
): EngineCheck {
  return {
    ok: true,
    parsedTier,
    tier,
    dangerous: false,
    reach: null,
    why: null,
    ...more,
  } as EngineCheck;
}

const check = (sql: string, answer: EngineCheck) => {
  const { driver, asked } = stubEngine(answer);
  return checkStatement(sql, driver, OPTIONS).then((verdict) => ({
    verdict,
    asked,
  }));
};

Deno.test("checkStatement: lexer read, parser write → denied, naming both verdicts", async () => {
  const { verdict } = await check("SELECT 1", engine("write", "write"));
  assertEquals(verdict, {
    ok: false,
    code: "denied",
    message:
      "dbport's lexer and the database's own parser read this statement differently (the lexer: read; the parser: write), so it was refused. Write it without unusual comments, quoting or control characters.",
  });
});

Deno.test("checkStatement: lexer write (a control character), parser read, catalog read → denied, quoting the lexer's doubt", async () => {
  const { verdict } = await check("SELECT 1 \x01", engine("read", "read"));
  assertEquals(verdict, {
    ok: false,
    code: "denied",
    message:
      "dbport's lexer and the database's own parser read this statement differently (the lexer: write; the parser: read), so it was refused. The lexer found a control character U+0001 at character 10. Write it without unusual comments, quoting or control characters.",
  });
});

Deno.test("checkStatement: lexer write, parser read, catalog write (a volatile function) → no disagreement: write, with the catalog's why", async () => {
  const { verdict } = await check(
    "SELECT 1 \x01",
    engine("read", "write", { why: "it calls f(), which is volatile" }),
  );
  assertEquals(verdict.ok, true);
  if (!verdict.ok) return;
  assertEquals(verdict.tier, "write");
  assertEquals(verdict.why, "it calls f(), which is volatile");
});

Deno.test("checkStatement: both read, catalog write → write (the higher tier wins), why from the catalog", async () => {
  const { verdict, asked } = await check(
    "SELECT f();",
    engine("read", "write", { why: "f() is volatile" }),
  );
  assertEquals(asked, [{ sql: "SELECT f()", tier: "read" }]);
  assertEquals(verdict, {
    ok: true,
    tier: "write",
    dangerous: false,
    uncertain: [],
    reach: null,
    keyword: "SELECT",
    text: "SELECT f()",
    why: "f() is volatile",
  });
});

Deno.test("checkStatement: lexer destructive, engine read-only verdicts → stays destructive", async () => {
  const { verdict } = await check("DROP TABLE t", engine("write", "read"));
  assertEquals(verdict.ok, true);
  if (!verdict.ok) return;
  assertEquals(verdict.tier, "destructive");
});

Deno.test("checkStatement: lexer write, engine destructive → destructive (the higher tier wins the other way too)", async () => {
  const { verdict } = await check(
    "INSERT INTO t VALUES (1)",
    engine("write", "destructive"),
  );
  assertEquals(verdict.ok, true);
  if (!verdict.ok) return;
  assertEquals(verdict.tier, "destructive");
});

Deno.test("checkStatement: both agree on write → write, not refused", async () => {
  const { verdict } = await check(
    "INSERT INTO t VALUES (1)",
    engine("write", "write"),
  );
  assertEquals(verdict.ok, true);
  if (!verdict.ok) return;
  assertEquals(verdict.tier, "write");
});

Deno.test("checkStatement: an engine without a parser (NO_OPINION) → the lexer's verdict, why null", async () => {
  const { verdict } = await check("SELECT 1", NO_OPINION);
  assertEquals(verdict, {
    ok: true,
    tier: "read",
    dangerous: false,
    uncertain: [],
    reach: null,
    keyword: "SELECT",
    text: "SELECT 1",
    why: null,
  });
});

Deno.test("checkStatement: parser disagrees but the engine found a reach → not refused, reach passed on", async () => {
  const { verdict } = await check(
    "SELECT 1",
    engine("write", "write", { reach: "it reads files" }),
  );
  assertEquals(verdict.ok, true);
  if (!verdict.ok) return;
  assertEquals(verdict.reach, "it reads files");
  assertEquals(verdict.tier, "write");
});

Deno.test("checkStatement: the engine's syntax error → query_failed with the engine's message", async () => {
  const { verdict } = await check("SELECT 1", {
    ok: false,
    message: 'syntax error at or near "1"',
  });
  assertEquals(verdict, {
    ok: false,
    code: "query_failed",
    message: 'syntax error at or near "1"',
  });
});

Deno.test("checkStatement: two statements → invalid_argument, the engine never asked", async () => {
  const { verdict, asked } = await check("SELECT 1; SELECT 2", NO_OPINION);
  assertEquals(verdict.ok, false);
  if (verdict.ok) return;
  assertEquals(verdict.code, "invalid_argument");
  assertEquals(asked, []);
});

Deno.test("checkStatement: a lexical reach (load_extension) → answered without asking the engine, why null", async () => {
  const { verdict, asked } = await check(
    "SELECT load_extension('/tmp/x.so')",
    engine("write", "write"),
  );
  assertEquals(asked, []);
  assertEquals(verdict.ok, true);
  if (!verdict.ok) return;
  assertEquals(
    verdict.reach,
    "load_extension() reaches files, code or SQL text",
  );
  assertEquals(verdict.why, null);
});

Deno.test("checkStatement: dangerous if either reader says so (engine only, lexer only)", async () => {
  const byEngine = await check(
    "UPDATE t SET a = 1 WHERE b = 2",
    engine("write", "write", { dangerous: true }),
  );
  assertEquals(byEngine.verdict.ok && byEngine.verdict.dangerous, true);
  const byLexer = await check("DELETE FROM t", engine("write", "write"));
  assertEquals(byLexer.verdict.ok && byLexer.verdict.dangerous, true);
  const neither = await check(
    "DELETE FROM t WHERE a = 1",
    engine("write", "write"),
  );
  assertEquals(neither.verdict.ok && neither.verdict.dangerous, false);
});

Deno.test("checkStatement: the engine's danger (a write to a foreign table) makes a write dangerous with its reason; the lexer's own danger stays first; none leaves it as it was", async () => {
  const foreign = "it writes the foreign table public.ft";
  const asked = await check(
    "DELETE FROM ft WHERE id = 1",
    engine("write", "write", { danger: foreign }),
  );
  assert(asked.verdict.ok);
  if (!asked.verdict.ok) return;
  assertEquals(
    [asked.verdict.dangerous, asked.verdict.danger],
    [true, foreign],
  );
  const lexical = await check(
    "CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW DELETE FROM u",
    engine("write", "write", { danger: foreign }),
  );
  assert(lexical.verdict.ok);
  if (!lexical.verdict.ok) return;
  assertEquals(lexical.verdict.dangerous, true);
  assertEquals(
    lexical.verdict.danger,
    "it installs a trigger, which runs on later writes to its table",
  );
  for (const danger of [null, undefined]) {
    const quiet = await check(
      "DELETE FROM t WHERE id = 1",
      engine("write", "write", danger === undefined ? {} : { danger }),
    );
    assert(quiet.verdict.ok);
    if (!quiet.verdict.ok) return;
    assertEquals([quiet.verdict.dangerous, quiet.verdict.danger], [
      false,
      undefined,
    ]);
  }
});
