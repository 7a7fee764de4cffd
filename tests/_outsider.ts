/**
 * What the outsider tests (tests/e2e/outsider_*_test.ts) and the tests of
 * their fixes share: bodies that stress the parser, a measure of the event
 * loop's longest stall, wide results, a tool answer's text, a driver's
 * answer, a server with a readWrite and a readOnly token, a schema of a
 * test's own.
 */

import postgres from "postgres";
import { DbError } from "../lib/db/errors.ts";
import type { Driver } from "../lib/db/types.ts";
import { savedConnection, serverWith } from "./_connections.ts";
import { POSTGRES_URL, READ_OPTIONS } from "./_db.ts";
import {
  envelope,
  modernRequest,
  postModern,
  type TestServer,
} from "./_server.ts";
import { callTool } from "./_tool_call.ts";

/** A tools/call body whose argument `field` is `depth` nested arrays. */
export function deepBody(
  connectionId: string,
  field: string,
  depth: number,
): string {
  const deep = "[".repeat(depth) + "]".repeat(depth);
  const value = field === "params" ? `[${deep}]` : deep;
  const meta = JSON.stringify(envelope());
  return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute_query","arguments":{"connection_id":"${connectionId}","query":"select 1","${field}":${value}},"_meta":${meta}}}`;
}

/** The longest stall of this process's event loop while `work` runs. */
export async function longestStall(work: Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 20);
  try {
    await work;
  } finally {
    clearInterval(timer);
  }
  return longest;
}

/** The headers of a modern `tools/call` of execute_query. */
export const TOOL_CALL_HEADERS = {
  "content-type": "application/json",
  "accept": "application/json, text/event-stream",
  "mcp-protocol-version": "2026-07-28",
  "mcp-method": "tools/call",
  "mcp-name": "execute_query",
};

/** `with t …, u … select * from u, u, …`: a × b columns named `name`. */
export function wideSelect(
  name: string,
  a: number,
  b: number,
  value = "1",
): string {
  const inner = Array.from({ length: a }, (_, i) => `t t${i}`).join(", ");
  const outer = Array.from({ length: b }, (_, i) => `u u${i}`).join(", ");
  return `with t as (select ${value} as "${name}"), u as (select * from ${inner}) select * from ${outer}`;
}

/** The text of a tool answer (a result's text item, or the raw body). */
// deno-lint-ignore no-explicit-any
export function textOf(answer: { json: any; text: string }): string {
  return answer.json?.result?.content?.[0]?.text ?? answer.text;
}

/**
 * What a call came to, as one comparable line: `answered <rows>` (a
 * result's rows, or the value) or `failed: [kind] <error>` (a DbError's kind).
 */
export function outcome(work: Promise<unknown>): Promise<string> {
  return work.then(
    (value) =>
      `answered ${
        JSON.stringify(
          (value as { rows?: unknown } | undefined)?.rows ?? value,
        )
      }`,
    (error) =>
      `failed: ${error instanceof DbError ? `[${error.kind}] ` : ""}${
        String(error)
      }`,
  );
}

/**
 * `execute_query` on `connectionId` as the MCP client named `client` (its
 * `clientInfo`), with `args` beside the connection; the answer's text.
 */
export function executeAs(
  serverUrl: string,
  connectionId: string,
  client: string,
  args: Record<string, unknown>,
): Promise<string> {
  return postModern(
    serverUrl,
    modernRequest(
      "tools/call",
      {
        name: "execute_query",
        arguments: { connection_id: connectionId, ...args },
      } as never,
      crypto.randomUUID(),
      { "io.modelcontextprotocol/clientInfo": { name: client, version: "1" } },
    ),
  ).then(textOf);
}

/** `driver`'s answer to `text` within `timeoutMs`, or its failure. */
export async function answer(
  driver: Driver,
  text: string,
  timeoutMs = 5000,
): Promise<{ said: string; ms: number }> {
  const started = performance.now();
  const said = await driver.query(text, {
    ...READ_OPTIONS,
    timeoutMs,
    signal: new AbortController().signal,
  }).then(
    (result) => `answered ${JSON.stringify(result.rows)}`,
    (error) =>
      error instanceof DbError
        ? `${error.kind}: ${error.message}`
        : `failed: ${error}`,
  );
  return { said, ms: performance.now() - started };
}

/** A tool answer in one line: `OK <rows>` or `ERR <text>` / `FORBIDDEN <message>`. */
// deno-lint-ignore no-explicit-any
export function said(got: { json: any }): string {
  const result = got.json.result;
  if (result === undefined) {
    return `FORBIDDEN ${String(got.json.error?.message ?? "")}`;
  }
  if (result.isError === true) return `ERR ${result.content?.[0]?.text ?? ""}`;
  return `OK ${JSON.stringify(result.structuredContent?.rows ?? null)}`;
}

/** A server over the superuser test login: readWrite (silent) and tokens. */
export async function servers(name: string, url = POSTGRES_URL) {
  const saved = savedConnection(
    { engine: "postgres", url },
    name,
    { externalAccess: "readWrite", safeMode: "silent" },
  );
  const server = await serverWith([saved]);
  const writer = (await server.mint("readWrite")).plaintext;
  const reader = (await server.mint("readOnly")).plaintext;
  return {
    server,
    saved,
    write: sender(server, saved.id, writer, 20),
    read: sender(server, saved.id, reader, 20),
  };
}

/** `execute_query` on `connectionId` as `token`; the answer in one line. */
export function sender(
  server: TestServer,
  connectionId: string,
  token: string,
  maxRows: number,
): (query: string) => Promise<string> {
  return async (query) =>
    said(
      await callTool(server, "execute_query", {
        connection_id: connectionId,
        query,
        max_rows: maxRows,
      }, { authorization: `Bearer ${token}` }),
    );
}

/** A schema of the test's own, dropped at the end, and the admin login. */
export function ownSchema(prefix: string, tag: string) {
  const schema = `${prefix}_${tag}_${crypto.randomUUID().slice(0, 8)}`;
  const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  return {
    schema,
    admin,
    async drop() {
      await admin.unsafe(`drop schema if exists ${schema} cascade`);
      await admin.end();
    },
  };
}
