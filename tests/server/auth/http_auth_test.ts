/**
 * Authentication over real HTTP (docs/wire.md "Authentication", "Authentication
 * lockout", "Protocol errors"): every 401/403/429 variant with its exact code,
 * `WWW-Authenticate` and `data`; each level's tools; the anonymous principal.
 */
import { assertEquals, assertStringIncludes } from "@std/assert";
import { saveSettings } from "../../../lib/serve.ts";
import { fixtureCatalog } from "../../_catalog.ts";
import { fakeClock } from "../../_clock.ts";
import { waitUntil } from "../../_wait.ts";
import {
  type Answer,
  modernRequest,
  postModern,
  startTestServer,
  type TestServer,
} from "../../_server.ts";

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

function callTool(
  t: TestServer,
  name: string,
  auth: Record<string, string | null>,
  id: number | string = 1,
): Promise<Answer> {
  return postModern(
    t.url,
    modernRequest("tools/call", { name, arguments: {} }, id),
    auth,
  );
}

async function visibleTools(
  t: TestServer,
  auth: Record<string, string | null>,
): Promise<string[]> {
  const answer = await postModern(t.url, modernRequest("tools/list"), auth);
  assertEquals(answer.status, 200, answer.text);
  return answer.json.result.tools.map((tool: { name: string }) => tool.name);
}

Deno.test("a request without Authorization is -33009 (401) with the realm challenge", async () => {
  await using t = await startTestServer();
  const answer = await postModern(
    t.url,
    modernRequest("tools/list", {}, "no-token"),
    { authorization: null },
  );
  assertEquals(answer.status, 401);
  assertEquals(answer.headers.get("www-authenticate"), 'Bearer realm="dbport"');
  assertEquals(answer.json.id, "no-token");
  assertEquals(answer.json.error.code, -33009);
  assertStringIncludes(answer.json.error.message, "Bearer");
});

Deno.test('an unknown token is -33009 (401) with error="invalid_token"', async () => {
  await using t = await startTestServer();
  for (
    const token of [
      "dbp_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
      "not-even-ours",
      t.token!.slice(0, -1) + (t.token!.endsWith("A") ? "B" : "A"),
    ]
  ) {
    const answer = await postModern(
      t.url,
      modernRequest("server/discover", {}, 7),
      bearer(token),
    );
    assertEquals(answer.status, 401, token);
    assertEquals(
      answer.headers.get("www-authenticate"),
      'Bearer error="invalid_token"',
    );
    assertEquals(answer.json.error.code, -33009);
    assertEquals(answer.json.id, 7);
  }
});

Deno.test('a revoked token is -33009 (401) with error="invalid_token"', async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const { plaintext, id } = await t.mint("readWrite");
  assertEquals((await callTool(t, "echo", bearer(plaintext))).status, 200);
  await t.server.tokens.revoke(id);
  await t.server.syncTokens();
  const answer = await callTool(t, "echo", bearer(plaintext));
  assertEquals(answer.status, 401);
  assertEquals(
    answer.headers.get("www-authenticate"),
    'Bearer error="invalid_token"',
  );
  assertEquals(answer.json.error.code, -33009);
});

Deno.test('an expired token is -33008 (401) with error_description="token expired"', async () => {
  const clock = fakeClock();
  await using t = await startTestServer({
    catalog: fixtureCatalog(),
    now: clock.now,
  });
  const { plaintext } = await t.mint("readOnly", {
    expiresAt: clock.now() + 60_000,
  });
  assertEquals((await callTool(t, "echo", bearer(plaintext))).status, 200);
  clock.advance(59_999);
  assertEquals((await callTool(t, "echo", bearer(plaintext))).status, 200);
  // The expiry instant itself is expired.
  clock.advance(1);
  const answer = await callTool(t, "echo", bearer(plaintext), "late");
  assertEquals(answer.status, 401);
  assertEquals(
    answer.headers.get("www-authenticate"),
    'Bearer error="invalid_token", error_description="token expired"',
  );
  assertEquals(answer.json.error.code, -33008);
  assertEquals(answer.json.id, "late");
});

Deno.test("an Authorization header not of the form Bearer <token> is -32020 (400)", async () => {
  // Each is a failed attempt: a fresh server per value keeps the lockout out.
  for (
    const malformed of [
      () => "Basic dXNlcjpwYXNz",
      () => "Bearer",
      () => "Bearer ",
      (token: string) => `Bearer  ${token}`,
      (token: string) => `Bearer ${token} extra`,
      (token: string) => token,
      () => "Token abc",
    ]
  ) {
    await using t = await startTestServer();
    const value = malformed(t.token!);
    const answer = await postModern(
      t.url,
      modernRequest("server/discover", {}, 3),
      { authorization: value },
    );
    assertEquals(answer.status, 400, value);
    assertEquals(answer.json.error.code, -32020, value);
    assertEquals(answer.json.error.data, { header: "Authorization" });
    assertEquals(answer.json.id, 3);
  }
});

Deno.test("the Bearer scheme is case-insensitive (RFC 6750)", async () => {
  await using t = await startTestServer();
  const answer = await postModern(t.url, modernRequest("server/discover"), {
    authorization: `bearer ${t.token}`,
  });
  assertEquals(answer.status, 200);
});

Deno.test("a tool outside the token's scopes is -33007 (403) with insufficient_scope and data.requiredScopes", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const readWrite = (await t.mint("readWrite")).plaintext;
  const cases: [string, string | null, string, string[]][] = [
    ["readOnly", t.token, "writer", ["tools:write"]],
    ["readOnly", t.token, "approver", ["admin"]],
    ["readWrite", readWrite, "approver", ["admin"]],
  ];
  for (const [level, token, tool, required] of cases) {
    const answer = await callTool(t, tool, bearer(token!), `${level}-${tool}`);
    assertEquals(answer.status, 403, `${level} ${tool}`);
    assertEquals(
      answer.headers.get("www-authenticate"),
      'Bearer error="insufficient_scope"',
    );
    assertEquals(answer.json.error.code, -33007);
    assertEquals(answer.json.error.data, { requiredScopes: required });
    assertEquals(answer.json.id, `${level}-${tool}`);
  }
});

Deno.test("each level sees and may call exactly its tools", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const tokens = {
    readOnly: (await t.mint("readOnly")).plaintext,
    readWrite: (await t.mint("readWrite")).plaintext,
    fullAccess: (await t.mint("fullAccess")).plaintext,
  };
  const base = ["boom", "cached", "echo", "progress", "slow"];
  const expected = {
    readOnly: base,
    readWrite: [...base, "writer"].sort(),
    fullAccess: ["approver", ...base, "writer"].sort(),
  };
  for (const [level, token] of Object.entries(tokens)) {
    const auth = bearer(token);
    assertEquals(
      await visibleTools(t, auth),
      expected[level as keyof typeof expected],
      level,
    );
    const statuses = [
      (await callTool(t, "echo", auth)).status,
      (await callTool(t, "writer", auth)).status,
      (await callTool(t, "approver", auth)).status,
    ];
    assertEquals(
      statuses,
      {
        readOnly: [200, 403, 403],
        readWrite: [200, 200, 403],
        fullAccess: [200, 200, 200],
      }[level],
      level,
    );
    // Every level holds tools:read and resources:read.
    for (
      const method of [
        "resources/list",
        "resources/templates/list",
        "prompts/list",
        "server/discover",
      ]
    ) {
      const answer = await postModern(t.url, modernRequest(method), auth);
      assertEquals(answer.status, 200, `${level} ${method}`);
    }
    const prompt = await postModern(
      t.url,
      modernRequest("prompts/get", { name: "greet", arguments: { who: "x" } }),
      auth,
    );
    assertEquals(prompt.status, 200);
  }
});

Deno.test("with requireAuth false a request without a header is the read-only anonymous principal", async () => {
  await using t = await startTestServer({
    catalog: fixtureCatalog(),
    settings: { requireAuth: false },
  });
  const anonymous = { authorization: null };
  assertEquals(await visibleTools(t, anonymous), [
    "boom",
    "cached",
    "echo",
    "progress",
    "slow",
  ]);
  assertEquals((await callTool(t, "echo", anonymous)).status, 200);
  const write = await callTool(t, "writer", anonymous);
  assertEquals(write.status, 403);
  assertEquals(write.json.error.data, { requiredScopes: ["tools:write"] });
  assertEquals((await callTool(t, "approver", anonymous)).status, 403);
  // A header that is present is still validated.
  const bad = await callTool(t, "echo", bearer("dbp_wrong"));
  assertEquals(bad.status, 401);
  assertEquals(bad.json.error.code, -33009);
  // And a real token still brings its own scopes.
  const readWrite = (await t.mint("readWrite")).plaintext;
  assertEquals((await callTool(t, "writer", bearer(readWrite))).status, 200);
});

Deno.test("requireAuth switched on at run time takes effect", async () => {
  await using t = await startTestServer({ settings: { requireAuth: false } });
  const anonymous = { authorization: null };
  assertEquals(
    (await postModern(t.url, modernRequest("tools/list"), anonymous)).status,
    200,
  );
  await saveSettings(t.home, { requireAuth: true });
  const status = await waitUntil(
    "requireAuth to be applied",
    async () => {
      const answer = await postModern(
        t.url,
        modernRequest("tools/list"),
        anonymous,
      );
      return answer.status !== 200 && answer.status;
    },
    { timeoutMs: 2_000 },
  );
  assertEquals(status, 401);
});

Deno.test("notifications are authenticated too", async () => {
  await using t = await startTestServer();
  const answer = await postModern(t.url, {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 1 },
  }, { authorization: null });
  assertEquals(answer.status, 401);
  assertEquals(answer.json.id, null);
});
