/**
 * A host dialog for tests: a `{"command": [...]}` setting whose program
 * records each request it is asked and answers with a fixed exit code.
 */

import type { JsonObject } from "../lib/protocol/jsonrpc.ts";

/** A host dialog that records each request and answers with `code`. */
export async function recordingDialog(code: 0 | 1) {
  const dir = await Deno.makeTempDir({ prefix: "dbport-dialog-" });
  const log = `${dir}/asked.jsonl`;
  return {
    setting: { command: ["sh", "-c", `cat >> "$0"; exit ${code}`, log] },
    async asked(): Promise<JsonObject[]> {
      const text = await Deno.readTextFile(log).catch(() => "");
      return text.split("\n").filter((line) => line !== "").map((line) =>
        JSON.parse(line)
      );
    },
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/**
 * A host dialog setting that runs `sql` on the database at `url` as another
 * session while the user looks at the question, then approves
 * (tests/_dialog_run.ts).
 */
export function changingDialog(
  engine: string,
  url: string,
  sql: string,
): JsonObject {
  return {
    command: [
      Deno.execPath(),
      "run",
      "-A",
      "--config",
      new URL("../deno.dev.json", import.meta.url).pathname,
      new URL("./_dialog_run.ts", import.meta.url).pathname,
      engine,
      url,
      sql,
    ],
  };
}
