import { assertEquals } from "@std/assert";
import { readLines } from "../../lib/bridge/stdio.ts";

function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return ReadableStream.from(chunks.map((chunk) => encoder.encode(chunk)));
}

Deno.test("readLines() joins chunks, skips blank lines and keeps a last line without newline", async () => {
  const lines = [];
  for await (const line of readLines(streamOf('{"a":', "1}\n\n", '{"b":2}'))) {
    lines.push(line);
  }
  assertEquals(lines, [{ text: '{"a":1}' }, { text: '{"b":2}' }]);
});

Deno.test("readLines() reports a line over the cap and goes on with the next", async () => {
  const lines = [];
  for await (
    const line of readLines(
      streamOf("x".repeat(30), "y".repeat(30), "\nok\n"),
      40,
    )
  ) lines.push(line);
  assertEquals(lines, [{ tooLong: true }, { text: "ok" }]);
});
