/**
 * Resources beyond one connection: paging over 120 connections, consent for
 * an `askEachTime` connection (input_required through the SDK v2 client),
 * and legacy clients (answers checked against their own revision's schema).
 */

import { assert, assertEquals } from "@std/assert";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { openFixture } from "../_db.ts";
import { recordingDialog } from "../_dialog.ts";
import { SchemaCheck, sdkClient, wireCode } from "../_sdk.ts";
import {
  initializeSession,
  modernRequest,
  postLegacy,
  postModern,
} from "../_server.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

Deno.test("resources/list over 120 connected connections walks three pages; a cursor on another method is -32602", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = Array.from(
    { length: 120 },
    (_, i) => savedConnection(fixture, `Shop ${String(i).padStart(3, "0")}`),
  );
  await using server = await serverWith(saved);
  // Reading a schema connects its connection; connected ones are listed.
  for (const connection of saved) {
    const read = await postModern(
      server.url,
      modernRequest("resources/read", {
        uri: `dbport://connections/${connection.id}/schema`,
      }, 1),
    );
    assertEquals(read.status, 200, read.text);
  }
  const uris: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const answer = await postModern(
      server.url,
      modernRequest(
        "resources/list",
        cursor === undefined ? {} : { cursor },
        pages + 10,
      ),
    );
    assertEquals(answer.status, 200, answer.text);
    const result = answer.json.result;
    assert(result.resources.length <= 50);
    uris.push(...result.resources.map((r: Any) => r.uri));
    if (pages === 0) {
      // The first page's cursor replayed on another method is refused.
      const other = await postModern(
        server.url,
        modernRequest("prompts/list", { cursor: result.nextCursor }, 99),
      );
      assertEquals(other.status, 400);
      assertEquals(other.json.error.code, -32602);
      assert(other.json.error.message.includes("another method"));
    }
    cursor = result.nextCursor;
    pages++;
  } while (cursor !== undefined);
  assertEquals(pages, 3);
  // The connections list, 120 schemas, the results guide and the three
  // MCP Apps views.
  assertEquals(uris.length, 125);
  assertEquals(new Set(uris).size, 125);
  assertEquals(uris[0], "dbport://connections");
});

Deno.test("resources/read of an askEachTime connection asks first: input_required, then the content", async () => {
  await using fixture = await openFixture("sqlite");
  await using dialog = await recordingDialog(0);
  const saved = savedConnection(fixture, "Careful", {
    aiPolicy: "askEachTime",
  });
  await using server = await serverWith([saved], {
    hostDialog: dialog.setting,
  });
  const uri = `dbport://connections/${saved.id}/schema`;
  // Raw: the first answer is input_required with the approval form.
  const first = await postModern(
    server.url,
    modernRequest("resources/read", { uri }, 1, {
      "io.modelcontextprotocol/clientCapabilities": {
        elicitation: { form: {} },
      },
    }),
  );
  assertEquals(first.json.result.resultType, "input_required", first.text);

  const forms: JsonObject[] = [];
  const check = new SchemaCheck();
  const client = await sdkClient(server.url, server.token!, {
    check,
    elicit: (params) => {
      forms.push(params);
      return { action: "accept", content: { approved: true } };
    },
  });
  try {
    const read = await client.readResource({ uri });
    const schema = JSON.parse((read.contents[0] as Any).text);
    assert(schema.tables.some((t: Any) => t.name === "books"));
    assertEquals(forms.length, 1);
    // A readOnly token's yes is confirmed on the host too.
    assertEquals((await dialog.asked()).length, 1);
    // Granted for this client now: no second question.
    await client.readResource({
      uri: `dbport://connections/${saved.id}/tables`,
    });
    assertEquals(forms.length, 1);
  } finally {
    await client.close();
  }
  await check.assertValid();

  // A client that declines is refused with -33007.
  const other = await server.mint("readOnly", { name: "other" });
  const declining = await sdkClient(server.url, other.plaintext, {
    elicit: () => ({ action: "decline" }),
  });
  try {
    const error = await declining.readResource({ uri }).catch((e) => e);
    assertEquals(wireCode(error), -33007);
  } finally {
    await declining.close();
  }
});

for (const version of ["2025-11-25", "2025-06-18"]) {
  Deno.test(`legacy ${version}: resources, prompts and completions answer in the legacy shape`, async () => {
    await using fixture = await openFixture("sqlite");
    const saved = savedConnection(fixture, "Shop");
    await using server = await serverWith([saved]);
    const session = await initializeSession(server.url, version);
    const headers = {
      "mcp-session-id": session,
      "mcp-protocol-version": version,
    };
    let id = 1;
    // postLegacy checks each answer against the JSON Schema of `version`.
    const call = async (method: string, params: JsonObject) => {
      const answer = await postLegacy(server.url, {
        jsonrpc: "2.0",
        id: id++,
        method,
        params,
      }, headers);
      assertEquals(answer.status, 200, answer.text);
      const result = answer.json.result;
      for (const modern of ["resultType", "ttlMs", "cacheScope"]) {
        assertEquals(result[modern], undefined, `${method} ${modern}`);
      }
      return result;
    };
    const uri = `dbport://connections/${saved.id}/schema`;
    const read = await call("resources/read", { uri });
    assert(JSON.parse(read.contents[0].text).tables.length >= 4);
    assertEquals(
      (await call("resources/list", {})).resources.map((r: Any) => r.uri),
      [
        "dbport://connections",
        uri,
        "dbport://docs/results",
        "ui://dbport/plan-tree",
        "ui://dbport/result-grid",
        "ui://dbport/table-card",
      ],
    );
    assertEquals(
      (await call("resources/templates/list", {})).resourceTemplates.length,
      4,
    );
    assertEquals((await call("prompts/list", {})).prompts.length, 5);
    const prompt = await call("prompts/get", {
      name: "explain_table",
      arguments: { connection: "Shop", table: "authors" },
    });
    assert(prompt.messages[0].content.text.includes("main.authors"));
    const completion = await call("completion/complete", {
      ref: { type: "ref/prompt", name: "explain_table" },
      argument: { name: "table", value: "au" },
      context: { arguments: { connection: "Shop" } },
    });
    assertEquals(completion.completion.values, ["authors"]);
  });
}
