/**
 * The soak's helpers (bench/soak.ts): the concurrent edits of
 * connections.json, the console's policy change, the server's RSS and loop
 * delay, a python3 one-liner.
 *
 * @module
 */

import { loadConnections } from "../lib/app/connections.ts";
import { inAppDir } from "../lib/app/paths.ts";
import { parseHandshake } from "../lib/protocol/handshake.ts";
import { CONNECTIONS_FILE, HANDSHAKE_FILE } from "../lib/base/identity.ts";
import type { LoopDelaySnapshot } from "../lib/server/loop_delay.ts";
import { sleep } from "../lib/base/sleep.ts";
import { addConnection } from "../tests/_connection_add.ts";
import { rssMiB } from "./proc.ts";

/**
 * Ten `connections add` at once and a policy change through the server's own
 * console; returns what is missing from connections.json after.
 */
export async function concurrentEdits(
  home: string,
  policyId: string,
  run: string,
): Promise<string[]> {
  const names = Array.from({ length: 10 }, (_, i) => `added ${run} ${i}`);
  const adds = names.map((name) => addConnection(home, name));
  const changed = consolePolicy(home, policyId).catch((error) => String(error));
  const outputs = await Promise.all(adds);
  const missing: string[] = [];
  for (const [i, out] of outputs.entries()) {
    if (out.code !== 0) {
      missing.push(
        `${names[i]}: ${new TextDecoder().decode(out.stderr).trim()}`,
      );
    }
  }
  const status = await changed;
  if (status !== 303) missing.push(`console policy change: ${status}`);
  const loaded = await loadConnections(inAppDir(home, CONNECTIONS_FILE));
  if (!loaded.ok) return [...missing, loaded.message];
  const saved = new Set(loaded.connections.map((c) => c.name));
  for (const name of names) {
    if (!saved.has(name)) missing.push(`${name} is not in connections.json`);
  }
  const policy = loaded.connections.find((c) => c.id === policyId);
  if (policy?.aiPolicy !== "never") {
    missing.push(
      `the console's change is not in connections.json (${policy?.aiPolicy})`,
    );
  }
  return missing;
}

/** Set one connection's aiPolicy to "never" on the running server's console. */
async function consolePolicy(home: string, id: string): Promise<number> {
  const parsed = parseHandshake(
    await Deno.readTextFile(inAppDir(home, HANDSHAKE_FILE)),
  );
  if (!parsed.ok || parsed.handshake.console === undefined) {
    throw new Error("the server runs no console");
  }
  const { port, key, path } = parsed.handshake.console;
  // Every console URL sits under its path prefix; Origin is the bare origin.
  const origin = `http://127.0.0.1:${port}`;
  const base = `${origin}${path}`;
  const login = await fetch(`${base}/?key=${key}`, { redirect: "manual" });
  await login.body?.cancel();
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const page = await (await fetch(`${base}/connections`, {
    headers: { cookie },
  })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  if (csrf === undefined) throw new Error("no CSRF token on the page");
  const answer = await fetch(`${base}/connections/${id}`, {
    method: "POST",
    redirect: "manual",
    headers: {
      cookie,
      origin,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({
      csrf,
      externalAccess: "readOnly",
      aiPolicy: "never",
      safeMode: "alert",
    }).toString(),
  });
  await answer.body?.cancel();
  return answer.status;
}

/** RSS in MiB, 0 once the process is gone. */
export function rssOf(pid: number): number {
  try {
    return rssMiB(pid);
  } catch {
    return 0;
  }
}

/** The process's peak RSS so far (the kernel's VmHWM), in MiB; 0 once gone. */
export function peakOf(pid: number): number {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

export async function readDelay(
  file: string,
): Promise<LoopDelaySnapshot | null> {
  for (let i = 0; i < 30; i++) {
    try {
      return JSON.parse(await Deno.readTextFile(file));
    } catch {
      await sleep(200);
    }
  }
  return null;
}

/** Run a python3 one-liner with `arg` as sys.argv[1]. */
export async function python(code: string, arg: string): Promise<void> {
  const { code: status, stderr } = await new Deno.Command("python3", {
    args: ["-c", code, arg],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (status !== 0) {
    throw new Error(`python3: ${new TextDecoder().decode(stderr).trim()}`);
  }
}
