/**
 * Calling a tool over HTTP the way a client does, with every answer checked:
 * the 2026-07-28 `CallToolResult` schema, the tool's own published
 * `outputSchema`, and the text item carrying the same JSON.
 *
 * @module
 */

import Ajv2020 from "ajv/dist/2020";
import { assert, assertEquals } from "@std/assert";
import type { JsonObject } from "../lib/protocol/jsonrpc.ts";
import { assertSchema } from "./_schema.ts";
import { modernRequest, postModern, type TestServer } from "./_server.ts";

// deno-lint-ignore no-explicit-any
const ajv = new (Ajv2020 as any)({ strict: false, allErrors: true });

let nextId = 1;

/** A fresh request id. */
export function requestId(): number {
  return nextId++;
}

// deno-lint-ignore no-explicit-any
const validators = new Map<string, any>();

/**
 * The compiled outputSchemas of a tool, as this server publishes them: the
 * lean one of tools/list and the full one of `dbport://docs/results`.
 */
async function outputValidators(server: TestServer, name: string) {
  const key = `${server.url} ${name}`;
  if (!validators.has(key)) {
    const list = await postModern(
      server.url,
      modernRequest("tools/list", {}, nextId++),
    );
    const tool = list.json.result.tools.find((t: { name: string }) =>
      t.name === name
    );
    assert(tool !== undefined, `tools/list has no ${name}`);
    const docs = await postModern(
      server.url,
      modernRequest(
        "resources/read",
        { uri: "dbport://docs/results" },
        nextId++,
      ),
    );
    const text: string = docs.json.result.contents[0].text;
    const full = text.match(
      new RegExp(`### ${name}\n\n\`\`\`json\n([^]*?)\n\`\`\``),
    );
    assert(full !== null, `dbport://docs/results has no schema of ${name}`);
    validators.set(key, [
      ajv.compile(tool.outputSchema),
      ajv.compile(JSON.parse(full[1]!)),
    ]);
  }
  return validators.get(key);
}

/** Call a tool; validates the answer and, for a success, the tool's outputSchema. */
export async function callTool(
  server: TestServer,
  name: string,
  args: JsonObject,
  extra: { authorization?: string; meta?: JsonObject } = {},
  // deno-lint-ignore no-explicit-any
): Promise<{ status: number; json: any; text: string }> {
  const answer = await postModern(
    server.url,
    modernRequest(
      "tools/call",
      { name, arguments: args },
      nextId++,
      extra.meta ?? {},
    ),
    extra.authorization === undefined
      ? {}
      : { authorization: extra.authorization },
  );
  const result = answer.json?.result;
  if (result !== undefined) {
    assertSchema("2026-07-28", "CallToolResult", result);
    if (result.isError !== true) {
      for (const validate of await outputValidators(server, name)) {
        assert(
          validate(result.structuredContent),
          JSON.stringify(validate.errors),
        );
      }
      assertEquals(
        JSON.parse(result.content[0].text),
        result.structuredContent,
      );
    }
  }
  return answer;
}

/** The text of a tool error (failing when the answer is not one). */
export function toolErrorText(
  answer: {
    json: { result?: { isError?: boolean; content: { text: string }[] } };
  },
): string {
  assertEquals(answer.json.result?.isError, true, JSON.stringify(answer.json));
  return answer.json.result?.content[0]?.text ?? "";
}
