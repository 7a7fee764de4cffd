/**
 * What `subscriptions/listen` delivers (issue 7; docs/wire.md "Subscriptions"):
 * `notifications/resources/list_changed` when the set of resources this
 * principal sees changes (a connection added, removed, blocked, its policy
 * changed, opened or closed), and `notifications/resources/updated` when a
 * subscribed connection's schema changes. Tools and prompts never change
 * while the server runs, so those requests are not honoured.
 *
 * @module
 */

import { stringsOf } from "../../protocol/jsonrpc.ts";
import type { JsonObject } from "../../protocol/jsonrpc.ts";
import type { CallContext } from "../context.ts";
import type { FeatureDeps } from "../deps.ts";
import type { SubscriptionSource } from "../listen.ts";
import { META_SUBSCRIPTION_ID } from "../../protocol/envelope.ts";
import { parseResourceUri, schemaUri } from "../resources/uris.ts";
import { readableWithoutAsking, visibleConnections } from "../tools/access.ts";
import { type SchemaWatch } from "./schema_watch.ts";

/** How often the visible resource list is compared with the one last sent. */
export const LIST_POLL_MS = 1_000;

/** The resource notifications source. */
export function resourceSubscriptions(
  deps: FeatureDeps,
  watch: SchemaWatch,
): SubscriptionSource {
  return {
    accept(requested, ctx) {
      return Promise.resolve(honouredOf(deps, requested, ctx));
    },

    async watch(honoured, ctx, signal) {
      const meta = { [META_SUBSCRIPTION_ID]: ctx.id };
      // Changes seen before `deliver` (before the acknowledgement) wait for it.
      let delivering = false;
      const held = new Map<string, string>();
      const updated = (uri: string, id: string) => {
        // A connection hidden since the subscription tells nothing more.
        if (readable(deps, id, ctx)) {
          ctx.notify("notifications/resources/updated", { uri, _meta: meta });
        }
      };
      const baselines: Promise<void>[] = [];
      for (const uri of stringsOf(honoured.resourceSubscriptions)) {
        const parsed = parseResourceUri(uri);
        if (!parsed.ok || parsed.ref.kind !== "schema") continue;
        const id = parsed.ref.connectionId;
        baselines.push(watch.watch(id, () => {
          if (delivering) updated(uri, id);
          else held.set(uri, id);
        }, signal));
      }
      // Taken before the baselines: a change meanwhile is announced after
      // the acknowledgement.
      const sent = resourcesKey(deps, ctx);
      await Promise.all(baselines);
      return async () => {
        delivering = true;
        for (const [uri, id] of held) updated(uri, id);
        held.clear();
        if (honoured.resourcesListChanged !== true) return;
        await announceListChanges(deps, ctx, signal, sent);
      };
    },
  };
}

/** Whether the principal may read the connection's schema without asking. */
function readable(deps: FeatureDeps, id: string, ctx: CallContext): boolean {
  const connection = deps.connections.byId(id);
  return connection !== undefined &&
    readableWithoutAsking(deps, connection, ctx.principal);
}

/** What of the `requested` notifications this principal is given. */
function honouredOf(
  deps: FeatureDeps,
  requested: JsonObject,
  ctx: CallContext,
): JsonObject {
  // Without resources:read nothing here may be heard.
  if (!ctx.principal.scopes.has("resources:read")) return {};
  const honoured: JsonObject = {};
  if (requested.resourcesListChanged === true) {
    honoured.resourcesListChanged = true;
  }
  const uris = new Set<string>();
  for (const uri of stringsOf(requested.resourceSubscriptions)) {
    // Only a connection's schema is subscribable; others are dropped
    // (issue 7: "subscriptions to URIs the principal cannot read are
    // dropped"). The honoured URI is the canonical spelling.
    const parsed = parseResourceUri(uri);
    if (!parsed.ok || parsed.ref.kind !== "schema") continue;
    if (!readable(deps, parsed.ref.connectionId, ctx)) continue;
    uris.add(schemaUri(parsed.ref.connectionId));
  }
  if (uris.size > 0) honoured.resourceSubscriptions = [...uris];
  return honoured;
}

/**
 * What the principal's resources are made of: which connections it sees,
 * under which name and policy (every one's schema is listed).
 */
function resourcesKey(deps: FeatureDeps, ctx: CallContext): string {
  return visibleConnections(deps, ctx.principal).map((c) =>
    [
      c.id,
      c.name,
      c.externalAccess,
      c.aiPolicy,
      c.safeMode,
    ].join("|")
  ).sort().join("\n");
}

/**
 * `notifications/resources/list_changed` each time the principal's
 * resources differ from those last announced (`sent` at first), until
 * `signal` aborts.
 */
async function announceListChanges(
  deps: FeatureDeps,
  ctx: CallContext,
  signal: AbortSignal,
  sent: string,
): Promise<void> {
  const meta = { [META_SUBSCRIPTION_ID]: ctx.id };
  const check = () => {
    if (signal.aborted) return;
    const now = resourcesKey(deps, ctx);
    if (now !== sent && !signal.aborted) {
      sent = now;
      ctx.notify("notifications/resources/list_changed", { _meta: meta });
    }
  };
  // connections.json changes are seen at once; opened and closed
  // connections at the next tick.
  const unsubscribe = deps.connections.onChange(check);
  const timer = setInterval(check, LIST_POLL_MS);
  await new Promise<void>((resolve) => {
    const done = () => {
      clearInterval(timer);
      unsubscribe();
      resolve();
    };
    if (signal.aborted) done();
    else signal.addEventListener("abort", done, { once: true });
  });
}
