/**
 * MCP Apps without a browser (docs/apps.md): which capabilities declare the
 * extension, what a tool with a view adds to its definition and results,
 * and what each `ui://` document is made of (size, its own CSP naming the
 * exact inline style and script, no network).
 */

import { createHash } from "node:crypto";
import { assert, assertEquals, assertMatch } from "@std/assert";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";
import type { ToolEntry } from "../../lib/features/catalog.ts";
import type { CallContext } from "../../lib/features/context.ts";
import {
  APP_MIME_TYPE,
  declaresApps,
  RESULT_GRID_URI,
  toolDefinitionFor,
  withView,
} from "../../lib/features/ui/apps.ts";
import {
  VIEW_BUDGET_BYTES,
  viewResources,
  VIEWS,
} from "../../lib/features/ui/resources.ts";

const ui = (settings: unknown): JsonObject =>
  ({ extensions: { "io.modelcontextprotocol/ui": settings } }) as JsonObject;

Deno.test("declaresApps(): only the extension with the HTML MIME type in mimeTypes", () => {
  assertEquals(declaresApps({}), false);
  assertEquals(declaresApps({ extensions: {} }), false);
  assertEquals(declaresApps({ extensions: "ui" } as JsonObject), false);
  assertEquals(declaresApps(ui({})), false, "mimeTypes is required");
  assertEquals(declaresApps(ui(true)), false);
  assertEquals(declaresApps(ui({ mimeTypes: APP_MIME_TYPE })), false);
  assertEquals(declaresApps(ui({ mimeTypes: ["text/html"] })), false);
  assertEquals(declaresApps(ui({ mimeTypes: [1, null] })), false);
  // Another extension, or the type under another key, is no declaration.
  assertEquals(
    declaresApps({
      extensions: {
        "io.modelcontextprotocol/tasks": { mimeTypes: [APP_MIME_TYPE] },
      },
    }),
    false,
  );
  assertEquals(
    declaresApps({ experimental: ui({ mimeTypes: [APP_MIME_TYPE] }) }),
    false,
  );
  assertEquals(declaresApps(ui({ mimeTypes: [APP_MIME_TYPE] })), true);
  // MIME types compare without case and parameter spacing.
  assertEquals(
    declaresApps(
      ui({ mimeTypes: ["text/plain", "Text/HTML; profile=mcp-app"] }),
    ),
    true,
  );
});

const DEFINITION = {
  name: "t",
  description: "d",
  inputSchema: { type: "object" },
};

function tool(answer: JsonObject): ToolEntry {
  return {
    definition: DEFINITION,
    scope: null,
    call: () => Promise.resolve(answer),
  };
}

const context = (capabilities: JsonObject) =>
  ({ clientCapabilities: capabilities }) as unknown as CallContext;
const WITH = context(ui({ mimeTypes: [APP_MIME_TYPE] }));
const WITHOUT = context({});

Deno.test("withView(): the link in tools/list and on results only for a client that declared the extension", async () => {
  const answer = {
    content: [{ type: "text", text: "{}" }],
    structuredContent: {},
    _meta: { "x.example/trace": "kept" },
  };
  const viewed = withView(tool(answer), RESULT_GRID_URI);
  // tools/list
  assertEquals(toolDefinitionFor(viewed, WITHOUT), DEFINITION);
  assert(toolDefinitionFor(viewed, WITHOUT) === DEFINITION, "the same object");
  assertEquals(toolDefinitionFor(viewed, WITH), {
    ...DEFINITION,
    _meta: { ui: { resourceUri: RESULT_GRID_URI } },
  });
  assertEquals(toolDefinitionFor(tool(answer), WITH), DEFINITION, "no view");
  // Results: the answer itself without, the link added (other _meta kept) with.
  assert(await viewed.call({}, WITHOUT) === answer);
  assertEquals(await viewed.call({}, WITH), {
    ...answer,
    _meta: {
      "x.example/trace": "kept",
      ui: { resourceUri: RESULT_GRID_URI },
    },
  });
  // An answer waiting for consent is passed on as it is.
  const waiting = { resultType: "input_required", requestState: "s" };
  assert(
    await withView(tool(waiting), RESULT_GRID_URI).call({}, WITH) === waiting,
  );
});

Deno.test("every view is one small HTML5 document whose own CSP names its exact style and script, and nothing to fetch", async () => {
  assertEquals([...VIEWS.keys()].sort(), [
    "ui://dbport/plan-tree",
    "ui://dbport/result-grid",
    "ui://dbport/table-card",
  ]);
  const provider = viewResources();
  const listed = await provider.list(WITHOUT);
  assertEquals(listed.length, 3);
  for (const item of listed) {
    const read = await provider.read(item.uri, WITHOUT);
    assert(read !== null);
    const [content] = read.contents as JsonObject[];
    assertEquals(content!.mimeType, APP_MIME_TYPE);
    assertEquals(content!._meta, { ui: { prefersBorder: true } });
    const html = content!.text as string;
    const bytes = new TextEncoder().encode(html).length;
    assertEquals(item.size, bytes);
    assert(bytes <= VIEW_BUDGET_BYTES, `${item.uri}: ${bytes} bytes`);
    assertMatch(html, /^<!DOCTYPE html>\n<html lang="en">/);
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(
      html,
    )![1]!;
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)];
    const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)];
    assertEquals([scripts.length, styles.length], [1, 1]);
    const hash = (text: string) =>
      `'sha256-${createHash("sha256").update(text).digest("base64")}'`;
    assert(csp.includes(`script-src ${hash(scripts[0]![1]!)};`), csp);
    assert(csp.includes(`style-src ${hash(styles[0]![1]!)};`), csp);
    for (
      const directive of [
        "default-src 'none'",
        "connect-src 'none'",
        "frame-src 'none'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
      ]
    ) {
      assert(csp.includes(directive), `${item.uri} lacks ${directive}`);
    }
    // No way to put data in as markup: the views never use innerHTML.
    assert(
      !/innerHTML|outerHTML|insertAdjacentHTML|document\.write/.test(html),
    );
  }
  assertEquals(await provider.read("ui://dbport/other", WITHOUT), null);
  assertEquals(await provider.read("dbport://connections", WITHOUT), null);
});
