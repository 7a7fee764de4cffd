/**
 * What the discovery tools (`list_schemas`, `list_tables`, `search_schema`,
 * `describe_table`) share: their limits, the answer budget that keeps each
 * answer to a few thousand tokens whatever the database's size, and the
 * default schema (docs/wire.md "Tools").
 *
 * @module
 */

import * as s from "../../base/schema.ts";
import { answerBudget } from "./answer_budget.ts";
import type { SchemaList, SchemaSummary } from "../../db/types.ts";
import type { JsonObject } from "../../protocol/jsonrpc.ts";
import type { CallContext } from "../context.ts";
import { callSettings, catalogCall, type FeatureDeps } from "../deps.ts";
import type { Resolved } from "./access.ts";
import type { IntegerArgument } from "./arguments.ts";
import { invalidArgument, rethrow, ToolFailure } from "./failure.ts";

/** Entries of `list_schemas` and `list_tables`: default 200, at most 1,000. */
export const LIST_LIMIT = { fallback: 200, most: 1_000 } as const;
/** Matches of `search_schema`: default 50, at most 500. */
export const SEARCH_LIMIT = { fallback: 50, most: 500 } as const;
/** The other schemas a defaulted `list_tables` names. */
export const OTHER_SCHEMAS_SHOWN = 20;

/** A `limit` argument with its default and maximum. */
export function limitArgument(
  bounds: { fallback: number; most: number },
): IntegerArgument {
  return s.integer({ minimum: 1, maximum: bounds.most });
}

/** `limit`, checked, or its default. */
export function limitOf(
  value: number | undefined,
  bounds: { fallback: number; most: number },
): number {
  const limit = value ?? bounds.fallback;
  if (!Number.isInteger(limit) || limit < 1 || limit > bounds.most) {
    throw invalidArgument(
      `limit must be from 1 to ${bounds.most}, got ${limit}`,
    );
  }
  return limit;
}

/**
 * The bytes of JSON text a discovery answer may take: `maxDiscoveryBytes`,
 * never more than the answer budget of every result (answer_budget.ts).
 */
export function discoveryBudget(
  deps: FeatureDeps,
  ctx: Pick<CallContext, "settings">,
): number {
  const settings = callSettings(deps, ctx);
  return Math.min(settings.maxDiscoveryBytes, answerBudget(settings));
}

/**
 * How many of `items`, in order, fit in `budget` bytes of JSON text beside
 * `rest` (the answer without them). At least one is kept: an empty answer
 * would tell the model nothing of why.
 */
export function fitting(
  items: readonly JsonObject[],
  budget: number,
  rest: JsonObject,
): number {
  let size = JSON.stringify(rest).length;
  for (let i = 0; i < items.length; i++) {
    size += JSON.stringify(items[i]).length + 1;
    if (size > budget && i > 0) return i;
  }
  return items.length;
}

/** The schemas of a resolved connection. */
export function schemasOf(
  deps: FeatureDeps,
  ctx: CallContext,
  { driver, label }: Resolved,
): Promise<SchemaList> {
  return driver.listSchemas(catalogCall(deps, ctx)).catch((error) =>
    rethrow(error, label)
  );
}

/** Which schema a discovery call reads, and what the model is told of it. */
export interface ScopedSchema {
  /** Undefined: every schema (the engine has no default one). */
  schema: string | undefined;
  /** The caller named none, and the default was used. */
  defaulted: boolean;
  /** The others, when the default was used. */
  others: SchemaSummary[];
}

/**
 * The schema a call reads: the one it names (which must exist: else
 * `not_found` listing the others), or the login's default — PostgreSQL's
 * search path, the URL's database, SQLite's main — or every schema when
 * there is no default.
 */
export async function scopeOf(
  deps: FeatureDeps,
  ctx: CallContext,
  resolved: Resolved,
  schema: string | undefined,
): Promise<ScopedSchema> {
  const list = await schemasOf(deps, ctx, resolved);
  if (schema !== undefined) {
    if (!list.schemas.some((entry) => entry.name === schema)) {
      const names = list.schemas.map((entry) => entry.name);
      throw new ToolFailure(
        "not_found",
        `${resolved.label} has no schema ${
          JSON.stringify(schema)
        } that this login can see${
          names.length === 0
            ? ""
            : `; there are ${
              names.slice(0, OTHER_SCHEMAS_SHOWN).map((name) =>
                JSON.stringify(name)
              ).join(", ")
            }${
              names.length > OTHER_SCHEMAS_SHOWN
                ? " and more (list_schemas)"
                : ""
            }`
        }`,
      );
    }
    return { schema, defaulted: false, others: [] };
  }
  if (list.current === null) {
    return { schema: undefined, defaulted: false, others: [] };
  }
  return {
    schema: list.current,
    defaulted: true,
    others: list.schemas.filter((entry) => entry.name !== list.current),
  };
}

/** Another schema, as an answer names it. */
export const OTHER_SCHEMA = s.object({
  name: s.string(),
  tables: s.integer({ minimum: 0 }),
  views: s.integer({ minimum: 0 }),
}, ["name", "tables", "views"]);

/** The other schemas, as an answer names them: the first few, with counts. */
export function otherSchemas(
  others: readonly SchemaSummary[],
): s.Infer<typeof OTHER_SCHEMA>[] {
  return others.slice(0, OTHER_SCHEMAS_SHOWN).map((entry) => ({
    name: entry.name,
    tables: entry.tables,
    views: entry.views,
  }));
}
