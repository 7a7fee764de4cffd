import { exists } from "../_server.ts";
import { assertEquals } from "@std/assert";
import {
  inspectHandshake,
  isProcessAlive,
  removeHandshakeIfOurs,
  writeHandshake,
} from "../../lib/app/handshake_file.ts";
import type { Handshake } from "../../lib/protocol/handshake.ts";

const mine = (instanceId: string, pid = Deno.pid): Handshake => ({
  version: 1,
  port: 1234,
  pid,
  instanceId,
  protocolVersion: "2026-07-28",
  startedAt: new Date().toISOString(),
  token: null,
  expiresAt: null,
});

Deno.test("isProcessAlive() tells a live pid from a dead one", async () => {
  assertEquals(isProcessAlive(Deno.pid), true);
  const child = new Deno.Command("true").spawn();
  await child.status;
  assertEquals(isProcessAlive(child.pid), false);
});

Deno.test("inspectHandshake() tells none, stale, live and unreadable apart", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/mcp-handshake.json`;
  try {
    assertEquals(await inspectHandshake(path), { kind: "none" });
    const child = new Deno.Command("sleep", { args: ["5"] }).spawn();
    await writeHandshake(path, mine("x", child.pid));
    assertEquals(await inspectHandshake(path), {
      kind: "live",
      pid: child.pid,
    });
    child.kill();
    await child.status;
    assertEquals(await inspectHandshake(path), {
      kind: "stale",
      pid: child.pid,
    });
    await Deno.writeTextFile(path, "{");
    assertEquals((await inspectHandshake(path)).kind, "unreadable");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("removeHandshakeIfOurs() removes only a handshake naming this pid and instance", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/mcp-handshake.json`;
  try {
    await writeHandshake(path, mine("other"));
    assertEquals(await removeHandshakeIfOurs(path, "me"), false);
    await writeHandshake(path, mine("me", Deno.pid + 100000));
    assertEquals(await removeHandshakeIfOurs(path, "me"), false);
    await writeHandshake(path, mine("me"));
    assertEquals(await removeHandshakeIfOurs(path, "me"), true);
    assertEquals(await exists(path), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
