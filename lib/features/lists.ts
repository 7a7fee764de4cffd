/**
 * The four paged list methods (docs/wire.md "Pagination"): `tools/list`,
 * `prompts/list`, `resources/list`, `resources/templates/list`.
 *
 * @module
 */

import { CursorCodec, PAGE_SIZE, pageAfter } from "../protocol/cursor.ts";
import { wire } from "../protocol/errors.ts";
import type { JsonObject } from "../protocol/jsonrpc.ts";
import type { Catalog } from "./catalog.ts";
import { sortBy } from "./catalog.ts";
import type { CallContext, Handler } from "./context.ts";
import { toolDefinitionFor } from "./ui/apps.ts";

const CURSOR_PROBLEMS = {
  malformed: "is not a cursor this server issued",
  forged: "is not a cursor this server issued",
  wrong_method: "was issued by another method",
} as const;

/** Where a page starts: null for the first page. */
async function startAfter(
  codec: CursorCodec,
  ctx: CallContext,
): Promise<string | null> {
  const cursor = ctx.params.cursor;
  if (cursor === undefined || cursor === null) return null;
  if (typeof cursor !== "string") {
    throw wire.invalidParams(
      `Invalid cursor: params.cursor must be a string, got ${
        JSON.stringify(cursor)
      }`,
    );
  }
  const opened = await codec.open(ctx.method, cursor);
  if (!opened.ok) {
    throw wire.invalidParams(
      `Invalid cursor for ${ctx.method}: it ${CURSOR_PROBLEMS[opened.problem]}`,
      { cursor },
    );
  }
  return opened.after;
}

/** Build a list handler over items sorted by `keyOf`. */
function pagedList<T>(
  codec: CursorCodec,
  field: string,
  items: (ctx: CallContext) => Promise<readonly T[]> | readonly T[],
  keyOf: (item: T) => string,
  present: (item: T) => JsonObject,
  pageSize: number,
): Handler {
  return async (ctx) => {
    const after = await startAfter(codec, ctx);
    const { page, lastKey } = pageAfter(
      await items(ctx),
      keyOf,
      after,
      pageSize,
    );
    const result: JsonObject = { [field]: page.map(present) };
    if (lastKey !== null) {
      result.nextCursor = await codec.seal(ctx.method, lastKey);
    }
    return result;
  };
}

/** The paged list methods. */
export type ListMethod =
  | "tools/list"
  | "resources/list"
  | "resources/templates/list"
  | "prompts/list";

/** The list handlers over a catalog. */
export function listHandlers(
  catalog: Catalog,
  codec: CursorCodec,
  pageSize = PAGE_SIZE,
): { readonly [M in ListMethod]: Handler } {
  return {
    "tools/list": pagedList(
      codec,
      "tools",
      // tools/list shows only what the caller's scopes allow (docs/wire.md
      // "Authentication" 3): a tool needing a scope the caller lacks is hidden.
      // A tool with an MCP Apps view names it only to a caller that declared
      // the extension (ui/apps.ts).
      (ctx) =>
        catalog.toolsFor(ctx).filter((tool) =>
          tool.scope === null || ctx.principal.scopes.has(tool.scope)
        ).map((tool) => toolDefinitionFor(tool, ctx)),
      (definition) => String(definition.name),
      (definition) => definition,
      pageSize,
    ),
    "prompts/list": pagedList(
      codec,
      "prompts",
      () => catalog.prompts,
      (prompt) => prompt.definition.name,
      (prompt) => prompt.definition,
      pageSize,
    ),
    "resources/templates/list": pagedList(
      codec,
      "resourceTemplates",
      () => catalog.templates,
      (template) => template.definition.uriTemplate,
      (template) => template.definition,
      pageSize,
    ),
    "resources/list": pagedList(
      codec,
      "resources",
      async (ctx) => {
        const lists = await Promise.all(
          catalog.resourceProviders.map((provider) => provider.list(ctx)),
        );
        return sortBy(lists.flat(), (item) => item.uri);
      },
      (item) => item.uri,
      (item) => item,
      pageSize,
    ),
  };
}
