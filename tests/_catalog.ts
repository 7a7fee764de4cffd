/**
 * A catalog of test fixtures: real entries with real handlers, standing in for
 * the database tools that later features register.
 *
 * @module
 */

import {
  Catalog,
  type ResourceItem,
  type ToolEntry,
} from "../lib/features/catalog.ts";
import type { JsonObject } from "../lib/protocol/jsonrpc.ts";
import { sleep } from "../lib/base/sleep.ts";

const NO_ARGS = { type: "object", additionalProperties: false };

function tool(
  name: string,
  call: ToolEntry["call"],
  scope: ToolEntry["scope"] = null,
): ToolEntry {
  return {
    definition: {
      name,
      description: `Test tool ${name}`,
      inputSchema: NO_ARGS,
    },
    scope,
    call,
  };
}

function text(value: JsonObject): JsonObject {
  return {
    content: [{ type: "text", text: JSON.stringify(value) }],
    structuredContent: value,
  };
}

export { sleep } from "../lib/base/sleep.ts";

/**
 * Tools that exercise the transport. Their sleeps are the tools' simulated
 * work (a tool that takes time), not a test waiting for something.
 */
export const fixtureTools: ToolEntry[] = [
  // Records its connection_id and query as a database tool records what it
  // resolved (the activity log reads only what was recorded).
  tool("echo", (args, ctx) => {
    ctx.record?.({
      ...(typeof args.connection_id === "string"
        ? { connectionId: args.connection_id }
        : {}),
      ...(typeof args.query === "string" ? { sql: args.query } : {}),
    });
    return Promise.resolve(text({ args }));
  }),
  tool("progress", async (_args, ctx) => {
    ctx.progress(0, 1, "starting");
    ctx.progress(0, 1, "not advancing: dropped");
    await sleep(20);
    ctx.progress(0.3, 1, "working");
    ctx.progress(0.2, 1, "going back: dropped");
    await sleep(20);
    ctx.progress(1, 1, "done");
    return text({ done: true });
  }),
  tool("slow", async (args, ctx) => {
    const ms = typeof args.ms === "number" ? args.ms : 60_000;
    if (args.progress === true) ctx.progress(0, 1, "started");
    await sleep(ms, ctx.signal);
    return text({ slept: ms, aborted: ctx.signal.aborted });
  }),
  tool(
    "boom",
    () =>
      Promise.reject(
        new Error("password=hunter2 host=db.internal:5432 exploded"),
      ),
  ),
  tool(
    "cached",
    () => Promise.resolve({ ...text({}), ttlMs: 99, cacheScope: "public" }),
  ),
  tool("writer", () => Promise.resolve(text({ wrote: true })), "tools:write"),
  tool("approver", () => Promise.resolve(text({ approved: true })), "admin"),
];

/** A tool whose work cannot be undone once begun, like a COMMIT in flight. */
export const committingTool: ToolEntry = tool(
  "committing",
  async (args, ctx) => {
    ctx.holdAnswer();
    // The commit's simulated work.
    await sleep(typeof args.ms === "number" ? args.ms : 300);
    return text({ committed: true, aborted: ctx.signal.aborted });
  },
);

/** `count` numbered tools, for pagination. */
export function numberedTools(count: number): ToolEntry[] {
  return Array.from(
    { length: count },
    (_, i) =>
      tool(
        `tool_${String(i).padStart(3, "0")}`,
        () => Promise.resolve(text({ i })),
      ),
  );
}

/** A catalog with fixture tools, two prompts, a template and two resources. */
export function fixtureCatalog(extraTools: ToolEntry[] = []): Catalog {
  const resources: ResourceItem[] = [
    { uri: "test://fast", name: "fast", mimeType: "application/json" },
    {
      uri: "test://slow-changing",
      name: "slow-changing",
      mimeType: "application/json",
    },
  ];
  return new Catalog({
    tools: [...fixtureTools, ...extraTools],
    prompts: [
      {
        definition: {
          name: "greet",
          description: "Say hello",
          arguments: [{ name: "who", required: true }],
        },
        get: (args) =>
          Promise.resolve({
            messages: [{
              role: "user",
              content: { type: "text", text: `Hello ${args.who}` },
            }],
          }),
      },
    ],
    templates: [
      {
        definition: {
          uriTemplate: "test://items/{id}",
          name: "item",
          mimeType: "application/json",
        },
      },
    ],
    resourceProviders: [{
      list: () => Promise.resolve(resources),
      read: (uri) => {
        const ttl = uri === "test://fast"
          ? 1
          : uri === "test://slow-changing"
          ? 10_000_000
          : null;
        if (ttl === null) return Promise.resolve(null);
        return Promise.resolve({
          contents: [{ uri, mimeType: "application/json", text: "{}" }],
          ttlMs: ttl,
        });
      },
    }],
  });
}
