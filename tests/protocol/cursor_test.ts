import { assertEquals } from "@std/assert";
import { CursorCodec, pageAfter } from "../../lib/protocol/cursor.ts";

Deno.test("CursorCodec opens what it sealed for the same method", async () => {
  const codec = new CursorCodec();
  const cursor = await codec.seal("tools/list", "tool_049");
  assertEquals(await codec.open("tools/list", cursor), {
    ok: true,
    after: "tool_049",
  });
});

Deno.test("CursorCodec.open() rejects a cursor of another method", async () => {
  const codec = new CursorCodec();
  const cursor = await codec.seal("tools/list", "x");
  assertEquals(await codec.open("prompts/list", cursor), {
    ok: false,
    problem: "wrong_method",
  });
});

Deno.test("CursorCodec.open() rejects a tampered cursor", async () => {
  const codec = new CursorCodec();
  const cursor = await codec.seal("tools/list", "x");
  const [body, mac] = cursor.split(".");
  const forgedBody = btoa(JSON.stringify(["tools/list", "y"])).replace(
    /=+$/,
    "",
  );
  assertEquals(await codec.open("tools/list", `${forgedBody}.${mac}`), {
    ok: false,
    problem: "forged",
  });
  const middle = mac!.length >> 1;
  const flipped = mac!.slice(0, middle) + (mac![middle] === "A" ? "B" : "A") +
    mac!.slice(middle + 1);
  assertEquals(await codec.open("tools/list", `${body}.${flipped}`), {
    ok: false,
    problem: "forged",
  });
  // A spare-bit variant of the same MAC is not the text we issued.
  const last = mac!.at(-1)!;
  const alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const sibling = alphabet[alphabet.indexOf(last) ^ 1]!;
  assertEquals(
    (await codec.open("tools/list", `${body}.${mac!.slice(0, -1)}${sibling}`))
      .ok,
    false,
  );
});

Deno.test("CursorCodec.open() rejects garbage and another process's cursors", async () => {
  const codec = new CursorCodec();
  for (const garbage of ["", "x", ".", "a.b.c", "!!!.???", "eyJ9.AAAA"]) {
    assertEquals((await codec.open("tools/list", garbage)).ok, false, garbage);
  }
  const other = await new CursorCodec().seal("tools/list", "x");
  assertEquals(await codec.open("tools/list", other), {
    ok: false,
    problem: "forged",
  });
});

Deno.test("pageAfter() walks sorted items in pages and stops", () => {
  const items = Array.from(
    { length: 120 },
    (_, i) => `item_${String(i).padStart(3, "0")}`,
  );
  const first = pageAfter(items, (x) => x, null, 50);
  assertEquals(first.page.length, 50);
  assertEquals(first.lastKey, "item_049");
  const second = pageAfter(items, (x) => x, first.lastKey, 50);
  assertEquals(second.page[0], "item_050");
  const third = pageAfter(items, (x) => x, second.lastKey, 50);
  assertEquals(third.page.length, 20);
  assertEquals(third.lastKey, null);
});

Deno.test("pageAfter() neither repeats nor skips when an earlier item disappears", () => {
  const items = ["a", "b", "c", "d"];
  const first = pageAfter(items, (x) => x, null, 2);
  const second = pageAfter(["b", "c", "d"], (x) => x, first.lastKey, 2);
  assertEquals(second.page, ["c", "d"]);
});
