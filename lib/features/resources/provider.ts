/**
 * The connection resources: `resources/list` and `resources/read` over
 * `dbport://connections/...` (uris.ts). Payloads are JSON text, the same
 * shapes as the tools' results; each kind has its own cache time.
 *
 * @module
 */

import { wire } from "../../protocol/errors.ts";
import { answerBudget } from "../tools/answer_budget.ts";
import { fitHistory } from "./history_fit.ts";
import type { JsonObject } from "../../protocol/jsonrpc.ts";
import type { ResourceItem, ResourceProvider } from "../catalog.ts";
import { NeedsInput } from "../consent.ts";
import type { CallContext } from "../context.ts";
import { callSettings, type FeatureDeps } from "../deps.ts";
import {
  admit,
  resolveConnection,
  type Resolved,
  visibleConnections,
} from "../tools/access.ts";
import { tableDescription } from "../tools/describe_table.ts";
import { connectionList } from "../tools/list_connections.ts";
import { tableList } from "../tools/list_tables.ts";
import { asWireError } from "../wire_failure.ts";
import { schemaPayload } from "./schema_payload.ts";
import {
  CONNECTIONS_URI,
  parseResourceUri,
  type ResourceRef,
  schemaUri,
} from "./uris.ts";

const JSON_TYPE = "application/json";

/** Cache time per kind (issue: connections 15 s, schema and table 60 s, history 5 s). */
const TTL_MS: Readonly<Record<ResourceRef["kind"], number>> = {
  connections: 15_000,
  schema: 60_000,
  tables: 60_000,
  table: 60_000,
  history: 5_000,
};

/** The connections list resource, always listed. */
const CONNECTIONS_ITEM: ResourceItem = {
  uri: CONNECTIONS_URI,
  name: "connections",
  title: "Connections",
  description:
    "The database connections you may use, with their engine, database and the user's policy (as list_connections).",
  mimeType: JSON_TYPE,
};

/** The provider of every `dbport://connections` resource. */
export function connectionResources(deps: FeatureDeps): ResourceProvider {
  return {
    list(ctx) {
      const items: ResourceItem[] = [CONNECTIONS_ITEM];
      // One schema resource per connection the caller may see, whether or
      // not it was used lately: a client lists before it reads, so a list
      // of only recently used connections hides the ones not used yet.
      for (const connection of visibleConnections(deps, ctx.principal)) {
        items.push({
          uri: schemaUri(connection.id),
          name: `${connection.name} schema`,
          title: `Schema of ${JSON.stringify(connection.name)}`,
          description: `Every table of ${
            JSON.stringify(connection.name)
          } with its columns (the first 100 tables). Subscribe to hear when it changes.`,
          mimeType: JSON_TYPE,
        });
      }
      return Promise.resolve(items);
    },

    async read(uri, ctx) {
      const parsed = parseResourceUri(uri);
      if (!parsed.ok) {
        if (!parsed.ours) return null;
        throw wire.invalidParams(
          `Invalid resource URI ${JSON.stringify(uri)}: ${parsed.problem}`,
          { uri },
        );
      }
      const { ref } = parsed;
      try {
        const payload = await readRef(deps, ctx, ref);
        return {
          contents: [{
            uri,
            mimeType: JSON_TYPE,
            text: JSON.stringify(payload),
          }],
          ttlMs: TTL_MS[ref.kind],
        };
      } catch (error) {
        // The user must answer first (aiPolicy askEachTime).
        if (error instanceof NeedsInput) return error.result;
        throw asWireError(error, `read ${uri}`);
      }
    },
  };
}

async function readRef(
  deps: FeatureDeps,
  ctx: CallContext,
  ref: ResourceRef,
): Promise<JsonObject> {
  if (ref.kind === "connections") return connectionList(deps, ctx.principal);
  const resolved: Resolved = resolveConnection(
    deps,
    ctx,
    ref.connectionId,
  );
  await admit(deps, ctx, resolved.connection, null, "reading its schema");
  switch (ref.kind) {
    case "schema":
      return await schemaPayload(deps, ctx, resolved, ref.schema);
    case "tables":
      return await tableList(deps, ctx, resolved, {
        rowCounts: false,
        ...(ref.schema === undefined ? {} : { schema: ref.schema }),
      });
    case "table":
      return await tableDescription(deps, ctx, resolved, ref.table, {
        ...(ref.schema === undefined ? {} : { schema: ref.schema }),
        ddl: true,
        columnOffset: 0,
      });
    case "history":
      return await historyPayload(deps, ctx, resolved, ref.limit);
  }
}

async function historyPayload(
  deps: FeatureDeps,
  ctx: CallContext,
  { connection }: Resolved,
  limit: number,
): Promise<JsonObject> {
  const rows = await deps.history.recent(connection.id, limit);
  const entries = rows.map((row) => ({
    id: row.id,
    executed_at: new Date(row.time).toISOString(),
    query: row.sql,
    statement_type: row.statementType,
    execution_time_ms: row.durationMs,
    row_count: row.rowCount,
    rows_affected: row.rowsAffected,
    outcome: row.outcome,
    ...(row.error === null ? {} : { error_message: row.error }),
    client: row.clientName,
    token: row.tokenName,
  }));
  return {
    connection_id: connection.id,
    recording: callSettings(deps, ctx).queryHistory,
    ...fitHistory(entries, answerBudget(callSettings(deps, ctx))),
  };
}
