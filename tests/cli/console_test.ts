import { assertEquals, assertMatch } from "@std/assert";
import { consoleCommand } from "../../lib/cli/console.ts";
import { HANDSHAKE_VERSION } from "../../lib/protocol/handshake.ts";

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) },
  };
}

async function handshake(extra: Record<string, unknown>): Promise<string> {
  const path = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      version: HANDSHAKE_VERSION,
      port: 4000,
      pid: Deno.pid,
      instanceId: "i",
      protocolVersion: "2026-07-28",
      startedAt: "2026-11-24T00:00:00Z",
      token: null,
      expiresAt: null,
      ...extra,
    }),
  );
  return path;
}

Deno.test("dbport console opens the address with the key from the handshake", async () => {
  const path = await handshake({
    console: { port: 4001, path: "/c/0a1b", key: "k".repeat(64) },
  });
  try {
    const opened: string[] = [];
    const o = io();
    const code = await consoleCommand(path, [], o.io, (url) => {
      opened.push(url);
      return Promise.resolve(true);
    });
    assertEquals(code, 0);
    assertEquals(opened, [
      `http://127.0.0.1:4001/c/0a1b/?key=${"k".repeat(64)}`,
    ]);
    assertMatch(o.out[0]!, /^Opened the dbport console/);
    // No browser: the address is printed instead; --print never opens one.
    const none = io();
    await consoleCommand(path, [], none.io, () => Promise.resolve(false));
    assertEquals(none.out.at(-1), opened[0]);
    const printed = io();
    await consoleCommand(path, ["--print"], printed.io, () => {
      throw new Error("must not open");
    });
    assertEquals(printed.out, [opened[0]!]);
  } finally {
    await Deno.remove(path);
  }
});

Deno.test("dbport console says why it cannot: no server, or a server without a console", async () => {
  const o = io();
  assertEquals(
    await consoleCommand(
      "/nonexistent/handshake.json",
      [],
      o.io,
      () => Promise.resolve(true),
    ),
    1,
  );
  assertMatch(o.err[0]!, /not running .* deno task serve/);
  const path = await handshake({});
  try {
    const off = io();
    assertEquals(
      await consoleCommand(path, [], off.io, () => Promise.resolve(true)),
      1,
    );
    assertMatch(off.err[0]!, /"console": false/);
  } finally {
    await Deno.remove(path);
  }
});
