/**
 * The `dbport://connections/{id}/schema` payload: one schema's tables with
 * their columns, cut at 100 tables and at the discovery budget (with
 * `truncated` and `total_tables`).
 *
 * @module
 */

import type { SchemaOverview } from "../../db/types.ts";
import type { JsonObject } from "../../protocol/jsonrpc.ts";
import type { CallContext } from "../context.ts";
import { catalogCall, type FeatureDeps } from "../deps.ts";
import type { Resolved } from "../tools/access.ts";
import {
  discoveryBudget,
  fitting,
  otherSchemas,
  scopeOf,
} from "../tools/discovery.ts";
import { rethrow } from "../tools/failure.ts";
import { privateFlag } from "../tools/private_marks.ts";

/** Tables the schema resource shows in full. */
export const SCHEMA_MAX_TABLES = 100;

/** Read a connection's schema overview with the user's query timeout. */
export function readOverview(
  deps: FeatureDeps,
  ctx: CallContext,
  { driver, label }: Resolved,
  maxTables: number,
  schema?: string,
): Promise<SchemaOverview> {
  return driver.overview({
    ...catalogCall(deps, ctx),
    maxTables,
    ...(schema === undefined ? {} : { schema }),
  }).catch((error) => rethrow(error, label));
}

/** The schema resource's payload: one schema's tables, within the budget. */
export async function schemaPayload(
  deps: FeatureDeps,
  ctx: CallContext,
  resolved: Resolved,
  schema: string | undefined,
): Promise<JsonObject> {
  const scope = await scopeOf(deps, ctx, resolved, schema);
  const overview = await readOverview(
    deps,
    ctx,
    resolved,
    SCHEMA_MAX_TABLES,
    scope.schema,
  );
  const tables: JsonObject[] = overview.tables.map((table) => ({
    name: table.name,
    schema: table.schema,
    type: table.type,
    columns: table.columns.map((column) => ({
      name: column.name,
      data_type: column.dataType,
      is_nullable: column.nullable,
      is_primary_key: column.primaryKey,
      ...privateFlag(column),
    })),
  }));
  const answer: JsonObject = {
    connection_id: resolved.connection.id,
    connection: resolved.connection.name,
    engine: resolved.driver.engine,
    schema: scope.schema ?? null,
    schema_is_default: scope.defaulted,
    ...(scope.defaulted && scope.others.length > 0
      ? { other_schemas: otherSchemas(scope.others) }
      : {}),
    tables: [],
    total_tables: overview.totalTables,
    truncated: false,
  };
  const kept = fitting(tables, discoveryBudget(deps, ctx), answer);
  answer.tables = tables.slice(0, kept);
  answer.truncated = overview.totalTables > kept;
  return answer;
}
