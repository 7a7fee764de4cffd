import { assertEquals } from "@std/assert";
import { BatchWriter, ROWS_PER_INSERT } from "../../lib/app/batch_writer.ts";
import { openStateDb } from "../../lib/app/state_db.ts";

Deno.test("BatchWriter writes a batch larger than one INSERT, every row in order", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-batch-" });
  const db = await openStateDb(home);
  try {
    await db.client.execute("CREATE TABLE t (n INTEGER, label TEXT)");
    const errors: string[] = [];
    const writer = new BatchWriter<number>(db, {
      table: "t",
      columns: ["n", "label"],
      args: (n) => [n, `row ${n}`],
      what: "rows",
      onError: (message) => errors.push(message),
    });
    const count = ROWS_PER_INSERT * 2 + 7;
    for (let n = 0; n < count; n++) writer.push(n);
    await writer.flush();
    const rows =
      (await db.client.execute("SELECT n, label FROM t ORDER BY rowid"))
        .rows.map((row) => [Number(row.n), String(row.label)]);
    assertEquals(rows.length, count);
    assertEquals(rows[0], [0, "row 0"]);
    assertEquals(rows[count - 1], [count - 1, `row ${count - 1}`]);
    assertEquals(rows.every(([n], i) => n === i), true);
    assertEquals(errors, []);
  } finally {
    db.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("BatchWriter reports a batch it could not write and drops it", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-batch-" });
  const db = await openStateDb(home);
  try {
    const errors: string[] = [];
    const writer = new BatchWriter<number>(db, {
      table: "missing",
      columns: ["n"],
      args: (n) => [n],
      what: "rows",
      onError: (message) => errors.push(message),
    });
    writer.push(1);
    await writer.flush();
    assertEquals(errors.length, 1);
    assertEquals(errors[0]!.startsWith("dbport: could not write 1 rows"), true);
  } finally {
    db.close();
    await Deno.remove(home, { recursive: true });
  }
});
