/**
 * A cancelled export creates no file: a cancel that lands while the
 * statement is vetted (the client already has its `-33002`) stops the call
 * before the file is opened, so no partial file appears after the answer.
 */

import { assertEquals, assertRejects } from "@std/assert";
import { exportQueryTool } from "../../lib/features/tools/export_query.ts";
import { RequestStopped } from "../../lib/server/inflight.ts";
import type { QueryOptions } from "../../lib/db/types.ts";
import {
  callContext,
  fakeConnection,
  fakeDeps,
  FakeDriver,
  principalWith,
} from "../_fake_driver.ts";

/** A fake driver that cancels the call while its statement is vetted. */
class CancelledWhileVetted extends FakeDriver {
  streamed = 0;
  constructor(readonly control: AbortController) {
    super();
  }
  override check() {
    this.control.abort(new RequestStopped("cancelled"));
    return super.check();
  }
  streamRead(
    _text: string,
    _options: QueryOptions,
    _onBatch: unknown,
  ): Promise<void> {
    this.streamed++;
    return Promise.resolve();
  }
}

Deno.test("export_query cancelled while its statement is vetted opens no file and never streams", async () => {
  const control = new AbortController();
  const driver = new CancelledWhileVetted(control);
  const connection = fakeConnection();
  const deps = fakeDeps([connection], { driver });
  const ctx = callContext(principalWith(["tools:read", "resources:read"]), {
    signal: control.signal,
  });
  await assertRejects(
    () =>
      exportQueryTool(deps).call({
        connection_id: connection.id,
        query: "select 1 as one",
        format: "csv",
      }, ctx),
    RequestStopped,
  );
  assertEquals(driver.streamed, 0);
  const dir = deps.exportDirectory();
  const files: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) files.push(entry.name);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  assertEquals(files, []);
  await Deno.remove(dir, { recursive: true }).catch(() => {});
});
