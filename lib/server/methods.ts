/**
 * The one method table: for each JSON-RPC method its era(s), the scope it
 * requires, its cache hint and its handler (docs/wire.md "JSON-RPC methods",
 * "Cache hints"). Built once at start-up.
 *
 * @module
 */

import type { Catalog } from "../features/catalog.ts";
import type { Handler, Scope } from "../features/context.ts";
import { discoverResult } from "../features/discover.ts";
import { ping, setLevel } from "../features/legacy.ts";
import { listenHandler, type SubscriptionSource } from "../features/listen.ts";
import { listHandlers } from "../features/lists.ts";
import { lookupHandlers } from "../features/lookups.ts";
import type { CursorCodec } from "../protocol/cursor.ts";
import type { Era } from "../protocol/versions.ts";

/** A cache hint (docs/wire.md "Cache hints"). */
export interface CacheHint {
  readonly ttlMs: number;
  readonly cacheScope: "public" | "private";
  /** The handler picks `ttlMs` per result (resources/read: per URI). */
  readonly perResult?: boolean;
}

/** Everything the server knows about one method. */
export interface MethodSpec {
  readonly name: string;
  readonly eras: readonly Era[];
  readonly scope: Scope | null;
  readonly cache: CacheHint | null;
  /** Whether the 330 s handler deadline applies. */
  readonly deadline: boolean;
  /** Whether the answer is always an SSE stream. */
  readonly streams: boolean;
  /** Whether it may answer `input_required` (docs/wire.md "Asking the user"). */
  readonly mayRequireInput: boolean;
  readonly handler: Handler;
}

/** The table, by method name. */
export type MethodTable = ReadonlyMap<string, MethodSpec>;

const BOTH: readonly Era[] = ["modern", "legacy"];
const MODERN: readonly Era[] = ["modern"];
const LEGACY: readonly Era[] = ["legacy"];

/** What the table is built from. */
export interface MethodDeps {
  catalog: Catalog;
  cursors: CursorCodec;
  instanceId: string;
  subscriptionSources?: readonly SubscriptionSource[];
  pageSize?: number;
}

/** Build the method table. `initialize` is answered by the session layer. */
export function buildMethodTable(deps: MethodDeps): MethodTable {
  const lists = listHandlers(deps.catalog, deps.cursors, deps.pageSize);
  const lookups = lookupHandlers(deps.catalog);
  const discover = discoverResult(deps.instanceId);
  const specs: MethodSpec[] = [
    spec(
      "server/discover",
      MODERN,
      null,
      hint(3_600_000, "public"),
      () => Promise.resolve(discover),
    ),
    spec(
      "tools/list",
      BOTH,
      "tools:read",
      hint(300_000, "private"),
      lists["tools/list"],
    ),
    spec("tools/call", BOTH, "tools:read", null, lookups["tools/call"], {
      mayRequireInput: true,
    }),
    spec(
      "resources/list",
      BOTH,
      "resources:read",
      hint(30_000, "private"),
      lists["resources/list"],
    ),
    spec(
      "resources/read",
      BOTH,
      "resources:read",
      { ttlMs: 60_000, cacheScope: "private", perResult: true },
      lookups["resources/read"],
      { mayRequireInput: true },
    ),
    spec(
      "resources/templates/list",
      BOTH,
      "resources:read",
      hint(3_600_000, "public"),
      lists["resources/templates/list"],
    ),
    spec(
      "prompts/list",
      BOTH,
      "resources:read",
      hint(3_600_000, "public"),
      lists["prompts/list"],
    ),
    spec("prompts/get", BOTH, "resources:read", null, lookups["prompts/get"], {
      mayRequireInput: true,
    }),
    spec(
      "completion/complete",
      BOTH,
      "resources:read",
      null,
      lookups["completion/complete"],
    ),
    // Exempt from the handler deadline (docs/wire.md "JSON-RPC methods").
    spec(
      "subscriptions/listen",
      MODERN,
      null,
      null,
      listenHandler(deps.subscriptionSources ?? []),
      { deadline: false, streams: true },
    ),
    spec(
      "initialize",
      LEGACY,
      null,
      null,
      () =>
        Promise.reject(
          new Error("initialize is answered by the session layer"),
        ),
    ),
    spec("ping", LEGACY, null, null, ping),
    spec("logging/setLevel", LEGACY, null, null, setLevel),
  ];
  return new Map(specs.map((s) => [s.name, s]));
}

function hint(ttlMs: number, cacheScope: "public" | "private"): CacheHint {
  return { ttlMs, cacheScope };
}

function spec(
  name: string,
  eras: readonly Era[],
  scope: Scope | null,
  cache: CacheHint | null,
  handler: Handler,
  options: {
    deadline?: boolean;
    streams?: boolean;
    mayRequireInput?: boolean;
  } = {},
): MethodSpec {
  return {
    name,
    eras,
    scope,
    cache,
    handler,
    deadline: options.deadline ?? true,
    streams: options.streams ?? false,
    mayRequireInput: options.mayRequireInput ?? false,
  };
}
