import { assertEquals } from "@std/assert";
import type { Classified } from "../../lib/db/sql/classifier.ts";
import { dryRunRefusal, planRefusal } from "../../lib/db/dry_run.ts";

function statement(over: Partial<Classified>): Classified {
  return {
    tier: "write",
    dangerous: false,
    reach: null,
    keyword: "UPDATE",
    text: "UPDATE t SET a = f()",
    uncertain: [],
    ...over,
  };
}

Deno.test("dryRunRefusal: no engine verdict (noDryRun absent) → undefined, the caller's rules apply", () => {
  assertEquals(dryRunRefusal(statement({})), undefined);
});

Deno.test("dryRunRefusal: the engine allows it (noDryRun null) → null", () => {
  assertEquals(dryRunRefusal(statement({ noDryRun: null })), null);
});

Deno.test("dryRunRefusal: the engine refuses (f() is written in plpgsql) → a sentence quoting why", () => {
  assertEquals(
    dryRunRefusal(statement({ noDryRun: "f() is written in plpgsql" })),
    "no dry run, since a rollback may not undo what it runs: f() is written in plpgsql",
  );
});

Deno.test("planRefusal: the engine's noPlan, or null when absent or null", () => {
  assertEquals(planRefusal(statement({ noPlan: "g() folds" })), "g() folds");
  assertEquals(planRefusal(statement({ noPlan: null })), null);
  assertEquals(planRefusal(statement({})), null);
});
