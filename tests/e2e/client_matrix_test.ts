/**
 * The client matrix: real clients over both transports — HTTP and the stdio
 * bridge — each listing tools, reading a resource, getting a prompt, running
 * a query with progress and going through an approval, while every message
 * the server sends is checked against the official JSON Schema of the
 * revision it was sent in.
 *
 * Clients: the official SDK v2 client (modern: pinned to 2026-07-28 and
 * `auto` negotiation), the v1 SDK client (legacy 2025-11-25, and 2025-06-18
 * by rewriting the version it offers in `initialize`), and the MCP Inspector
 * CLI (one process per call, legacy, no elicitation: its approval is the
 * host dialog's).
 */

import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CallToolResultSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { BRIDGE_PERMISSIONS } from "../../lib/cli/integration.ts";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";
import { sleep } from "../../lib/base/sleep.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { openFixture } from "../_db.ts";
import { recordingDialog } from "../_dialog.ts";
import { SchemaCheck } from "../_schema_check.ts";
import { wireProxy } from "../_wire_proxy.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const BRIDGE = ["run", ...BRIDGE_PERMISSIONS, `${ROOT}bridge.ts`];
const TAP = `${ROOT}tests/_stdio_tap.ts`;
const INSPECTOR =
  "npm:@modelcontextprotocol/inspector-cli@1.0.3/build/index.js";

type Transport = "http" | "bridge";

/** What every client does, whatever its API. */
interface Session {
  listTools(): Promise<string[]>;
  readResource(uri: string): Promise<string>;
  getPrompt(name: string, args: Record<string, string>): Promise<string>;
  /** Run `execute_query` with a progress token; returns its structuredContent. */
  call(args: JsonObject): Promise<JsonObject>;
  /** Approval forms the client answered (null: it declares no elicitation). */
  forms(): number | null;
  close(): Promise<void>;
}

/** The world a client works in: a SQLite shop, readWrite, a host dialog that says yes. */
interface Shop {
  url: string;
  home: string;
  token: string;
  connectionId: string;
  count(): Promise<number>;
  asked(): Promise<number>;
}

async function withShop(run: (shop: Shop) => Promise<void>): Promise<void> {
  await using fixture = await openFixture("sqlite");
  await using dialog = await recordingDialog(0);
  const saved = savedConnection(fixture, "Shop", {
    externalAccess: "readWrite",
  });
  await using server = await serverWith([saved], {
    hostDialog: dialog.setting,
  });
  const { plaintext } = await server.mint("readWrite");
  await run({
    url: server.url,
    home: server.home,
    token: plaintext,
    connectionId: saved.id,
    async count() {
      const rows = await fixture.admin("select count(*) as n from authors");
      return Number((rows[0] as { n: unknown }).n);
    },
    async asked() {
      return (await dialog.asked()).length;
    },
  });
}

/**
 * Wrap an SDK transport: every message received is checked, every message
 * sent recorded; `pin` rewrites the version a v1 client offers in
 * `initialize` (it always offers its latest).
 */
function checked<T extends object>(
  inner: T,
  check: SchemaCheck,
  pin?: string,
): T {
  let handler: ((message: unknown, extra?: unknown) => void) | undefined;
  return new Proxy(inner, {
    get(target, key) {
      if (key === "send") {
        return (message: JsonObject, options?: unknown) => {
          let out = message;
          if (pin !== undefined && message.method === "initialize") {
            out = {
              ...message,
              params: { ...message.params as JsonObject, protocolVersion: pin },
            };
          }
          check.sent(out);
          // deno-lint-ignore no-explicit-any
          return (target as any).send(out, options);
        };
      }
      if (key === "onmessage") return handler;
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
    set(target, key, value) {
      if (key === "onmessage") {
        handler = value;
        // deno-lint-ignore no-explicit-any
        (target as any).onmessage = (message: unknown, extra?: unknown) => {
          check.received(message);
          handler?.(message, extra);
        };
        return true;
      }
      return Reflect.set(target, key, value, target);
    },
  });
}

/**
 * An SDK's transport to the shop: HTTP with the shop's token, or the bridge
 * spawned in the shop's home (v1 and v2 take the same options).
 */
function sdkTransport<H, S>(
  shop: Shop,
  transport: Transport,
  Http: new (
    url: URL,
    options: { requestInit: { headers: Record<string, string> } },
  ) => H,
  Stdio: new (
    options: {
      command: string;
      args: string[];
      env: Record<string, string>;
      stderr: "ignore";
    },
  ) => S,
): H | S {
  return transport === "http"
    ? new Http(new URL(shop.url), {
      requestInit: { headers: { authorization: `Bearer ${shop.token}` } },
    })
    : new Stdio({
      command: Deno.execPath(),
      args: BRIDGE,
      env: { DBPORT_HOME: shop.home },
      stderr: "ignore",
    });
}

/** The approval form's answer: yes. */
const ACCEPT = { action: "accept", content: { approved: true } };

async function sdkV2(
  shop: Shop,
  transport: Transport,
  mode: "auto" | { pin: string },
  check: SchemaCheck,
): Promise<Session> {
  const client = new ClientV2({ name: "matrix-v2", version: "1.0.0" }, {
    capabilities: { elicitation: { form: {} } },
    versionNegotiation: { mode },
  });
  let forms = 0;
  client.setRequestHandler(
    "elicitation/create",
    // deno-lint-ignore no-explicit-any
    () => (forms++, Promise.resolve(ACCEPT as any)),
  );
  await client.connect(
    checked(sdkTransport(shop, transport, HttpV2, StdioV2), check),
  );
  assertEquals(client.getNegotiatedProtocolVersion(), "2026-07-28");
  return {
    async listTools() {
      return (await client.listTools()).tools.map((tool) => tool.name);
    },
    async readResource(uri) {
      const read = await client.readResource({ uri }, {
        cacheMode: "bypass",
        // deno-lint-ignore no-explicit-any
      } as any);
      return (read.contents[0] as { text: string }).text;
    },
    async getPrompt(name, args) {
      const got = await client.getPrompt({ name, arguments: args });
      return (got.messages[0]!.content as { text: string }).text;
    },
    async call(args) {
      const result = await client.callTool(
        { name: "execute_query", arguments: args },
        { onprogress: () => {} },
      );
      assert(!result.isError, JSON.stringify(result));
      return result.structuredContent as JsonObject;
    },
    forms: () => forms,
    async close() {
      await client.close();
    },
  };
}

async function sdkV1(
  shop: Shop,
  transport: Transport,
  version: "2025-11-25" | "2025-06-18",
  check: SchemaCheck,
): Promise<Session> {
  const client = new ClientV1({ name: "matrix-v1", version: "1.0.0" }, {
    capabilities: { elicitation: {} },
  });
  let forms = 0;
  client.setRequestHandler(
    ElicitRequestSchema,
    () => (forms++, Promise.resolve(ACCEPT)),
  );
  const pin = version === "2025-11-25" ? undefined : version;
  await client.connect(
    checked(sdkTransport(shop, transport, HttpV1, StdioV1), check, pin),
  );
  return {
    async listTools() {
      return (await client.listTools()).tools.map((tool: { name: string }) =>
        tool.name
      );
    },
    async readResource(uri) {
      const read = await client.readResource({ uri });
      return (read.contents[0] as { text: string }).text;
    },
    async getPrompt(name, args) {
      const got = await client.getPrompt({ name, arguments: args });
      return (got.messages[0]!.content as { text: string }).text;
    },
    async call(args) {
      const result = await client.callTool(
        { name: "execute_query", arguments: args },
        CallToolResultSchema,
        { onprogress: () => {} },
      );
      assert(!result.isError, JSON.stringify(result));
      return result.structuredContent as JsonObject;
    },
    forms: () => forms,
    async close() {
      await client.close();
    },
  };
}

/** The Inspector CLI: one process per call, over HTTP or spawning the bridge. */
function inspector(
  shop: Shop,
  transport: Transport,
  check: SchemaCheck,
  proxyUrl: string,
  dir: string,
): Session {
  let calls = 0;
  async function run(options: string[]): Promise<JsonObject> {
    const report = `${dir}/tap-${++calls}.json`;
    const target = transport === "http"
      ? [
        proxyUrl,
        ...options,
        "--header",
        `Authorization: Bearer ${shop.token}`,
      ]
      : [
        Deno.execPath(),
        ...options,
        "--",
        "run",
        `--config=${ROOT}deno.dev.json`,
        "--allow-read",
        "--allow-write",
        "--allow-run",
        "--allow-env",
        TAP,
        report,
        Deno.execPath(),
        ...BRIDGE,
      ];
    // The CLI reads `../package.json` relative to its working directory.
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        `--config=${ROOT}deno.dev.json`,
        "-A",
        INSPECTOR,
        ...target,
      ],
      cwd: `${dir}/cwd`,
      env: { DBPORT_HOME: shop.home, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(stdout);
    assertEquals(code, 0, out + new TextDecoder().decode(stderr));
    if (transport === "bridge") {
      const tapped = JSON.parse(await Deno.readTextFile(report));
      check.problems.push(...tapped.problems);
      check.checked += tapped.checked;
      check.seen.push(...tapped.seen);
      for (const version of tapped.versions) check.versions.add(version);
    }
    return JSON.parse(out);
  }
  return {
    async listTools() {
      const { tools } = await run(["--method", "tools/list"]);
      return (tools as { name: string }[]).map((tool) => tool.name);
    },
    async readResource(uri) {
      const { contents } = await run([
        "--method",
        "resources/read",
        "--uri",
        uri,
      ]);
      return (contents as { text: string }[])[0]!.text;
    },
    async getPrompt(name, args) {
      const { messages } = await run([
        "--method",
        "prompts/get",
        "--prompt-name",
        name,
        "--prompt-args",
        ...Object.entries(args).map(([key, value]) => `${key}=${value}`),
      ]);
      return (messages as { content: { text: string } }[])[0]!.content.text;
    },
    async call(args) {
      const result = await run([
        "--method",
        "tools/call",
        "--tool-name",
        "execute_query",
        "--tool-arg",
        ...Object.entries(args).map(([key, value]) => `${key}=${value}`),
        // The CLI has no progress callback; a token in _meta makes the
        // server send progress, which the proxy or tap sees and checks.
        "--tool-metadata",
        `progressToken=matrix-${calls}`,
      ]);
      assert(!result.isError, JSON.stringify(result));
      return result.structuredContent as JsonObject;
    },
    forms: () => null,
    close: () => Promise.resolve(),
  };
}

/** Progress notifications the check has seen so far. */
function progressSeen(check: SchemaCheck): number {
  return check.seen.filter((m) => m === "notifications/progress").length;
}

/**
 * The walk every client takes. Progress is counted on the wire: the SDKs run
 * notification handlers a microtask after the response they belong to, so
 * over stdio (one chunk) the last ones may miss `onprogress`
 * (bridge_test.ts checks their order on raw stdio).
 */
async function walk(
  shop: Shop,
  session: Session,
  check: SchemaCheck,
  forms: number | null,
): Promise<void> {
  try {
    const tools = await session.listTools();
    assert(tools.includes("execute_query"), JSON.stringify(tools));

    const schema = JSON.parse(
      await session.readResource(
        `dbport://connections/${shop.connectionId}/schema`,
      ),
    );
    assert(
      JSON.stringify(schema).includes("authors"),
      JSON.stringify(schema),
    );

    const prompt = await session.getPrompt("explain_schema", {
      connection: "Shop",
    });
    assertStringIncludes(prompt, "authors");

    const progressBefore = progressSeen(check);
    const read = await session.call({
      connection_id: shop.connectionId,
      query: "select count(*) as n from authors",
    });
    assertEquals(read.rows, [[2]]);
    assert(progressSeen(check) > progressBefore, "no progress notification");

    const before = { rows: await shop.count(), asked: await shop.asked() };
    const write = await session.call({
      connection_id: shop.connectionId,
      query: "insert into authors (name) values ('Grace')",
    });
    assertEquals(write.rows_affected, 1, JSON.stringify(write));
    assertEquals(await shop.count(), before.rows + 1);
    // A client is asked by form where its era allows (modern
    // input_required, or the bridge's elicitation for a legacy stdio
    // client; a legacy HTTP session is asked on the host only), and a
    // readWrite token is confirmed on the host as well.
    assertEquals(session.forms(), forms);
    assertEquals(await shop.asked(), before.asked + 1);
  } finally {
    await session.close();
  }
}

const SDK_CLIENTS: {
  name: string;
  version: string;
  /** Whether the server asks this client by form over HTTP (the bridge always does). */
  formOverHttp: boolean;
  open: (s: Shop, t: Transport, c: SchemaCheck) => Promise<Session>;
}[] = [
  {
    name: "SDK v2, pinned 2026-07-28",
    version: "2026-07-28",
    formOverHttp: true,
    open: (s, t, c) => sdkV2(s, t, { pin: "2026-07-28" }, c),
  },
  {
    name: "SDK v2, auto",
    version: "2026-07-28",
    formOverHttp: true,
    open: (s, t, c) => sdkV2(s, t, "auto", c),
  },
  {
    name: "SDK v1, 2025-11-25",
    version: "2025-11-25",
    formOverHttp: false,
    open: (s, t, c) => sdkV1(s, t, "2025-11-25", c),
  },
  {
    name: "SDK v1, 2025-06-18",
    version: "2025-06-18",
    formOverHttp: false,
    open: (s, t, c) => sdkV1(s, t, "2025-06-18", c),
  },
];

for (const transport of ["http", "bridge"] as const) {
  for (const client of SDK_CLIENTS) {
    Deno.test(`client matrix: ${client.name} over ${transport}`, async () => {
      try {
        await withShop(async (shop) => {
          const check = new SchemaCheck();
          const session = await client.open(shop, transport, check);
          const forms = transport === "bridge" || client.formOverHttp ? 1 : 0;
          await walk(shop, session, check, forms);
          await check.assertValid();
          assert(check.checked >= 5, `only ${check.checked} messages checked`);
          assertEquals([...check.versions], [client.version]);
        });
      } finally {
        // The SDKs' stdio close leaves a 2 s timer it never clears.
        if (transport === "bridge") await sleep(2_100);
      }
    });
  }

  Deno.test(`client matrix: MCP Inspector CLI over ${transport}`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "dbport-inspector-" });
    await Deno.mkdir(`${dir}/cwd`);
    await Deno.writeTextFile(`${dir}/package.json`, "{}");
    try {
      await withShop(async (shop) => {
        await using proxy = wireProxy(shop.url);
        const check = transport === "http" ? proxy.check : new SchemaCheck();
        await walk(
          shop,
          inspector(shop, transport, check, proxy.url, dir),
          check,
          null,
        );
        await check.assertValid();
        assert(check.checked >= 10, `only ${check.checked} messages checked`);
        assertEquals([...check.versions], ["2025-11-25"]);
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}
