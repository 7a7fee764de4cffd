/**
 * A stdio tap for clients that spawn their server themselves (the MCP
 * Inspector CLI): `deno run -A tests/_stdio_tap.ts REPORT COMMAND ARGS...`
 * runs COMMAND, passes stdin and stdout through line by line, and checks
 * every line the command writes against the official JSON Schema of its
 * protocol version. REPORT receives `{checked, seen, versions, problems}` after
 * every message, so a client that kills the tap loses nothing.
 *
 * @module
 */

import { SchemaCheck } from "./_schema_check.ts";

const [report, command, ...args] = Deno.args;
if (report === undefined || command === undefined) {
  throw new Error(
    `usage: _stdio_tap.ts REPORT COMMAND [ARGS...], got ${
      JSON.stringify(Deno.args)
    }`,
  );
}

const check = new SchemaCheck();
const child = new Deno.Command(command, {
  args,
  stdin: "piped",
  stdout: "piped",
  stderr: "inherit",
}).spawn();

function save(): void {
  Deno.writeTextFileSync(
    report!,
    JSON.stringify({
      checked: check.checked,
      seen: check.seen,
      versions: [...check.versions],
      problems: check.problems,
    }),
  );
}
save();

/** Split a byte stream into lines, calling `each` with every line. */
async function lines(
  stream: ReadableStream<Uint8Array>,
  each: (line: string) => Promise<void>,
): Promise<void> {
  let buffer = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      await each(line);
    }
  }
}

const encoder = new TextEncoder();
const toChild = child.stdin.getWriter();
const upstream = lines(Deno.stdin.readable, async (line) => {
  try {
    check.sent(JSON.parse(line));
  } catch { /* not JSON: the child will say so */ }
  await toChild.write(encoder.encode(line + "\n"));
}).finally(() => toChild.close().catch(() => {}));

const toParent = Deno.stdout.writable.getWriter();
const downstream = lines(child.stdout, async (line) => {
  if (line.trim() !== "") {
    try {
      check.received(JSON.parse(line));
    } catch (error) {
      check.problems.push(`not JSON: ${line} (${error})`);
    }
    save();
  }
  await toParent.write(encoder.encode(line + "\n"));
});

Deno.addSignalListener("SIGTERM", () => {
  save();
  child.kill("SIGTERM");
});

await downstream;
save();
// The client may keep its end open after the command is gone: do not wait.
void upstream.catch(() => {});
Deno.exit((await child.status).code);
