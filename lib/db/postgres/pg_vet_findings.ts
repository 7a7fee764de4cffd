/**
 * What one round of a PostgreSQL statement's vetting found (pg_vet.ts),
 * folded into its verdict: why it would run what is not a read, what it
 * reaches, what only a dry run would run, and the user functions it calls.
 *
 * @module
 */

/** What one round found, folded into the verdict. */
export class Findings {
  /** Why the statement (or planning it) would run what is not a read. */
  evaluates: string | null = null;
  /** Of those, what the planner itself may run. */
  plans: string | null = null;
  /** What only a dry run would run (triggers, cascades, targets). */
  dryRun: string | null = null;
  /**
   * A foreign table the statement writes: its rows are another server's,
   * which no count of this one tells (outsider stop 61).
   */
  writesForeign: string | null = null;
  denied: string | null = null;
  /**
   * A function that reaches files, code, other hosts or SQL text, found
   * where the statement runs it: in a SQL function's body, behind an
   * operator, a cast or a view. Refused to every token as the same call
   * named in the statement is: a write token ran `pg_read_file` and
   * `table_to_xml('pg_authid', ...)` through a `LANGUAGE sql` function it
   * created (outsider stop 53), the body's verdict having made the
   * statement only a write.
   */
  reach: string | null = null;
  /**
   * A SQL function it runs whose body drops or truncates: calling it is
   * as destructive as its DROP (a readWrite token dropped a table through
   * `LANGUAGE sql AS $$ drop table t $$`, outsider stop 59).
   */
  destroys: string | null = null;
  /** A foreign table the statement names (for DDL that retargets it). */
  foreignTable: string | null = null;
  /** An enabled event trigger: it runs code on any DDL. */
  eventTrigger: string | null = null;
  /** Built-in functions the statement itself reaches (not a body's). */
  readonly builtins = new Set<string>();
  /** User functions: who calls whom, for cycles. */
  readonly calls = new Map<number, Set<number>>();
  /** The search path each user function's body runs with. */
  readonly paths = new Map<number, string[] | null>();
  readonly bodies = new Set<number>();
  readonly names = new Map<number, string>();
  /** What changes a setting (set_config, a body's SET): the search path too. */
  setting: string | null = null;
  /** A body that defines or changes objects, by unqualified names perhaps. */
  defines: string | null = null;

  fail(how: string, why: string, planner: boolean): void {
    if (how === "t") {
      this.dryRun ??= why;
      return;
    }
    this.evaluates ??= why;
    if (planner) this.plans ??= why;
  }

  /** A function reached that reaches past a read (`reach`): refused. */
  failReach(how: string, why: string): void {
    this.reach ??= why;
    this.fail(how, why, true);
  }
}
