/**
 * `subscriptions/listen` (modern era only; docs/wire.md "Subscriptions").
 *
 * The stream's first frame acknowledges the subset of the requested
 * notifications the server will deliver; the stream then stays open (kept alive
 * by the transport) until the client leaves or the server stops, when it ends
 * with a `complete` result. Tools and prompts never change while the server
 * runs, so those requests are never acknowledged.
 *
 * @module
 */

import { META_SUBSCRIPTION_ID } from "../protocol/envelope.ts";
import { ErrorCode, wire, WireError } from "../protocol/errors.ts";
import { isJsonObject, type JsonObject } from "../protocol/jsonrpc.ts";
import type { CallContext, Handler } from "./context.ts";

/** Decides which requested notifications a principal will actually receive. */
export interface SubscriptionSource {
  /** The honoured subset of `requested` (the acknowledgement's `notifications`). */
  accept(requested: JsonObject, ctx: CallContext): Promise<JsonObject>;
  /**
   * Start watching for the `honoured` notifications until `signal` aborts.
   * Resolves once every later change will be heard (a subscribed schema's
   * baseline read), so the acknowledgement comes after it; with `deliver`,
   * called after the acknowledgement, which sends the changes (those seen
   * before it too) until `signal` aborts.
   */
  watch(
    honoured: JsonObject,
    ctx: CallContext,
    signal: AbortSignal,
  ): Promise<() => Promise<void>>;
}

const FILTER_KEYS = new Set([
  "toolsListChanged",
  "promptsListChanged",
  "resourcesListChanged",
  "resourceSubscriptions",
]);

/** Validate the listen filter: an object of the known opt-in fields. */
function parseFilter(params: JsonObject): JsonObject {
  const filter = params.notifications ?? {};
  if (!isJsonObject(filter)) {
    throw wire.invalidParams(
      "Invalid params for subscriptions/listen: notifications must be an object",
    );
  }
  for (const [key, value] of Object.entries(filter)) {
    if (!FILTER_KEYS.has(key)) continue; // unknown types are dropped, not refused
    const ok = key === "resourceSubscriptions"
      ? Array.isArray(value) && value.every((uri) => typeof uri === "string")
      : typeof value === "boolean";
    if (!ok) {
      throw wire.invalidParams(
        `Invalid params for subscriptions/listen: notifications.${key} has the wrong type`,
      );
    }
  }
  return filter;
}

/**
 * The most streams one principal keeps open at once (docs/wire.md
 * "Subscriptions"): a stream holds one of the server's 64 connections for as
 * long as it stays, so one token must not take them all.
 */
export const MAX_STREAMS_PER_TOKEN = 8;

/** How long a refused client is told to wait before it tries again. */
const RETRY_AFTER_SECONDS = 30;

/** `-33010` for a stream past the principal's share. */
function tooManyStreams(): WireError {
  return new WireError(
    ErrorCode.RateLimited,
    `Rate limited: this token already has ${MAX_STREAMS_PER_TOKEN} subscription streams open (the limit per token); close one before opening another`,
    { retryAfterSeconds: RETRY_AFTER_SECONDS },
    { "retry-after": String(RETRY_AFTER_SECONDS) },
  );
}

/** Build the listen handler over the sources that can deliver notifications. */
export function listenHandler(sources: readonly SubscriptionSource[]): Handler {
  const open = new Map<string, number>();
  return async (ctx) => {
    const requested = parseFilter(ctx.params);
    const key = ctx.principal.key;
    const count = open.get(key) ?? 0;
    if (count >= MAX_STREAMS_PER_TOKEN) throw tooManyStreams();
    open.set(key, count + 1);
    try {
      return await listen(sources, requested, ctx);
    } finally {
      const left = (open.get(key) ?? 1) - 1;
      if (left === 0) open.delete(key);
      else open.set(key, left);
    }
  };
}

/** Watch, acknowledge the honoured notifications, then deliver them until stopped. */
async function listen(
  sources: readonly SubscriptionSource[],
  requested: JsonObject,
  ctx: CallContext,
): Promise<JsonObject> {
  const honoured: JsonObject = {};
  for (const source of sources) {
    Object.assign(honoured, await source.accept(requested, ctx));
  }
  const subscription = { [META_SUBSCRIPTION_ID]: ctx.id };
  const stop = AbortSignal.any([ctx.signal, ctx.shutdown]);
  // Acknowledged once watching: a change the client makes after the
  // acknowledgement is then always heard.
  const deliveries = await Promise.all(
    sources.map((source) => source.watch(honoured, ctx, stop)),
  );
  ctx.notify("notifications/subscriptions/acknowledged", {
    notifications: honoured,
    _meta: subscription,
  });
  await Promise.all([
    ...deliveries.map((deliver) => deliver()),
    new Promise<void>((resolve) => {
      if (stop.aborted) resolve();
      else stop.addEventListener("abort", () => resolve(), { once: true });
    }),
  ]);
  return { _meta: subscription };
}
