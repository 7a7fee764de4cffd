/**
 * A thread that parses long PostgreSQL statements (`pg_parse_off_loop.ts`):
 * libpg_query's WebAssembly parse and the analysis of its tree are
 * synchronous, and a 100 KB statement (the query limit) takes 150 ms of
 * them. Any failure — the parser's, a tree too deep for the analysis — is
 * answered as a parse that failed.
 *
 * @module
 */

/// <reference lib="deno.worker" />

import { messageOf } from "../../base/message_of.ts";
import { parseNow } from "./pg_parse.ts";

self.onmessage = async (event: MessageEvent<{ id: number; sql: string }>) => {
  const { id, sql } = event.data;
  try {
    self.postMessage({ id, parsed: await parseNow(sql) });
  } catch (error) {
    self.postMessage({
      id,
      parsed: {
        ok: false,
        message: `the statement is too complex to analyze: ${messageOf(error)}`,
      },
    });
  }
};
