/**
 * The run of an AI login's plan as the saved login (harden.ts
 * `applyHarden`), one way per engine: PostgreSQL's as one transaction that
 * leaves nothing when a statement fails (`runAsOne`), MySQL/MariaDB's
 * statement by statement, a login this run created dropped again when one
 * fails (`runEach`); either way a statement about a schema dropped since
 * the plan is passed over, and a failure is a `HardenRefused` that says
 * what is left on the server, the new password masked.
 *
 * @module
 */

import { messageOf } from "../base/message_of.ts";
import { toBase64Url } from "../protocol/base64.ts";
import type { Driver } from "../db/types.ts";
import { DROPS } from "./harden_drop.ts";
import type { HardenPlan } from "./harden_plan.ts";
import { literal, READ, WRITE } from "./harden_sql.ts";

/** The new login was made but does not hold as it should: nothing saved. */
export class HardenRefused extends Error {
  override name = "HardenRefused";
}

/** A plan's statement as the owner may see it: the new password masked. */
function masked(plan: HardenPlan, sql: string): string {
  return sql.replaceAll(plan.password, "********");
}

/**
 * PostgreSQL, whose CREATE ROLE and GRANTs are transactional: the plan as
 * one DO block, in the one transaction of one write, so that a statement
 * that fails leaves nothing — no login, no grant, an earlier login's
 * password as it was (a run whose statements failed after CREATE ROLE left
 * the login on the server: outsider stop 50). Each statement runs in a
 * block of its own: one about a schema another session dropped since the
 * plan is passed over (its subtransaction rolled back); any other failure
 * ends the block, naming the statement. Returns the schemas passed over.
 */
export async function runAsOne(
  owner: Driver,
  plan: HardenPlan,
): Promise<string[]> {
  const steps = plan.statements.map((sql) => {
    const failed = `RAISE EXCEPTION USING ERRCODE = SQLSTATE, MESSAGE = ${
      literal(`${masked(plan, sql)} failed: `)
    } || SQLERRM;`;
    const schema = plan.schemaOf?.get(sql);
    const onError = schema === undefined
      ? failed
      : `IF EXISTS (SELECT FROM pg_catalog.pg_namespace WHERE nspname = ${
        literal(schema)
      }) THEN ${failed} END IF;`;
    return `BEGIN EXECUTE ${
      literal(sql)
    }; EXCEPTION WHEN OTHERS THEN ${onError} END;`;
  });
  const body = `BEGIN\n${steps.join("\n")}\nEND`;
  let tag = "$dbport_harden$";
  while (body.includes(tag)) {
    tag = `$dbport_${
      toBase64Url(crypto.getRandomValues(new Uint8Array(6))).replace(
        /[^A-Za-z0-9]/g,
        "x",
      )
    }$`;
  }
  try {
    await owner.query(`DO ${tag}${body}${tag}`, WRITE);
  } catch (error) {
    throw new HardenRefused(
      `The plan did not run: ${
        masked(plan, messageOf(error))
      }; ${await pgLeftOver(owner, plan)}`,
    );
  }
  const schemas = [...new Set(plan.schemaOf?.values() ?? [])];
  if (schemas.length === 0) return [];
  const { rows } = await owner.query(
    `SELECT s FROM unnest(ARRAY[${
      schemas.map(literal).join(", ")
    }]::text[]) AS s WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_namespace WHERE nspname = s) ORDER BY s`,
    READ,
  );
  return rows.map((row) => String(row[0]));
}

/** What a PostgreSQL run that failed left, said to the owner. */
async function pgLeftOver(owner: Driver, plan: HardenPlan): Promise<string> {
  const name = JSON.stringify(plan.user);
  const rolledBack = "it ran as one transaction, which was rolled back";
  if (plan.creates !== true) {
    return `${rolledBack}: the login ${name}, made before, is as it was`;
  }
  // Looked at, not assumed: the write's end may have been lost with its
  // session, and another harden may have made the login meanwhile.
  const present = await owner.query(
    `SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = ${literal(plan.user)}`,
    READ,
  ).then(({ rows }) => rows.length > 0, () => null);
  return present === false
    ? `${rolledBack}: nothing was left on the server (no login ${name})`
    : present === true
    ? `${rolledBack}, yet a login ${name} is on the server (another run's, or this one's if its end was lost): drop it with DROP OWNED BY and DROP ROLE if nobody else made it`
    : `${rolledBack}; whether a login ${name} is on the server could not be read: look for it`;
}

/**
 * MySQL/MariaDB, whose CREATE USER and GRANTs are not transactional: the
 * statements one by one; when one fails, a login this run created (its
 * plan's plain CREATE USER ran) is dropped again — never one an earlier
 * harden made — and the owner is told what failed and what is left.
 * Returns the schemas passed over (a dropped schema's statements).
 */
export async function runEach(
  owner: Driver,
  plan: HardenPlan,
): Promise<string[]> {
  const skipped: string[] = [];
  const ran: string[] = [];
  let created = false;
  for (const statement of plan.statements) {
    try {
      await owner.query(statement, WRITE);
      ran.push(statement);
      if (plan.creates === true && statement === plan.statements[0]) {
        created = true;
      }
    } catch (error) {
      const schema = plan.schemaOf?.get(statement);
      if (schema === undefined || await schemaExists(owner, schema)) {
        const failed = `${masked(plan, statement)} failed: ${
          masked(plan, messageOf(error))
        }`;
        throw new HardenRefused(
          `The plan did not run: ${failed}; ${await mysqlLeftOver(
            owner,
            plan,
            ran,
            created,
          )}`,
        );
      }
      skipped.push(schema);
    }
  }
  return skipped;
}

/** What a MySQL/MariaDB run that failed left, said to the owner. */
async function mysqlLeftOver(
  owner: Driver,
  plan: HardenPlan,
  ran: readonly string[],
  created: boolean,
): Promise<string> {
  const name = JSON.stringify(plan.user);
  if (ran.length === 0) {
    return "nothing had run: nothing was left on the server";
  }
  if (created) {
    const drops = await DROPS.mysql!(owner, plan.user);
    const failed = await (async () => {
      for (const drop of drops) await owner.query(drop, WRITE);
    })().then(() => null, (error: unknown) => messageOf(error));
    return failed === null
      ? `the login ${name} this run created was dropped again: nothing was left on the server`
      : `dropping the login ${name} this run created failed too (${failed}): drop it yourself (${
        drops.join("; ")
      })`;
  }
  const done = ran.map((sql) => masked(plan, sql)).join("; ");
  return plan.creates === false
    ? `the login ${name}, made before, stays, with what ran before the failure: ${done}: run harden --apply again`
    : `what ran before the failure stays (${done}); whether the login ${name} was made by this run is unknown (the saved login cannot read mysql.user): drop it yourself (DROP USER) if no earlier harden made it`;
}

async function schemaExists(owner: Driver, schema: string): Promise<boolean> {
  const { rows } = await owner.query(
    `SELECT 1 FROM pg_namespace WHERE nspname = ${literal(schema)}`,
    READ,
  );
  return rows.length > 0;
}
