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

/**
 * The catalog and the subscription sources, or how to make them: then they
 * are made at the first call of a method that needs them, once (`serve`
 * imports the features' code only then: an idle server holds none of it,
 * lib/serve/endpoint.ts and docs/performance.md "Memory").
 */
export interface Features {
  catalog: Catalog;
  subscriptionSources: readonly SubscriptionSource[];
}

/** What the table is built from. */
export interface MethodDeps {
  /** The catalog, or the features made at their first use. */
  catalog: Catalog | (() => Promise<Features>);
  cursors: CursorCodec;
  instanceId: string;
  /** With a catalog given as it is; else the features' own. */
  subscriptionSources?: readonly SubscriptionSource[];
  pageSize?: number;
}

/** The handlers made over the features. */
type FeatureHandlers =
  & ReturnType<typeof listHandlers>
  & ReturnType<typeof lookupHandlers>
  & {
    "subscriptions/listen": Handler;
  };

/** Build the method table. `initialize` is answered by the session layer. */
export function buildMethodTable(deps: MethodDeps): MethodTable {
  const handlersOver = (features: Features): FeatureHandlers => ({
    ...listHandlers(features.catalog, deps.cursors, deps.pageSize),
    ...lookupHandlers(features.catalog),
    "subscriptions/listen": listenHandler(features.subscriptionSources),
  });
  const { catalog } = deps;
  let handler: (method: keyof FeatureHandlers) => Handler;
  if (typeof catalog === "function") {
    handler = deferred(async () => handlersOver(await catalog()));
  } else {
    const handlers = handlersOver({
      catalog,
      subscriptionSources: deps.subscriptionSources ?? [],
    });
    handler = (method) => handlers[method];
  }
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
      handler("tools/list"),
    ),
    spec("tools/call", BOTH, "tools:read", null, handler("tools/call"), {
      mayRequireInput: true,
    }),
    spec(
      "resources/list",
      BOTH,
      "resources:read",
      hint(30_000, "private"),
      handler("resources/list"),
    ),
    spec(
      "resources/read",
      BOTH,
      "resources:read",
      { ttlMs: 60_000, cacheScope: "private", perResult: true },
      handler("resources/read"),
      { mayRequireInput: true },
    ),
    spec(
      "resources/templates/list",
      BOTH,
      "resources:read",
      hint(3_600_000, "public"),
      handler("resources/templates/list"),
    ),
    spec(
      "prompts/list",
      BOTH,
      "resources:read",
      hint(3_600_000, "public"),
      handler("prompts/list"),
    ),
    spec("prompts/get", BOTH, "resources:read", null, handler("prompts/get"), {
      mayRequireInput: true,
    }),
    spec(
      "completion/complete",
      BOTH,
      "resources:read",
      null,
      handler("completion/complete"),
    ),
    // Exempt from the handler deadline (docs/wire.md "JSON-RPC methods").
    spec(
      "subscriptions/listen",
      MODERN,
      null,
      null,
      handler("subscriptions/listen"),
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

/**
 * A handler per method over handlers `make` makes at the first call of any of
 * them: once, or again at the next call after `make` failed (that call fails
 * with `make`'s error, which the dispatcher logs whole).
 */
function deferred(
  make: () => Promise<FeatureHandlers>,
): (method: keyof FeatureHandlers) => Handler {
  let made: FeatureHandlers | null = null;
  let making: Promise<FeatureHandlers> | null = null;
  const ready = () =>
    making ??= make().then(
      (handlers) => made = handlers,
      (error) => {
        making = null;
        throw error;
      },
    );
  return (method) => (ctx) =>
    made !== null ? made[method](ctx) : ready().then((h) => h[method](ctx));
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
