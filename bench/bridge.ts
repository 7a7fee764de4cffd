/**
 * The bridge's two figures: time from spawning `dbport-mcp` (here `deno run
 * bridge.ts`, the very file `deno compile` builds) to its first `tools/list`
 * answer, and the per-request cost of going through it rather than straight
 * to the server over HTTP.
 *
 * @module
 */

import { BRIDGE_PERMISSIONS } from "../lib/cli/integration.ts";
import { percentile } from "./load.ts";
import { modernBody } from "./mcp_request.ts";

const BRIDGE = new URL("../bridge.ts", import.meta.url).pathname;

/** A running bridge with a line-oriented request function. */
class Bridge {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: ReadableStreamDefaultReader<string>;
  readonly #stderr: Promise<string>;
  #buffer = "";
  #id = 0;

  constructor(home: string) {
    this.#child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...BRIDGE_PERMISSIONS, BRIDGE],
      env: { DBPORT_HOME: home, DBPORT_LAUNCH: "true" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#stderr = new Response(this.#child.stderr).text();
    this.#writer = this.#child.stdin.getWriter();
    this.#lines = this.#child.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
  }

  /** Send a modern request; resolves with its answer line. */
  async request(method: string, params: Record<string, unknown> = {}) {
    const id = ++this.#id;
    await this.#writer.write(
      new TextEncoder().encode(modernBody(id, method, params) + "\n"),
    );
    for (;;) {
      const nl = this.#buffer.indexOf("\n");
      if (nl !== -1) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        if (line.includes(`"id":${id}`)) return line;
        continue;
      }
      const { done, value } = await this.#lines.read();
      if (done) {
        throw new Error(`the bridge closed stdout: ${await this.#stderr}`);
      }
      this.#buffer += value;
    }
  }

  async close() {
    await this.#writer.close().catch(() => {});
    await this.#lines.cancel().catch(() => {});
    await this.#child.status;
    await this.#stderr;
  }
}

/** What the bridge figures came to. */
export interface BridgeResult {
  startMs: number;
  viaBridgeP50: number;
  directP50: number;
  overheadP50: number;
}

/**
 * Measure in `home` (a running server's): the median of `starts` cold starts,
 * then `requests` sequential `tools/list` through one bridge and directly.
 */
export async function measureBridge(
  home: string,
  direct: () => Promise<boolean>,
  starts: number,
  requests: number,
): Promise<BridgeResult> {
  const startTimes: number[] = [];
  for (let i = 0; i < starts; i++) {
    const began = performance.now();
    const bridge = new Bridge(home);
    const line = await bridge.request("tools/list");
    startTimes.push(performance.now() - began);
    if (!line.includes('"tools"')) throw new Error(`bridge answered ${line}`);
    await bridge.close();
  }
  const bridge = new Bridge(home);
  const via: number[] = [];
  const straight: number[] = [];
  try {
    for (let i = 0; i < 20; i++) await bridge.request("tools/list");
    for (let i = 0; i < requests; i++) {
      // Interleaved, so a noisy neighbour hurts both the same.
      let began = performance.now();
      await bridge.request("tools/list");
      via.push(performance.now() - began);
      began = performance.now();
      await direct();
      straight.push(performance.now() - began);
    }
  } finally {
    await bridge.close();
  }
  startTimes.sort((a, b) => a - b);
  via.sort((a, b) => a - b);
  straight.sort((a, b) => a - b);
  const viaBridgeP50 = percentile(via, 50);
  const directP50 = percentile(straight, 50);
  return {
    startMs: percentile(startTimes, 50),
    viaBridgeP50,
    directP50,
    overheadP50: viaBridgeP50 - directP50,
  };
}
