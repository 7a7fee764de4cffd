/**
 * MCP Apps (the `io.modelcontextprotocol/ui` extension, spec 2026-01-26):
 * whether a client declared it, and the link from a tool to the `ui://`
 * view that draws its result (docs/apps.md).
 *
 * The extension is negotiated by the client alone: it lists
 * `io.modelcontextprotocol/ui` with `mimeTypes` in its capabilities (modern:
 * every request's `_meta` clientCapabilities; legacy: `initialize`), and the
 * server SHOULD check that before offering UI. The spec defines no server
 * entry, so `server/discover` keeps the contract's `extensions: {}`.
 *
 * @module
 */

import { isJsonObject, type JsonObject } from "../../protocol/jsonrpc.ts";
import type { ToolEntry } from "../catalog.ts";
import type { CallContext } from "../context.ts";

/** The extension's identifier in `capabilities.extensions`. */
export const APPS_EXTENSION = "io.modelcontextprotocol/ui";

/** The MIME type of an MCP App's HTML (the only one the spec defines). */
export const APP_MIME_TYPE = "text/html;profile=mcp-app";

/** The view of `execute_query`: a sortable grid with a chart view. */
export const RESULT_GRID_URI = "ui://dbport/result-grid";
/** The view of `describe_table`: a table card. */
export const TABLE_CARD_URI = "ui://dbport/table-card";
/** The view of `explain_query`: a plan tree. */
export const PLAN_TREE_URI = "ui://dbport/plan-tree";

/**
 * Whether the client declared MCP Apps with HTML views: the extension's
 * settings must be an object whose `mimeTypes` (REQUIRED by the spec) lists
 * {@linkcode APP_MIME_TYPE}. Anything else - no entry, `{}`, another type -
 * is a client without the extension, which sees the tools as they always were.
 */
export function declaresApps(capabilities: JsonObject): boolean {
  const extensions = capabilities.extensions;
  if (!isJsonObject(extensions)) return false;
  const settings = extensions[APPS_EXTENSION];
  if (!isJsonObject(settings) || !Array.isArray(settings.mimeTypes)) {
    return false;
  }
  return settings.mimeTypes.some((type) =>
    typeof type === "string" &&
    type.replace(/\s+/g, "").toLowerCase() === APP_MIME_TYPE
  );
}

/**
 * A tool's definition as this caller's `tools/list` shows it: with
 * `_meta.ui.resourceUri` only when the tool has a view and the caller
 * declared the extension (the spec links a tool to its view there, and a
 * host reads it from `tools/list` to know which view renders the result).
 */
export function toolDefinitionFor(
  tool: ToolEntry,
  ctx: CallContext,
): JsonObject {
  if (tool.view === undefined || !declaresApps(ctx.clientCapabilities)) {
    return tool.definition;
  }
  return { ...tool.definition, _meta: uiMeta(tool.view) };
}

function uiMeta(resourceUri: string): JsonObject {
  return { ui: { resourceUri } };
}

/**
 * The tool with its view: listed with `_meta.ui.resourceUri` for a caller
 * that declared the extension, and its results carry the same link in their
 * own `_meta` (an answer still waiting for the user's consent does not).
 * Nothing else of the tool changes; a caller without the extension gets
 * exactly the tool's own definition and results.
 */
export function withView(tool: ToolEntry, resourceUri: string): ToolEntry {
  return {
    ...tool,
    view: resourceUri,
    async call(args, ctx) {
      const result = await tool.call(args, ctx);
      if (
        !declaresApps(ctx.clientCapabilities) ||
        result.resultType === "input_required"
      ) {
        return result;
      }
      const meta = isJsonObject(result._meta) ? result._meta : {};
      return { ...result, _meta: { ...meta, ...uiMeta(resourceUri) } };
    },
  };
}
