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
import { wire } from "../protocol/errors.ts";
import { isJsonObject, type JsonObject } from "../protocol/jsonrpc.ts";
import type { CallContext, Handler } from "./context.ts";

/** Decides which requested notifications a principal will actually receive. */
export interface SubscriptionSource {
  /** The honoured subset of `requested` (the acknowledgement's `notifications`). */
  accept(requested: JsonObject, ctx: CallContext): Promise<JsonObject>;
  /** Deliver notifications until `signal` aborts. */
  run(
    honoured: JsonObject,
    ctx: CallContext,
    signal: AbortSignal,
  ): Promise<void>;
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

/** Build the listen handler over the sources that can deliver notifications. */
export function listenHandler(sources: readonly SubscriptionSource[]): Handler {
  return async (ctx) => {
    const requested = parseFilter(ctx.params);
    const honoured: JsonObject = {};
    for (const source of sources) {
      Object.assign(honoured, await source.accept(requested, ctx));
    }
    const subscription = { [META_SUBSCRIPTION_ID]: ctx.id };
    ctx.notify("notifications/subscriptions/acknowledged", {
      notifications: honoured,
      _meta: subscription,
    });
    const stop = AbortSignal.any([ctx.signal, ctx.shutdown]);
    await Promise.all([
      ...sources.map((source) => source.run(honoured, ctx, stop)),
      new Promise<void>((resolve) => {
        if (stop.aborted) resolve();
        else stop.addEventListener("abort", () => resolve(), { once: true });
      }),
    ]);
    return { _meta: subscription };
  };
}
