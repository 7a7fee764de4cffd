/**
 * A read the engine refused because it touches a private column, said in
 * terms of the column (docs/security.md "Private columns"). The engine is
 * the boundary — the AI login holds no SELECT on the column (PostgreSQL,
 * MariaDB), the read handle's authorizer denies it (SQLite) — and its
 * refusal comes before any row is read; this only turns the engine's raw
 * permission error into `denied: "customers.email" is private on "Shop"; …`.
 *
 * @module
 */

import { DbError } from "../../db/errors.ts";
import { privateMatch, privatePatterns } from "../../db/private_columns.ts";
import type { CallContext } from "../context.ts";
import type { Resolved } from "./access.ts";
import { ToolFailure } from "./failure.ts";

/** What an engine's permission error names: a relation and maybe its column. */
export function refusedObject(
  message: string,
): { relation: string; column: string | null } | null {
  // SQLite's authorizer: `access to customers.email is prohibited`.
  const sqlite = /access to ([^\s.]+)\.(\S+) is prohibited/.exec(message);
  if (sqlite) return { relation: sqlite[1]!, column: sqlite[2]! };
  // MariaDB/MySQL 1143: `SELECT command denied to user … for column 'email' in table 'customers'`.
  const column =
    /command denied to user .* for column [`']([^`']+)[`'] in table [`']([^`']+)[`']/
      .exec(message);
  if (column) return { relation: column[2]!, column: column[1]! };
  // MariaDB/MySQL 1142: `… for table `db`.`contacts`` (or 'contacts').
  const table =
    /command denied to user .* for table (?:[`'][^`']+[`']\.)?[`']([^`']+)[`']/
      .exec(message);
  if (table) return { relation: table[1]!, column: null };
  // PostgreSQL 42501: `permission denied for table customers`.
  const pg =
    /permission denied for (?:table|view|materialized view|foreign table|relation) ("?)([^"\s]+)\1/
      .exec(message);
  if (pg) return { relation: pg[2]!, column: null };
  return null;
}

/**
 * Throw the private-column refusal for `error` when it is the engine
 * refusing a private column of `resolved`'s connection; otherwise return.
 */
export async function refusePrivate(
  resolved: Resolved,
  ctx: CallContext,
  error: unknown,
): Promise<void> {
  const entries = resolved.connection.privateColumns ?? [];
  if (entries.length === 0 || !(error instanceof DbError)) return;
  const refused = refusedObject(error.message);
  if (refused === null) return;
  const patterns = privatePatterns(entries);
  const where = resolved.label;
  const named = (columns: string[]) =>
    `${columns.map((c) => JSON.stringify(c)).join(", ")} ${
      columns.length === 1 ? "is" : "are"
    } private on ${where}`;
  const advice =
    "name the columns you need (describe_table marks private ones `private: true`) and leave these out; the database itself refuses them to AI clients, so only the user can read them";
  if (refused.column !== null) {
    throw new ToolFailure(
      "denied",
      `${named([`${refused.relation}.${refused.column}`])}; ${advice}`,
    );
  }
  // The engine named the table only: its private columns, from the catalog.
  const detail = await resolved.driver.describeTable(refused.relation, {
    signal: ctx.signal,
    timeoutMs: 10_000,
  }).catch(() => null);
  const hidden = detail?.columns.filter((c) =>
    privateMatch(
      patterns,
      detail.schema,
      detail.name,
      c.name,
      resolved.driver.engine,
    ) !== null
  ).map((c) => `${refused.relation}.${c.name}`) ?? [];
  if (hidden.length > 0) {
    throw new ToolFailure("denied", `${named(hidden)}; ${advice}`);
  }
  // MariaDB names only the table, and hides its private columns from the
  // AI login's catalog: the entries that make them private are said.
  if (detail?.type === "table") {
    throw new ToolFailure(
      "denied",
      `${JSON.stringify(refused.relation)} has private columns on ${where} (${
        entries.map((e) => JSON.stringify(e)).join(", ")
      }); name the columns you need (describe_table lists those you may read) and leave the rest out; the database itself refuses them to AI clients`,
    );
  }
  // A view over a private column is withheld whole (harden_private.ts).
  if (detail?.type === "view" || detail?.type === "materialized_view") {
    throw new ToolFailure(
      "denied",
      `the view ${
        JSON.stringify(refused.relation)
      } reads a private column on ${where}, so it is withheld from AI clients; read its tables' other columns instead, or ask the user`,
    );
  }
}
