/**
 * The catalog of what the server offers: tools, prompts, resources and resource
 * templates. Built once at start-up, sorted by key, never rebuilt per request.
 * Later features register into it; each entry carries its own handler.
 *
 * @module
 */

import type { CallContext, Scope } from "./context.ts";
import type { JsonObject } from "../protocol/jsonrpc.ts";
import type { Completer } from "./completions.ts";

/** A tool as published by `tools/list`, with the scope it needs and its handler. */
export interface ToolEntry {
  /** The published definition (name, title, description, inputSchema, ...). */
  definition: JsonObject & { name: string };
  /** The tool's own scope on top of `tools:read`, if any. */
  scope: Scope | null;
  /**
   * The full output schema (types, nested shapes, prose), which the
   * `dbport://docs/results` resource publishes; tools/list has a lean one.
   */
  outputSchema?: JsonObject;
  /**
   * The `ui://` view (MCP Apps) that draws this tool's result for a client
   * that declared the extension (lib/features/ui/apps.ts).
   */
  view?: string;
  call(args: JsonObject, ctx: CallContext): Promise<JsonObject>;
}

/** A prompt as published by `prompts/list`, with its renderer. */
export interface PromptEntry {
  definition: JsonObject & { name: string };
  /** Arguments with fixed choices, in the order completion offers them. */
  choices?: Readonly<Record<string, readonly string[]>>;
  get(args: Record<string, string>, ctx: CallContext): Promise<JsonObject>;
}

/** A concrete resource as published by `resources/list`. */
export interface ResourceItem extends JsonObject {
  uri: string;
  name: string;
}

/** A resource template as published by `resources/templates/list`. */
export interface TemplateEntry {
  definition: JsonObject & { uriTemplate: string; name: string };
}

/** Reads resources: lists the caller's visible ones and reads one by URI. */
export interface ResourceProvider {
  /** The resources visible to this caller. */
  list(ctx: CallContext): Promise<ResourceItem[]>;
  /** Read one; returns null for a URI this provider does not own. */
  read(uri: string, ctx: CallContext): Promise<JsonObject | null>;
}

/** Everything the server offers. */
export class Catalog {
  readonly tools: readonly ToolEntry[];
  readonly prompts: readonly PromptEntry[];
  readonly templates: readonly TemplateEntry[];
  readonly resourceProviders: readonly ResourceProvider[];
  /** Completes argument values; without one every completion is empty. */
  readonly completer: Completer | null;
  /**
   * Tools that depend on the caller and on files the user edits (saved
   * queries, docs/queries.md): asked at each tools/list and tools/call.
   */
  readonly callerTools: ((ctx: CallContext) => ToolEntry[]) | null;
  readonly #toolsByName: ReadonlyMap<string, ToolEntry>;
  readonly #promptsByName: ReadonlyMap<string, PromptEntry>;

  constructor(parts: {
    tools?: ToolEntry[];
    prompts?: PromptEntry[];
    templates?: TemplateEntry[];
    resourceProviders?: ResourceProvider[];
    completer?: Completer;
    callerTools?: (ctx: CallContext) => ToolEntry[];
  } = {}) {
    // Sorted by the cursor key with plain code-unit order, which is the order
    // pageAfter() compares in.
    this.tools = sortBy(parts.tools ?? [], (tool) => tool.definition.name);
    this.prompts = sortBy(parts.prompts ?? [], (p) => p.definition.name);
    this.templates = sortBy(
      parts.templates ?? [],
      (t) => t.definition.uriTemplate,
    );
    this.resourceProviders = parts.resourceProviders ?? [];
    this.completer = parts.completer ?? null;
    this.callerTools = parts.callerTools ?? null;
    this.#toolsByName = uniqueMap(this.tools, (t) => t.definition.name, "tool");
    this.#promptsByName = uniqueMap(
      this.prompts,
      (p) => p.definition.name,
      "prompt",
    );
  }

  /** A tool by name. */
  tool(name: string): ToolEntry | undefined {
    return this.#toolsByName.get(name);
  }

  /** Every tool this caller may be offered, sorted by name. */
  toolsFor(ctx: CallContext): readonly ToolEntry[] {
    if (this.callerTools === null) return this.tools;
    return sortBy(
      [...this.tools, ...this.callerTools(ctx)],
      (tool) => tool.definition.name,
    );
  }

  /** A tool by name, the caller's own included. */
  toolFor(name: string, ctx: CallContext): ToolEntry | undefined {
    return this.#toolsByName.get(name) ??
      this.callerTools?.(ctx).find((tool) => tool.definition.name === name);
  }

  /** A prompt by name. */
  prompt(name: string): PromptEntry | undefined {
    return this.#promptsByName.get(name);
  }
}

/** Sort a copy by a string key in code-unit order. */
export function sortBy<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
): T[] {
  return [...items].sort((a, b) => {
    const x = keyOf(a);
    const y = keyOf(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

function uniqueMap<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
  kind: string,
): Map<string, T> {
  const map = new Map<string, T>();
  for (const item of items) {
    const key = keyOf(item);
    if (map.has(key)) throw new Error(`Cannot register ${kind} "${key}" twice`);
    map.set(key, item);
  }
  return map;
}
