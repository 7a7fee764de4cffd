/**
 * The MCP Apps views as resources: listed by `resources/list` and readable
 * by `resources/read` for every caller, with or without the extension (a
 * host may prefetch and review them before any tool runs). Each is one
 * self-contained HTML document served as `text/html;profile=mcp-app`, built
 * once at start-up; none needs network access, so none declares CSP domains
 * (the host then applies the spec's restrictive default, and the document's
 * own policy is stricter still).
 *
 * @module
 */

import type { JsonObject } from "../../protocol/jsonrpc.ts";
import type { ResourceItem, ResourceProvider } from "../catalog.ts";
import {
  APP_MIME_TYPE,
  PLAN_TREE_URI,
  RESULT_GRID_URI,
  TABLE_CARD_URI,
} from "./apps.ts";
import { CARD_VIEW } from "./card_view.ts";
import { GRID_VIEW } from "./grid_view.ts";
import { viewPage } from "./page.ts";
import { PLAN_VIEW } from "./plan_view.ts";

/** The most a view may weigh, in bytes of UTF-8 (issue 41: 50 KB). */
export const VIEW_BUDGET_BYTES = 50 * 1024;

/** A client may cache a view as long as the resource cache allows. */
const TTL_MS = 300_000;

/** The UI metadata of every view: a border, no network, no permissions. */
const UI_META: JsonObject = { ui: { prefersBorder: true } };

interface View {
  item: ResourceItem;
  html: string;
}

function view(
  uri: string,
  name: string,
  title: string,
  description: string,
  html: string,
): View {
  return {
    item: {
      uri,
      name,
      title,
      description,
      mimeType: APP_MIME_TYPE,
      size: new TextEncoder().encode(html).length,
      _meta: UI_META,
    },
    html,
  };
}

/** Every view, by URI. */
export const VIEWS: ReadonlyMap<string, View> = new Map(
  [
    view(
      RESULT_GRID_URI,
      "result-grid",
      "Query result grid",
      "MCP Apps view of execute_query: a sortable grid (NULL marked, long cells expandable, truncation said) with a bar or line chart for a label column and numeric columns.",
      viewPage(GRID_VIEW),
    ),
    view(
      TABLE_CARD_URI,
      "table-card",
      "Table card",
      "MCP Apps view of describe_table: columns, keys and indexes; a foreign key links to the table it references.",
      viewPage(CARD_VIEW),
    ),
    view(
      PLAN_TREE_URI,
      "plan-tree",
      "Query plan tree",
      "MCP Apps view of explain_query: the plan's summary and its nodes as a tree, full scans marked.",
      viewPage(PLAN_VIEW),
    ),
  ].map((entry) => [entry.item.uri, entry]),
);

/** The provider of the `ui://dbport/…` views. */
export function viewResources(): ResourceProvider {
  return {
    list: () => Promise.resolve([...VIEWS.values()].map((v) => v.item)),
    read(uri) {
      const found = VIEWS.get(uri);
      if (found === undefined) return Promise.resolve(null);
      return Promise.resolve({
        contents: [{
          uri: found.item.uri,
          mimeType: APP_MIME_TYPE,
          text: found.html,
          _meta: UI_META,
        }],
        ttlMs: TTL_MS,
      });
    },
  };
}
