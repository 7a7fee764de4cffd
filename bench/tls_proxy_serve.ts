// deno-lint-ignore-file no-console
/**
 * tests/_tls_pg_proxy.ts as a process of its own, for
 * bench/pg_tls_read_cost.ts: prints the proxy's URL, then its counts as one
 * JSON line each time a line arrives on standard input; ends with it.
 *
 * @module
 */

import { tlsPgProxy } from "../tests/_tls_pg_proxy.ts";

const proxy = await tlsPgProxy(new URL(Deno.args[0]!));
console.log(proxy.url);
const input = Deno.stdin.readable.pipeThrough(new TextDecoderStream());
for await (const chunk of input) {
  for (let i = 0; i < chunk.split("\n").length - 1; i++) {
    console.log(JSON.stringify(proxy.stats));
  }
}
await proxy.close();
