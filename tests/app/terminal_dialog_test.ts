import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import {
  askOnTerminal,
  type DialogRequest,
  dialogText,
  terminalLines,
} from "../../lib/app/host_dialog.ts";
import { visibleStatement } from "../../lib/app/visible_text.ts";

const REQUEST: DialogRequest = {
  kind: "write",
  connection: { id: "c", name: "Shop" },
  client: "editor",
  token: "bridge",
  statement: "DELETE FROM items WHERE id = 1",
  safeMode: "alert",
  message: 'Allow a query on "Shop"?',
  reasons: ['the connection\'s Safe Mode is "alert"'],
};

/** A terminal whose lines the test types, with a clock it moves. */
function fakeTerminal() {
  let clock = 0;
  let push!: (line: string) => void;
  const source = new ReadableStream<string>({
    start(controller) {
      push = (line) => controller.enqueue(line);
    },
  });
  const lines = terminalLines(source, () => clock);
  const shown: string[] = [];
  return {
    lines,
    shown,
    type(line: string) {
      push(line);
    },
    tick(ms: number) {
      clock += ms;
    },
    ask(request: DialogRequest, signal = new AbortController().signal) {
      return askOnTerminal(request, signal, lines, (text) => {
        shown.push(text);
        return Promise.resolve();
      }, () => clock);
    },
  };
}

/**
 * A few turns of the event loop: typed lines queued in the stream reach
 * terminalLines' reader and the dialog's awaits run. No timer is waited
 * for: the fake clock, moved by `tick`, orders what was typed when.
 */
const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

Deno.test("the terminal dialog discards what was typed before the question was shown", async () => {
  const t = fakeTerminal();
  t.type("y"); // typed ahead, with no question on screen
  await settle();
  t.tick(1_000);
  const answer = t.ask(REQUEST);
  await settle();
  t.type("n");
  assertEquals(await answer, { answer: "deny" });
});

Deno.test("a y meant for a withdrawn question never approves the next one", async () => {
  const t = fakeTerminal();
  const withdrawn = new AbortController();
  const first = t.ask(REQUEST, withdrawn.signal);
  await settle();
  withdrawn.abort();
  assertEquals(await first, { answer: "dismissed" });
  t.tick(10);
  t.type("y"); // arrives after the first question ended
  await settle();
  t.tick(500);
  const second = t.ask({
    ...REQUEST,
    statement: "DELETE FROM items",
  });
  await settle();
  t.tick(10);
  t.type("no");
  assertEquals(await second, { answer: "deny" });
  // And a y typed after the question is shown approves.
  t.tick(10);
  const third = t.ask(REQUEST);
  await settle();
  t.tick(10);
  t.type("y");
  assertEquals(await third, { answer: "approve" });
});

Deno.test("dialogText() shows control and invisible characters and notes non-ASCII tags", () => {
  const text = dialogText({
    ...REQUEST,
    statement: "DELETE FROM t RETURNING $é$ WHERE $é$\r--\u0001\u200b\u202e x",
  });
  assertStringIncludes(text, "␍");
  assertStringIncludes(text, "\\u0001");
  assertStringIncludes(text, "\\u200b");
  assertStringIncludes(text, "\\u202e");
  assertStringIncludes(text, '"$é$"');
  for (const hidden of ["\r", "\u0001", "\u200b", "\u202e"]) {
    assert(!text.includes(hidden), JSON.stringify(text));
  }
  // Line feeds stay line feeds: a multi-line statement keeps its shape.
  assertEquals(visibleStatement("SELECT 1\nFROM t"), "SELECT 1\nFROM t");
});
