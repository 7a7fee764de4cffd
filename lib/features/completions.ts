/**
 * `completion/complete` values (docs/protocol.md "Completions"; issue 7): connection names and
 * ids, schemas and tables of the connection named in `context.arguments`,
 * and a prompt argument's fixed choices in their declared order. Anything
 * else completes to an empty list. Only what the caller may see is offered:
 * a hidden connection, or an `askEachTime` one this client was not granted,
 * contributes nothing (completion cannot ask the user).
 *
 * @module
 */

import { driverSpec, type SavedConnection } from "../app/connections.ts";
import type { TableSummary } from "../db/types.ts";
import type { JsonObject } from "../protocol/jsonrpc.ts";
import { type CallContext, withinDeadline } from "./context.ts";
import { callSettings, type FeatureDeps } from "./deps.ts";
import { findConnection } from "./prompts/connection_arg.ts";
import { readableWithoutAsking, visibleConnections } from "./tools/access.ts";

/** The most values one answer carries. */
export const MAX_COMPLETIONS = 100;
/** How long a connection's table list is reused for completion. */
const TABLES_TTL_MS = 15_000;

/** What is being completed. */
export interface CompletionRequest {
  /** The argument or template variable. */
  argument: { name: string; value: string };
  /** Already chosen arguments (`context.arguments`). */
  context: Readonly<Record<string, string>>;
  /** The argument's fixed choices, when the prompt declares some. */
  choices?: readonly string[];
}

/** Completes values. */
export interface Completer {
  complete(request: CompletionRequest, ctx: CallContext): Promise<JsonObject>;
}

/** A `completion/complete` result. */
export type Completion = {
  completion: { values: string[]; total: number; hasMore: boolean };
};

const collator = new Intl.Collator(undefined, {
  numeric: true,
  sensitivity: "base",
});

/**
 * Rank candidates for a typed prefix: those starting with it, then those
 * containing it, case-insensitively; each group naturally sorted, or in the
 * given order when `ordered`. Capped at 100 with the total before the cap.
 */
export function rank(
  candidates: readonly string[],
  typed: string,
  ordered = false,
): Completion {
  const needle = typed.toLowerCase();
  const unique = [...new Set(candidates)];
  const starts = unique.filter((value) =>
    value.toLowerCase().startsWith(needle)
  );
  const contains = unique.filter((value) =>
    !value.toLowerCase().startsWith(needle) &&
    value.toLowerCase().includes(needle)
  );
  if (!ordered) {
    starts.sort(collator.compare);
    contains.sort(collator.compare);
  }
  const all = [...starts, ...contains];
  return {
    completion: {
      values: all.slice(0, MAX_COMPLETIONS),
      total: all.length,
      hasMore: all.length > MAX_COMPLETIONS,
    },
  };
}

/** The most tables of a connection completion looks through. */
const COMPLETION_TABLES = 10_000;

/** The completer over the server's connections. */
export function databaseCompleter(deps: FeatureDeps): Completer {
  const cache = new Map<string, { at: number; tables: TableSummary[] }>();

  /** The connection the context names, if the caller may read its schema. */
  const contextConnection = (
    request: CompletionRequest,
    ctx: CallContext,
  ): SavedConnection | null => {
    const named = request.context.connection_id ??
      request.context.connection;
    if (named === undefined || named.trim() === "") return null;
    let connection: SavedConnection;
    try {
      connection = findConnection(deps, ctx.principal, named);
    } catch {
      return null;
    }
    if (!readableWithoutAsking(deps, connection, ctx.principal)) return null;
    ctx.record?.({ connectionId: connection.id });
    return connection;
  };

  const tablesOf = async (
    connection: SavedConnection,
    ctx: CallContext,
  ): Promise<TableSummary[]> => {
    const hit = cache.get(connection.id);
    if (hit !== undefined && Date.now() - hit.at < TABLES_TTL_MS) {
      return hit.tables;
    }
    const tables = await deps.pool.get(
      driverSpec(connection),
      ctx.principal.key,
    ).listTables({
      signal: ctx.signal,
      timeoutMs: withinDeadline(
        ctx,
        Math.min(callSettings(deps, ctx).queryTimeoutSeconds, 10) * 1000,
      ),
      rowCounts: false,
      // Completion ranks names in memory: a bound on what it holds.
      limit: COMPLETION_TABLES,
    }).then((page) => page.tables, () => null);
    // A database that cannot be reached completes to nothing, not an error.
    if (tables === null) return [];
    cache.set(connection.id, { at: Date.now(), tables });
    return tables;
  };

  return {
    async complete(request, ctx) {
      const { name, value } = request.argument;
      if (request.choices !== undefined) {
        return rank(request.choices, value, true);
      }
      switch (name) {
        case "connection": {
          const visible = visibleConnections(deps, ctx.principal);
          const counts = new Map<string, number>();
          for (const c of visible) {
            const key = c.name.toLowerCase();
            counts.set(key, (counts.get(key) ?? 0) + 1);
          }
          // A name two connections share cannot pick one: offer their ids.
          return rank(
            visible.map((c) =>
              counts.get(c.name.toLowerCase())! > 1 ? c.id : c.name
            ),
            value,
          );
        }
        case "connection_id":
          return rank(
            visibleConnections(deps, ctx.principal).map((c) => c.id),
            value,
          );
        case "schema":
        case "table": {
          const connection = contextConnection(request, ctx);
          if (connection === null) return rank([], value);
          const tables = await tablesOf(connection, ctx);
          const schema = request.context.schema;
          return rank(
            name === "schema"
              ? tables.map((table) => table.schema)
              : tables.filter((table) =>
                schema === undefined || table.schema === schema
              ).map((table) => table.name),
            value,
          );
        }
        default:
          return rank([], value);
      }
    },
  };
}
