import { assertEquals, assertRejects } from "@std/assert";
import { DEFAULT_SETTINGS } from "../../lib/app/settings.ts";
import { exportFileName } from "../../lib/features/tools/export_file.ts";
import {
  exportedBytes,
  exportRoom,
} from "../../lib/features/tools/export_quota.ts";
import { ToolFailure } from "../../lib/features/tools/failure.ts";

Deno.test("exportRoom() leaves one export what the total bound has left, and refuses when full", async () => {
  const dir = await Deno.makeTempDir({ prefix: "fix44_exports_" });
  try {
    const settings = {
      ...DEFAULT_SETTINGS,
      maxExportBytes: 3_000,
      maxExportTotalBytes: 5_000,
    };
    assertEquals(await exportRoom(dir, settings), {
      bytes: 3_000,
      setting: "maxExportBytes (3000 bytes)",
    });
    await Deno.writeTextFile(
      `${dir}/${exportFileName("shop", "csv")}`,
      "x".repeat(4_000),
    );
    // The user's own files are neither counted nor touched.
    await Deno.writeTextFile(`${dir}/notes.txt`, "y".repeat(9_000));
    assertEquals(await exportedBytes(dir), 4_000);
    const room = await exportRoom(dir, settings);
    assertEquals(room.bytes, 1_000);
    assertEquals(
      room.setting,
      "maxExportTotalBytes (5000 bytes for all exports; 1000 were left)",
    );
    await Deno.writeTextFile(
      `${dir}/${exportFileName("shop", "csv")}`,
      "x".repeat(1_000),
    );
    const error = await assertRejects(
      () => exportRoom(dir, settings),
      ToolFailure,
    );
    assertEquals(error.code, "denied");
    // Unset, the total bound is one file's limit.
    const full = await assertRejects(
      () => exportRoom(dir, { ...settings, maxExportTotalBytes: null }),
      ToolFailure,
    );
    assertEquals(
      full.message.includes("maxExportTotalBytes (3000 bytes)"),
      true,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
