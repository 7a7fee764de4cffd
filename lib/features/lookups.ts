/**
 * The methods that name one thing: `tools/call`, `prompts/get`,
 * `resources/read` and `completion/complete`. An unknown name or URI is
 * `-32602` (docs/wire.md "JSON-RPC methods"); the named entry does the work.
 *
 * @module
 */

import { wire } from "../protocol/errors.ts";
import {
  isJsonObject,
  isStringRecord,
  type JsonObject,
} from "../protocol/jsonrpc.ts";
import type { Catalog } from "./catalog.ts";
import type { Handler } from "./context.ts";

function requireString(
  value: unknown,
  field: string,
  method: string,
): string {
  if (typeof value !== "string" || value === "") {
    throw wire.invalidParams(
      `Invalid params for ${method}: ${field} must be a non-empty string`,
    );
  }
  return value;
}

/** The methods that name one thing. */
export type LookupMethod =
  | "tools/call"
  | "prompts/get"
  | "resources/read"
  | "completion/complete";

/** The lookup handlers over a catalog. */
export function lookupHandlers(
  catalog: Catalog,
): { readonly [M in LookupMethod]: Handler } {
  return {
    "tools/call": (ctx) => callTool(catalog, ctx),
    "prompts/get": (ctx) => getPrompt(catalog, ctx),
    "resources/read": (ctx) => readResource(catalog, ctx),
    "completion/complete": (ctx) => complete(catalog, ctx),
  };
}

type Ctx = Parameters<Handler>[0];

function callTool(catalog: Catalog, ctx: Ctx): ReturnType<Handler> {
  const name = requireString(ctx.params.name, "params.name", ctx.method);
  const tool = catalog.toolFor(name, ctx);
  if (tool === undefined) {
    throw wire.invalidParams(`Unknown tool "${name}"`, { name });
  }
  // tools/call needs tools:read (checked by dispatch) plus the tool's own
  // scope (docs/wire.md "JSON-RPC methods").
  if (tool.scope !== null && !ctx.principal.scopes.has(tool.scope)) {
    throw wire.insufficientScope([tool.scope], `the tool "${name}"`);
  }
  const args = ctx.params.arguments;
  if (!isJsonObject(args)) {
    throw wire.invalidParams(
      `Invalid params for tools/call: arguments must be an object ({} when the tool takes none)`,
    );
  }
  return tool.call(args, ctx);
}

function getPrompt(catalog: Catalog, ctx: Ctx): ReturnType<Handler> {
  const name = requireString(ctx.params.name, "params.name", ctx.method);
  const prompt = catalog.prompt(name);
  if (prompt === undefined) {
    throw wire.invalidParams(`Unknown prompt "${name}"`, { name });
  }
  const args = ctx.params.arguments ?? {};
  if (!isStringRecord(args)) {
    throw wire.invalidParams(
      "Invalid params for prompts/get: arguments must be an object of strings",
    );
  }
  return prompt.get(args, ctx);
}

async function readResource(
  catalog: Catalog,
  ctx: Ctx,
): Promise<Awaited<ReturnType<Handler>>> {
  const uri = requireString(ctx.params.uri, "params.uri", ctx.method);
  for (const provider of catalog.resourceProviders) {
    const result = await provider.read(uri, ctx);
    if (result !== null) return result;
  }
  // Resource-not-found has no code of its own (docs/wire.md "Protocol errors").
  throw wire.invalidParams(`Unknown resource "${uri}"`, { uri });
}

function complete(catalog: Catalog, ctx: Ctx): ReturnType<Handler> {
  const { ref, argument } = ctx.params;
  if (!isJsonObject(ref) || typeof ref.type !== "string") {
    throw wire.invalidParams(
      "Invalid params for completion/complete: ref must be an object with a type",
    );
  }
  if (
    !isJsonObject(argument) || typeof argument.name !== "string" ||
    typeof argument.value !== "string"
  ) {
    throw wire.invalidParams(
      "Invalid params for completion/complete: argument must be {name, value} strings",
    );
  }
  const context = ctx.params.context === undefined
    ? {}
    : isJsonObject(ctx.params.context)
    ? ctx.params.context.arguments ?? {}
    : null;
  if (!isStringRecord(context)) {
    throw wire.invalidParams(
      "Invalid params for completion/complete: context.arguments must be an object of strings",
    );
  }
  const target = completionTarget(catalog, ref, argument.name, ctx.method);
  if (!target.known || catalog.completer === null) {
    return Promise.resolve({
      completion: { values: [], total: 0, hasMore: false },
    });
  }
  return catalog.completer.complete({
    argument: { name: argument.name, value: argument.value },
    context,
    ...(target.choices === undefined ? {} : { choices: target.choices }),
  }, ctx);
}

/**
 * Whether the server has what a completion's ref names, and the prompt's
 * fixed choices for the argument. A ref to a prompt or template this server
 * does not have completes to nothing rather than failing: completion is
 * advice while a user types, and the official conformance suite
 * (completion-complete) asks for a result for its own prompt name on every
 * server. Malformed refs stay -32602.
 */
function completionTarget(
  catalog: Catalog,
  ref: JsonObject,
  argument: string,
  method: string,
): { known: boolean; choices?: readonly string[] } {
  if (ref.type === "ref/prompt") {
    const name = requireString(ref.name, "ref.name", method);
    const prompt = catalog.prompt(name);
    const choices = prompt?.choices?.[argument];
    return {
      known: prompt !== undefined,
      ...(choices === undefined ? {} : { choices }),
    };
  }
  if (ref.type === "ref/resource") {
    const uri = requireString(ref.uri, "ref.uri", method);
    return {
      known: catalog.templates.some((t) => t.definition.uriTemplate === uri),
    };
  }
  throw wire.invalidParams(
    `Invalid params for completion/complete: unknown ref type "${
      String(ref.type)
    }"`,
  );
}
