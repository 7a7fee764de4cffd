/**
 * The write path end to end: consent through the official SDK v2 client's
 * elicitation handler (it answers `input_required` itself), through the host
 * dialog (a `command` that records what it was asked), each row of the
 * docs/wire.md "Asking the user", and the gates of a write.
 */

import type { Client } from "@modelcontextprotocol/client";
import { assert, assertEquals, assertRejects } from "@std/assert";
import type { SavedConnection } from "../../lib/app/connections.ts";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { recordingDialog } from "../_dialog.ts";
import { type Fixture, openFixture } from "../_db.ts";
import { assertSchema } from "../_schema.ts";
import { sdkClient } from "../_sdk.ts";
import {
  initializeSession,
  modernRequest,
  postLegacy,
  postModern,
  type TestServer,
} from "../_server.ts";

type Elicit = (params: JsonObject) => JsonObject | Promise<JsonObject>;

const ACCEPT: Elicit = () => ({
  action: "accept",
  content: { approved: true },
});

interface Setup extends AsyncDisposable {
  fixture: Fixture;
  server: TestServer;
  saved: SavedConnection;
  clock: { now: number };
}

async function setup(
  policy: Partial<SavedConnection>,
  settings: JsonObject,
): Promise<Setup> {
  const fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Shop", {
    externalAccess: "readWrite",
    ...policy,
  });
  const clock = { now: Date.now() };
  const server = await serverWith([saved], settings, {
    now: () => clock.now,
  });
  return {
    fixture,
    server,
    saved,
    clock,
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await fixture[Symbol.asyncDispose]();
    },
  };
}

/** An SDK v2 client, pinned to 2026-07-28, declaring form elicitation. */
function sdk(
  url: string,
  token: string,
  elicit: Elicit | null,
  fetchOverride?: typeof fetch,
): Promise<Client> {
  return sdkClient(url, token, {
    name: "approver",
    ...(elicit === null ? {} : { elicit }),
    ...(fetchOverride === undefined ? {} : { fetch: fetchOverride }),
  });
}

async function count(fixture: Fixture, table = "authors"): Promise<number> {
  const rows = await fixture.admin(`select count(*) as n from ${table}`);
  return Number((rows[0] as { n: unknown }).n);
}

function errorText(
  result: { isError?: boolean | undefined; content?: unknown },
): string {
  assertEquals(result.isError, true, JSON.stringify(result));
  return (result.content as { text: string }[])[0]!.text;
}

const INSERT = "insert into authors (name) values ('Grace')";

Deno.test("SDK v2: an accepted form runs a write; readWrite is confirmed twice, by form and host dialog", async () => {
  await using dialog = await recordingDialog(0);
  await using t = await setup({}, { hostDialog: dialog.setting });
  const token = await t.server.mint("readWrite", { name: "agent" });
  const forms: JsonObject[] = [];
  const client = await sdk(t.server.url, token.plaintext, (params) => {
    forms.push(params);
    return ACCEPT(params);
  });
  try {
    const result = await client.callTool({
      name: "execute_query",
      arguments: { connection_id: t.saved.id, query: INSERT },
    });
    assertEquals(result.isError, undefined, JSON.stringify(result));
    assertEquals(
      (result.structuredContent as JsonObject).rows_affected,
      1,
    );
    assertEquals(await count(t.fixture), 3);
    // The form: exactly the wire reference's shape, the statement verbatim.
    assertEquals(forms.length, 1);
    const form = forms[0]!;
    assertEquals(form.mode, "form");
    assert(String(form.message).startsWith('Allow a query on "Shop"?'));
    assertEquals(form.requestedSchema, {
      type: "object",
      properties: {
        approved: {
          type: "boolean",
          title: "Approve",
          // The dry run's count first, then the statement verbatim.
          description: `Changes 1 row of authors\n\n${INSERT}`,
        },
      },
      required: ["approved"],
    });
    // ...and the host dialog asked as well: a readWrite token is asked twice.
    const asked = await dialog.asked();
    assertEquals(asked.length, 1);
    assertEquals(asked[0]!.kind, "write");
    assertEquals(asked[0]!.statement, INSERT);
    assertEquals(asked[0]!.connection, { id: t.saved.id, name: "Shop" });
    assertEquals(asked[0]!.client, "approver");
    assertEquals(asked[0]!.token, "agent");
    assertEquals(asked[0]!.safeMode, "alert");
  } finally {
    await client.close();
  }
});

Deno.test("SDK v2: a fullAccess token's accepted form stands in for the host dialog", async () => {
  await using dialog = await recordingDialog(1);
  await using t = await setup({}, { hostDialog: dialog.setting });
  const token = await t.server.mint("fullAccess");
  const client = await sdk(t.server.url, token.plaintext, ACCEPT);
  try {
    const result = await client.callTool({
      name: "execute_query",
      arguments: { connection_id: t.saved.id, query: INSERT },
    });
    assertEquals(result.isError, undefined, JSON.stringify(result));
    assertEquals(await count(t.fixture), 3);
    // The dialog would have denied; it was never asked.
    assertEquals(await dialog.asked(), []);
  } finally {
    await client.close();
  }
});

for (
  const [name, answer] of [
    ["decline", { action: "decline" }],
    ["cancel", { action: "cancel" }],
    ["approved: false", { action: "accept", content: { approved: false } }],
  ] as const
) {
  Deno.test(`SDK v2: a form answered "${name}" is the tool error denied and nothing runs`, async () => {
    await using dialog = await recordingDialog(0);
    await using t = await setup({}, { hostDialog: dialog.setting });
    const token = await t.server.mint("fullAccess");
    const client = await sdk(t.server.url, token.plaintext, () => answer);
    try {
      const result = await client.callTool({
        name: "execute_query",
        arguments: { connection_id: t.saved.id, query: INSERT },
      });
      assertEquals(
        errorText(result),
        'denied: the user did not approve a query on "Shop"',
      );
      assertEquals(await count(t.fixture), 2);
      assertEquals(await dialog.asked(), []);
    } finally {
      await client.close();
    }
  });
}

/** A fetch that rewrites the JSON body of the approval retry. */
function rewritingRetry(
  rewrite: (params: JsonObject) => void,
  before?: () => void,
): typeof fetch {
  return (input, init) => {
    if (typeof init?.body === "string") {
      const body = JSON.parse(init.body);
      if (body.params?.requestState !== undefined) {
        before?.();
        rewrite(body.params);
        init = { ...init, body: JSON.stringify(body) };
      }
    }
    return fetch(input, init);
  };
}

for (
  const [name, rewrite, message] of [
    [
      "a tampered requestState",
      (params: JsonObject) => {
        const state = String(params.requestState);
        params.requestState = state.slice(0, 10) +
          (state[10] === "A" ? "B" : "A") + state.slice(11);
      },
      /requestState (was altered|is malformed)/,
    ],
    [
      "changed arguments",
      (params: JsonObject) => {
        (params.arguments as JsonObject).query =
          "insert into authors (name) values ('Mallory')";
      },
      /requestState was issued for other arguments/,
    ],
  ] as const
) {
  Deno.test(`SDK v2: a retry with ${name} is -32602 and nothing runs`, async () => {
    await using t = await setup({}, { hostDialog: "deny" });
    const token = await t.server.mint("fullAccess");
    const client = await sdk(
      t.server.url,
      token.plaintext,
      ACCEPT,
      rewritingRetry(rewrite),
    );
    try {
      const error = await assertRejects(() =>
        client.callTool({
          name: "execute_query",
          arguments: { connection_id: t.saved.id, query: INSERT },
        })
      );
      assertEquals((error as { code?: number }).code, -32602);
      assert(message.test((error as Error).message), (error as Error).message);
      assertEquals(await count(t.fixture), 2);
    } finally {
      await client.close();
    }
  });
}

Deno.test("SDK v2: a requestState older than 5 minutes is -32602 (injected clock)", async () => {
  await using t = await setup({}, { hostDialog: "deny" });
  const token = await t.server.mint("fullAccess");
  const client = await sdk(
    t.server.url,
    token.plaintext,
    ACCEPT,
    rewritingRetry(() => {}, () => {
      t.clock.now += 5 * 60_000 + 1;
    }),
  );
  try {
    const error = await assertRejects(() =>
      client.callTool({
        name: "execute_query",
        arguments: { connection_id: t.saved.id, query: INSERT },
      })
    );
    assertEquals((error as { code?: number }).code, -32602);
    assert(/expired/.test((error as Error).message));
    assertEquals(await count(t.fixture), 2);
  } finally {
    await client.close();
  }
});

/** One raw modern tools/call with a token and capabilities. */
function callRaw(
  t: Setup,
  token: string,
  args: JsonObject,
  extra: JsonObject = {},
  capabilities: JsonObject = { elicitation: {} },
  name = "execute_query",
) {
  return postModern(
    t.server.url,
    modernRequest(
      "tools/call",
      { name, arguments: args, ...extra },
      crypto.randomUUID(),
      { "io.modelcontextprotocol/clientCapabilities": capabilities },
    ),
    { authorization: `Bearer ${token}` },
  );
}

Deno.test("result state: input_required carries the form and a requestState, valid against the 2026-07-28 schema", async () => {
  await using t = await setup({}, { hostDialog: "deny" });
  const token = await t.server.mint("fullAccess");
  const statement = "insert into authors (name)\nvalues ('Grace')";
  const first = await callRaw(t, token.plaintext, {
    connection_id: t.saved.id,
    query: statement,
  });
  assertEquals(first.status, 200);
  const result = first.json.result;
  assertSchema("2026-07-28", "InputRequiredResult", result);
  assertEquals(result.resultType, "input_required");
  assertEquals(Object.keys(result.inputRequests), ["approve_statement"]);
  const form = result.inputRequests.approve_statement;
  assertEquals(form.method, "elicitation/create");
  // The write's preview, then the statement verbatim, line breaks kept.
  assertEquals(
    form.params.requestedSchema.properties.approved.description,
    `Changes 1 row of authors\n\n${statement}`,
  );
  assertEquals(typeof result.requestState, "string");
  // Not cached, and no cache hint on a tools/call result.
  assertEquals(result.ttlMs, undefined);

  // A valid state without an answer asks again, with a new state.
  const again = await callRaw(t, token.plaintext, {
    connection_id: t.saved.id,
    query: statement,
  }, { requestState: result.requestState });
  assertEquals(again.json.result.resultType, "input_required");
  assert(again.json.result.requestState !== result.requestState);

  // An unknown action is no answer either.
  const unknown = await callRaw(t, token.plaintext, {
    connection_id: t.saved.id,
    query: statement,
  }, {
    requestState: result.requestState,
    inputResponses: { approve_statement: { action: "maybe" } },
  });
  assertEquals(unknown.json.result.resultType, "input_required");

  // Accepted: complete, and the state cannot be used twice.
  const retry = {
    requestState: result.requestState,
    inputResponses: {
      approve_statement: { action: "accept", content: { approved: true } },
    },
  };
  const done = await callRaw(t, token.plaintext, {
    connection_id: t.saved.id,
    query: statement,
  }, retry);
  assertEquals(done.json.result.resultType, "complete");
  assertEquals(done.json.result.structuredContent.rows_affected, 1);
  const replay = await callRaw(t, token.plaintext, {
    connection_id: t.saved.id,
    query: statement,
  }, retry);
  assertEquals([replay.status, replay.json.error.code], [400, -32602]);
  assert(/already answered/.test(replay.json.error.message));
  assertEquals(await count(t.fixture), 3);
});

Deno.test("result state: another token's requestState and a malformed one are -32602", async () => {
  await using t = await setup({}, { hostDialog: "deny" });
  const one = await t.server.mint("fullAccess");
  const two = await t.server.mint("fullAccess");
  const args = { connection_id: t.saved.id, query: INSERT };
  const first = await callRaw(t, one.plaintext, args);
  const retry = {
    requestState: first.json.result.requestState,
    inputResponses: {
      approve_statement: { action: "accept", content: { approved: true } },
    },
  };
  const foreign = await callRaw(t, two.plaintext, args, retry);
  assertEquals(foreign.json.error.code, -32602);
  assert(/belongs to another client/.test(foreign.json.error.message));
  const garbage = await callRaw(t, one.plaintext, args, {
    ...retry,
    requestState: "not-a-state",
  });
  assertEquals(garbage.json.error.code, -32602);
  assertEquals(await count(t.fixture), 2);
});

Deno.test("result state: no elicitation declared blocks on the host dialog (approve and deny)", async () => {
  for (const code of [0, 1] as const) {
    await using dialog = await recordingDialog(code);
    await using t = await setup({}, { hostDialog: dialog.setting });
    const token = await t.server.mint("readWrite");
    const client = await sdk(t.server.url, token.plaintext, null);
    try {
      const result = await client.callTool({
        name: "execute_query",
        arguments: { connection_id: t.saved.id, query: INSERT },
      });
      if (code === 0) {
        assertEquals(result.isError, undefined, JSON.stringify(result));
        assertEquals(await count(t.fixture), 3);
      } else {
        assertEquals(
          errorText(result),
          'denied: the user did not approve a query on "Shop"',
        );
        assertEquals(await count(t.fixture), 2);
      }
      assertEquals((await dialog.asked()).length, 1);
    } finally {
      await client.close();
    }
  }
});

Deno.test("result state: a legacy client is asked on the host dialog, never input_required", async () => {
  await using dialog = await recordingDialog(0);
  await using t = await setup({}, { hostDialog: dialog.setting });
  const token = await t.server.mint("readWrite");
  const authorization = `Bearer ${token.plaintext}`;
  const session = await initializeSession(t.server.url, "2025-11-25", {
    authorization,
  });
  const answer = await postLegacy(t.server.url, {
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: {
      name: "execute_query",
      arguments: { connection_id: t.saved.id, query: INSERT },
    },
  }, {
    authorization,
    "mcp-session-id": session,
    "mcp-protocol-version": "2025-11-25",
  });
  assertEquals(answer.json.result.resultType, undefined);
  assertEquals(answer.json.result.structuredContent.rows_affected, 1);
  assertEquals((await dialog.asked()).length, 1);
});

Deno.test("Safe Mode: silent runs writes unasked, but a dangerous write asks", async () => {
  await using dialog = await recordingDialog(0);
  await using t = await setup({ safeMode: "silent" }, {
    hostDialog: dialog.setting,
  });
  const token = await t.server.mint("readWrite");
  const args = { connection_id: t.saved.id };
  const plain = await callRaw(
    t,
    token.plaintext,
    { ...args, query: INSERT },
    {},
    {},
  );
  assertEquals(plain.json.result.structuredContent.rows_affected, 1);
  assertEquals((await dialog.asked()).length, 0);
  const dangerous = await callRaw(
    t,
    token.plaintext,
    {
      ...args,
      query: "update authors set born = null",
    },
    {},
    {},
  );
  assertEquals(dangerous.json.result.structuredContent.rows_affected, 3);
  const asked = await dialog.asked();
  assertEquals(asked.length, 1);
  assert(
    (asked[0]!.reasons as string[]).includes(
      "the statement changes every row (no WHERE)",
    ),
  );
});

Deno.test("Safe Mode silent: a write that deletes every row by its effect (WHERE true) is rolled back, asked with its preview, and runs once accepted; declined, nothing changes", async () => {
  await using t = await setup({ safeMode: "silent" }, { hostDialog: "deny" });
  const token = await t.server.mint("fullAccess");
  const forms: JsonObject[] = [];
  let answer = false;
  const client = await sdk(t.server.url, token.plaintext, (params) => {
    forms.push(params);
    return { action: "accept", content: { approved: answer } };
  });
  const query = "update authors set born = 1900 where true";
  try {
    const declined = await client.callTool({
      name: "execute_query",
      arguments: { connection_id: t.saved.id, query },
    });
    assert(/denied/i.test(errorText(declined)), errorText(declined));
    const borns = async () =>
      (await t.fixture.admin("select born from authors order by id")).map((
        row,
      ) => (row as { born: unknown }).born);
    const before = await borns();
    assert(!before.every((born) => born === 1900));
    answer = true;
    const done = await client.callTool({
      name: "execute_query",
      arguments: { connection_id: t.saved.id, query },
    });
    assertEquals(done.isError, undefined, JSON.stringify(done));
    assertEquals((done.structuredContent as JsonObject).rows_affected, 2);
    assertEquals(await borns(), [1900, 1900]);
    // Asked once per call, saying why and what the dry run changes.
    assertEquals(forms.length, 2);
    const schema = forms[1]!.requestedSchema as {
      properties: { approved: { description: string } };
    };
    const description = schema.properties.approved.description;
    assert(description.startsWith("Changes 2 rows of authors"), description);
    assert(
      /it changes every row of authors \(2 rows\)/.test(
        String(forms[1]!.message),
      ),
      String(forms[1]!.message),
    );
  } finally {
    await client.close();
  }
});

Deno.test("Safe Mode alertFull asks for reads", async () => {
  await using dialog = await recordingDialog(1);
  await using t = await setup({ safeMode: "alertFull" }, {
    hostDialog: dialog.setting,
  });
  const read = await callRaw(
    t,
    t.server.token!,
    {
      connection_id: t.saved.id,
      query: "select 1",
    },
    {},
    {},
  );
  assertEquals(
    read.json.result.content[0].text,
    'denied: the user did not approve a query on "Shop"',
  );
  assertEquals((await dialog.asked())[0]!.kind, "read");
});

Deno.test("the gates of a write: scope, external access, Safe Mode readOnly, destructive, file reach", async () => {
  await using fixture = await openFixture("sqlite");
  const readOnly = savedConnection(fixture, "Ro");
  const fenced = savedConnection(fixture, "Fenced", {
    externalAccess: "readWrite",
    safeMode: "readOnly",
  });
  const open = savedConnection(fixture, "Open", {
    externalAccess: "readWrite",
    safeMode: "silent",
  });
  await using server = await serverWith([readOnly, fenced, open], {
    hostDialog: "deny",
  });
  const writer = await server.mint("readWrite");
  const admin = await server.mint("fullAccess");
  const call = (
    token: string,
    id: string,
    query: string,
    name = "execute_query",
  ) =>
    postModern(
      server.url,
      modernRequest("tools/call", {
        name,
        arguments: { connection_id: id, query },
      }, crypto.randomUUID()),
      { authorization: `Bearer ${token}` },
    );
  // A read-only token: -33007 naming tools:write.
  const scope = await call(server.token!, open.id, INSERT);
  assertEquals([scope.status, scope.json.error.code], [403, -33007]);
  assertEquals(scope.json.error.data.requiredScopes, ["tools:write"]);
  assert(
    scope.headers.get("www-authenticate")!.includes("insufficient_scope"),
  );
  const text = (
    answer: { json: { result: { content: { text: string }[] } } },
  ) => answer.json.result.content[0]!.text;
  assertEquals(
    text(await call(writer.plaintext, readOnly.id, INSERT)),
    "denied: this connection is read only for external clients",
  );
  assert(
    text(await call(writer.plaintext, fenced.id, INSERT)).startsWith(
      'denied: the Safe Mode of "Fenced" is "readOnly"',
    ),
  );
  assertEquals(
    text(await call(admin.plaintext, open.id, "drop table books")),
    "denied: this statement drops or truncates data; use confirm_destructive_operation for it",
  );
  // A client that cannot call confirm_destructive_operation is not sent there.
  const told = text(await call(writer.plaintext, open.id, "drop table books"));
  assert(!told.includes("use confirm_destructive_operation"), told);
  assert(told.includes("ask the user to run it in the app"), told);
  assert(
    text(await call(admin.plaintext, open.id, "attach database 'x' as y"))
      .startsWith("denied: the statement reaches the file system or runs code"),
  );
  assertEquals(
    text(await call(admin.plaintext, open.id, "select 1; select 2")),
    "invalid_argument: query holds 2 statements; send one statement at a time",
  );
  // confirm_destructive_operation: admin only, destructive only.
  const notAdmin = await call(
    writer.plaintext,
    open.id,
    "drop table books",
    "confirm_destructive_operation",
  );
  assertEquals([notAdmin.status, notAdmin.json.error.code], [403, -33007]);
  assertEquals(notAdmin.json.error.data.requiredScopes, ["admin"]);
  assert(
    text(
      await call(
        admin.plaintext,
        open.id,
        INSERT,
        "confirm_destructive_operation",
      ),
    ).startsWith(
      "invalid_argument: this tool only runs destructive statements",
    ),
  );
  // Even silent Safe Mode asks for a destructive statement: the dialog refuses.
  assert(
    text(
      await call(
        admin.plaintext,
        open.id,
        "drop table books",
        "confirm_destructive_operation",
      ),
    ).startsWith(
      'denied: a destructive statement on "Open" needs the user\'s approval',
    ),
  );
  assertEquals(await count(fixture, "books"), 2);
});

Deno.test("SDK v2: confirm_destructive_operation drops a table after the user's yes", async () => {
  await using t = await setup({ safeMode: "silent" }, { hostDialog: "deny" });
  const token = await t.server.mint("fullAccess");
  const forms: JsonObject[] = [];
  const client = await sdk(t.server.url, token.plaintext, (params) => {
    forms.push(params);
    return ACCEPT(params);
  });
  try {
    const tools = await client.listTools();
    const tool = tools.tools.find((x) =>
      x.name === "confirm_destructive_operation"
    );
    assertEquals(tool?.annotations?.destructiveHint, true);
    const result = await client.callTool({
      name: "confirm_destructive_operation",
      arguments: { connection_id: t.saved.id, query: "DROP TABLE kinds" },
    });
    assertEquals(result.isError, undefined, JSON.stringify(result));
    assert(
      String(forms[0]!.message).startsWith(
        'Allow a destructive statement on "Shop"?',
      ),
    );
    const left = await t.fixture.admin(
      "select count(*) as n from sqlite_schema where name = 'kinds'",
    );
    assertEquals(Number((left[0] as { n: unknown }).n), 0);
  } finally {
    await client.close();
  }
});

Deno.test("askEachTime: the first use asks, the grant is remembered per token", async () => {
  await using dialog = await recordingDialog(0);
  await using t = await setup({ aiPolicy: "askEachTime", safeMode: "silent" }, {
    hostDialog: dialog.setting,
  });
  const list = (token: string) =>
    callRaw(t, token, { connection_id: t.saved.id }, {}, {}, "list_tables");
  const one = await t.server.mint("readOnly");
  const two = await t.server.mint("readOnly");
  assertEquals((await list(one.plaintext)).json.result.isError, undefined);
  assertEquals((await list(one.plaintext)).json.result.isError, undefined);
  assertEquals((await dialog.asked()).map((a) => a.kind), ["connection"]);
  // A first use by a statement asks for the connection too, with its tier.
  const three = await t.server.mint("readOnly");
  const read = await callRaw(
    t,
    three.plaintext,
    {
      connection_id: t.saved.id,
      query: "SELECT 1",
    },
    {},
    {},
  );
  assertEquals(read.json.result.isError, undefined);
  const asked = await dialog.asked();
  assertEquals(asked.at(-1)!.kind, "connection");
  assertEquals(asked.at(-1)!.tier, "read");
  // Another token is another client: asked again.
  assertEquals((await list(two.plaintext)).json.result.isError, undefined);
  assertEquals((await dialog.asked()).length, 3);
});
