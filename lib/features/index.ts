/**
 * Everything dbport offers over the saved connections: the tools, prompts,
 * resources and templates, completions, and the notifications
 * `subscriptions/listen` delivers.
 *
 * @module
 */

import { Catalog } from "./catalog.ts";
import { databaseCompleter } from "./completions.ts";
import type { FeatureDeps } from "./deps.ts";
import type { SubscriptionSource } from "./listen.ts";
import { databasePrompts } from "./prompts/index.ts";
import { docsResources } from "./resources/docs.ts";
import { connectionResources } from "./resources/provider.ts";
import { RESOURCE_TEMPLATES } from "./resources/templates.ts";
import { resourceSubscriptions } from "./subscriptions/resource_source.ts";
import { SchemaWatch } from "./subscriptions/schema_watch.ts";
import { databaseTools } from "./tools/index.ts";
import { savedQueryTools } from "./tools/saved_query.ts";
import { viewResources } from "./ui/resources.ts";

/** The catalog and the subscription sources over `deps`. */
export function databaseFeatures(deps: FeatureDeps): {
  catalog: Catalog;
  subscriptionSources: SubscriptionSource[];
} {
  const tools = databaseTools(deps);
  return {
    catalog: new Catalog({
      tools,
      prompts: databasePrompts(deps),
      templates: [...RESOURCE_TEMPLATES],
      resourceProviders: [
        docsResources(tools),
        connectionResources(deps),
        viewResources(),
      ],
      completer: databaseCompleter(deps),
      callerTools: (ctx) => savedQueryTools(deps, ctx),
    }),
    subscriptionSources: [
      resourceSubscriptions(deps, new SchemaWatch(deps)),
    ],
  };
}
