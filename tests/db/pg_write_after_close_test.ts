/**
 * postgres.js writing to a socket the server has ended (a backend ended by
 * pg_terminate_backend between two writes, found by the soak) raises from
 * its own write timer, out of reach of any caller: the net in pg_session.ts
 * keeps that one error from ending the process, and only that one.
 */

import { assert, assertEquals } from "@std/assert";
import {
  isOrphanedClose,
  isWriteAfterClose,
} from "../../lib/db/postgres/pg_session.ts";
import { sleep } from "../../lib/base/sleep.ts";

function postgresWriteError(message: string, kind = Error): Error {
  const error = new kind(message);
  error.stack = `${kind.name}: ${message}
    at Socket._writeAfterFIN [as write] (ext:deno_node/net.ts:1:10175)
    at Immediate.nextWrite (file:///root/.cache/deno/npm/registry.npmjs.org/postgres/3.4.9/src/connection.js:255:22)
    at Immediate.callback (ext:deno_node/internal/timers.mjs:4:3069)`;
  return error;
}

Deno.test("a postgres.js write to a socket the server ended is an unhandled rejection that does not end the process", async () => {
  const error = postgresWriteError(
    "This socket has been ended by the other party",
  );
  // As postgres.js's timer raises it: no one can catch it. Without the net
  // the test process itself ends here.
  Promise.reject(error);
  // Turns of the event loop for the rejection to go unhandled and reach the
  // net; no event tells the test it did (the process living on is the test).
  await sleep(50);
  assert(isWriteAfterClose(error));
});

Deno.test("the net takes only postgres.js's write after close", () => {
  assert(
    isWriteAfterClose(
      postgresWriteError(
        "Cannot read properties of null (reading 'write')",
        TypeError,
      ),
    ),
  );
  assert(
    !isWriteAfterClose(
      new Error("This socket has been ended by the other party"),
    ),
  );
  assert(!isWriteAfterClose(postgresWriteError("something else")));
  assert(!isWriteAfterClose("This socket has been ended by the other party"));
});

Deno.test("isOrphanedClose() takes postgres.js's own word that a session closed (CONNECTION_CLOSED, 57P01/02/05), and nothing else", () => {
  const lost = (code: string, stack: string) =>
    Object.assign(new Error("terminating connection"), { code, stack });
  const inPostgres =
    "Error\n    at closed (file:///x/registry.npmjs.org/postgres/3.4.9/src/connection.js:453:57)";
  for (
    const code of [
      "CONNECTION_CLOSED",
      "CONNECTION_ENDED",
      "57P01",
      "57P02",
      "57P05",
    ]
  ) {
    assertEquals(isOrphanedClose(lost(code, inPostgres)), true, code);
  }
  // Another code, another place, or not an Error: a real failure, not taken.
  assertEquals(isOrphanedClose(lost("42P01", inPostgres)), false);
  assertEquals(isOrphanedClose(lost("57P03", inPostgres)), false);
  assertEquals(
    isOrphanedClose(
      lost(
        "CONNECTION_CLOSED",
        "Error\n    at dbport (lib/db/postgres/postgres.ts:1:1)",
      ),
    ),
    false,
  );
  assertEquals(isOrphanedClose({ code: "57P01", stack: inPostgres }), false);
});
