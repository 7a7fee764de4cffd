import { assertEquals, assertRejects } from "@std/assert";
import {
  listenHandler,
  MAX_STREAMS_PER_TOKEN,
  type SubscriptionSource,
} from "../../lib/features/listen.ts";
import type { FeatureDeps } from "../../lib/features/deps.ts";
import { SchemaWatch } from "../../lib/features/subscriptions/schema_watch.ts";
import { WireError } from "../../lib/protocol/errors.ts";
import { savedConnection } from "../_connections.ts";
import { waitUntil } from "../_wait.ts";
import { callContext, principalWith } from "../_fake_driver.ts";

Deno.test("listenHandler: one token's streams are capped, another token's still open", async () => {
  const handler = listenHandler([]);
  const stop = new AbortController();
  const a = principalWith([]);
  const b = { ...principalWith([]), key: "token:other" };
  const open = (principal: typeof a) =>
    handler(
      callContext(principal, {
        method: "subscriptions/listen",
        signal: stop.signal,
      }),
    );
  const streams = Array.from({ length: MAX_STREAMS_PER_TOKEN }, () => open(a));
  const error = await assertRejects(() => open(a), WireError);
  assertEquals(error.code, -33010);
  assertEquals(error.headers["retry-after"], "30");
  const other = open(b);
  stop.abort();
  await Promise.all([...streams, other]);
  // Closed streams give their places back.
  const again = new AbortController();
  const next = handler(callContext(a, { signal: again.signal }));
  again.abort();
  await next;
});

Deno.test("listenHandler: acknowledges once every source watches, then delivers what each saw meanwhile, after the acknowledgement", async () => {
  const frames: string[] = [];
  let watching = () => {};
  const source: SubscriptionSource = {
    accept: () => Promise.resolve({ resourcesListChanged: true }),
    watch: (_honoured, ctx) =>
      new Promise((resolve) => {
        // A change seen while the baseline is read: held for delivery.
        watching = () =>
          resolve(() => {
            ctx.notify("notifications/resources/updated", {});
            return Promise.resolve();
          });
      }),
  };
  const stop = new AbortController();
  const done = listenHandler([source])(
    callContext(principalWith([]), {
      method: "subscriptions/listen",
      signal: stop.signal,
      notify: (method) => void frames.push(method),
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
  assertEquals(frames, [], "acknowledged before the source watched");
  watching();
  await new Promise((resolve) => setTimeout(resolve, 50));
  assertEquals(frames, [
    "notifications/subscriptions/acknowledged",
    "notifications/resources/updated",
  ]);
  stop.abort();
  await done;
});

Deno.test("SchemaWatch.watch() resolves once the baseline is read, and a change after it is heard", async () => {
  const connection = savedConnection(
    { engine: "sqlite", url: "/nonexistent/watched.db" },
    "Watched",
  );
  let schema = "v1";
  let first = () => {};
  const firstRead = new Promise<void>((resolve) => first = resolve);
  let reads = 0;
  const deps = {
    connections: { byId: () => connection },
    pool: {
      get: () => ({
        fingerprint: async () => {
          // The first read waits (a worker starting on a busy machine).
          if (reads++ === 0) await firstRead;
          return schema;
        },
      }),
    },
  } as unknown as FeatureDeps;
  const watch = new SchemaWatch(deps, 20);
  const stop = new AbortController();
  let heard = 0;
  let baselined = false;
  const baseline = watch.watch(connection.id, () => void heard++, stop.signal)
    .then(() => void (baselined = true));
  await new Promise((resolve) => setTimeout(resolve, 50));
  assertEquals(baselined, false, "resolved before the baseline was read");
  first();
  await baseline;
  schema = "v2";
  await waitUntil("the change after the baseline to be heard", () => heard > 0);
  assertEquals(heard, 1);
  stop.abort();
});
