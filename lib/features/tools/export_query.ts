/**
 * `export_query`: a read's whole result streamed into a new file on the
 * user's machine (CSV or JSON lines), for results too big for a model's
 * context. The statement takes execute_query's path (vet.ts: resolution,
 * classification, policy, the engine's check) and must be a read; the
 * answer names the file, its rows, bytes and columns and at most five
 * sample rows — never the data. Memory stays bounded (Driver.streamRead);
 * progress frames count the rows written; a cancellation, the timeout or an
 * export limit stops it and removes the partial file (docs/wire.md
 * "export_query").
 *
 * @module
 */

import * as s from "../../base/schema.ts";
import { Budget } from "../../db/budget.ts";
import type { Cell } from "../../db/types.ts";
import { DbError } from "../../db/errors.ts";
import type { ToolEntry } from "../catalog.ts";
import { callSettings, type FeatureDeps } from "../deps.ts";
import { type CallContext, withinDeadline } from "../context.ts";
import type { Settings } from "../../app/settings.ts";
import type { Resolved } from "./resolved.ts";
import { checkConnectionId } from "./access.ts";
import { defineTool } from "./define.ts";
import {
  ensureExportDirectory,
  EXPORT_FORMATS,
  exportFileName,
  type ExportFormat,
  ExportLimit,
  type ExportLimits,
  ExportWriter,
} from "./export_file.ts";
import { rethrow, ToolFailure } from "./failure.ts";
import { CONNECTION_ID } from "./shared.ts";
import {
  QUERY,
  queryText,
  TIMEOUT_SECONDS,
  timeoutSeconds,
} from "./statement.ts";
import { vetStatement } from "./vet.ts";
import { answerBudget } from "./answer_budget.ts";
import { namesWithin } from "./result_set.ts";
import { exportRoom } from "./export_quota.ts";
import { refusePrivate } from "./private_refusal.ts";
import { signatureOf } from "./sign.ts";

/** Sample rows in the answer, and how long a sample cell may be. */
const SAMPLE_ROWS = 5;
const SAMPLE_CELL_CHARS = 200;
/** At most one progress frame this often. */
const PROGRESS_EVERY_MS = 500;

/** What `export_query` answers. */
const OUTPUT = s.object({
  path: s.string(),
  format: s.enumOf(EXPORT_FORMATS),
  rows: s.integer({ minimum: 0 }),
  bytes: s.integer({ minimum: 0 }),
  columns: s.array(s.string()),
  columns_cut: s.string({
    description: "Which column names the answer left out or cut.",
  }),
  sample_rows: s.array({ type: "array" }, {
    description:
      "The first rows (at most 5), cells as execute_query encodes them, long ones cut.",
  }),
  execution_time_ms: s.number({ minimum: 0 }),
}, [
  "path",
  "format",
  "rows",
  "bytes",
  "columns",
  "sample_rows",
  "execution_time_ms",
]);

/** The `export_query` tool. */
export function exportQueryTool(deps: FeatureDeps): ToolEntry {
  return defineTool({
    name: "export_query",
    description:
      "Write a read's whole result to a CSV or JSON-lines file for the user; answers the path, counts and 5 sample rows.",
    arguments: {
      properties: {
        connection_id: CONNECTION_ID,
        query: QUERY,
        format: s.choice(EXPORT_FORMATS),
        timeout_seconds: TIMEOUT_SECONDS,
      },
      required: ["connection_id", "query", "format"],
    },
    outputSchema: OUTPUT,
    annotations: {
      title: "Export query",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
    async run(args, ctx) {
      const settings = callSettings(deps, ctx);
      checkConnectionId(args.connection_id);
      const query = queryText(args);
      ctx.record?.({ sql: query });
      const format = args.format as ExportFormat;
      const timeout = timeoutSeconds(args, settings);
      ctx.progress(0, 1, "Checking the statement");
      const { resolved, statement } = await vetStatement(deps, ctx, {
        connectionId: args.connection_id,
        query,
        timeoutSeconds: timeout,
        operation: "an export",
        readsOnly: true,
      });
      const { path, writer } = await openExport(
        deps,
        ctx,
        settings,
        exportFileName(resolved.connection.name, format),
        format,
      );
      const sample = new Budget({
        maxRows: SAMPLE_ROWS,
        maxBytes: 10_000,
        maxCellChars: SAMPLE_CELL_CHARS,
      });
      const started = performance.now();
      ctx.progress(0.1, 1, `Exporting from ${resolved.label}`);
      await streamExport(resolved, ctx, {
        text: statement.text,
        timeout,
        settings,
        path,
        writer,
        sample,
      });
      writer.close();
      ctx.budget?.spent("read", writer.rows);
      const took = Math.round((performance.now() - started) * 100) / 100;
      ctx.progress(
        1,
        1,
        `Exported ${writer.rows} rows (${writer.bytes} bytes) to ${path}`,
      );
      return {
        path,
        format,
        rows: writer.rows,
        bytes: writer.bytes,
        ...namesWithin(writer.columns, answerBudget(settings) / 4),
        // A first row wider than its share is left out (the file has it).
        sample_rows: JSON.stringify(sample.rows).length <=
            answerBudget(settings) / 4
          ? sample.rows
          : [],
        execution_time_ms: took,
      };
    },
  });
}

/**
 * The new export file in the call's exports directory (its settings
 * snapshot first, the default directory else), made unless the call was
 * stopped, bounded by the export limits and the directory's room left.
 */
async function openExport(
  deps: FeatureDeps,
  ctx: CallContext,
  settings: Settings,
  name: string,
  format: ExportFormat,
): Promise<{ path: string; writer: ExportWriter }> {
  // The call's settings snapshot first; the default directory else.
  const dir = settings.exportDirectory ?? deps.exportDirectory();
  const path = `${dir}/${name}`;
  await ensureExportDirectory(dir).catch(cannotWrite);
  const room = await exportRoom(dir, settings).catch((error) =>
    error instanceof ToolFailure ? Promise.reject(error) : cannotWrite(error)
  );
  const writer = await createUnlessStopped(ctx.signal, path, format, {
    rows: settings.maxExportRows,
    bytes: room.bytes,
    bytesSetting: room.setting,
  });
  return { path, writer };
}

/**
 * The read's rows streamed into `export.writer` (the first ones into
 * `export.sample`), progress reported as they are written. On a failure,
 * a cancel or an export limit, the partial file is closed and removed and
 * the call fails naming why.
 */
async function streamExport(
  resolved: Resolved,
  ctx: CallContext,
  exported: {
    text: string;
    timeout: number;
    settings: Settings;
    path: string;
    writer: ExportWriter;
    sample: Budget;
  },
): Promise<void> {
  const { timeout, settings, path, writer, sample } = exported;
  let limit: ExportLimit | null = null;
  let lastProgress = 0;
  try {
    const stream = resolved.driver.streamRead;
    if (stream === undefined) {
      throw new ToolFailure(
        "unsupported",
        "this connection cannot stream a result to a file",
      );
    }
    await stream.call(resolved.driver, exported.text, {
      mode: "read",
      maxRows: settings.maxExportRows,
      maxBytes: settings.maxExportBytes,
      maxCellChars: Number.MAX_SAFE_INTEGER,
      timeoutMs: withinDeadline(ctx, timeout * 1000),
      signal: ctx.signal,
      sign: signatureOf(ctx),
    }, async (columns: string[], rows: Cell[][]) => {
      if (ctx.signal.aborted) {
        throw new DbError("cancelled", "the export was cancelled");
      }
      for (const row of rows) {
        if (!sample.open) break;
        sample.add([...row]);
      }
      await writer.write(columns, rows).catch((error) => {
        if (error instanceof ExportLimit) limit = error;
        throw error;
      });
      const now = performance.now();
      if (now - lastProgress >= PROGRESS_EVERY_MS) {
        lastProgress = now;
        // Advancing and below 1 whatever the count.
        const rowsSoFar = writer.rows;
        ctx.progress(
          0.1 + 0.89 * (rowsSoFar / (rowsSoFar + 100_000)),
          1,
          `Wrote ${rowsSoFar.toLocaleString("en-US")} rows (${
            writer.bytes.toLocaleString("en-US")
          } bytes)`,
        );
      }
    });
    // A cancel that landed as the stream ended (after its last batch):
    // the client was answered as cancelled, so the file goes too.
    if (ctx.signal.aborted) {
      throw new DbError("cancelled", "the export was cancelled");
    }
  } catch (error) {
    writer.close();
    await Deno.remove(path).catch(() => {});
    if (limit !== null) {
      throw new ToolFailure(
        "denied",
        `the export stopped: ${
          (limit as ExportLimit).message
        }; the partial file was removed. Narrow the query, or ask the user to raise the limit in settings.json`,
      );
    }
    if (error instanceof ToolFailure) throw error;
    await refusePrivate(resolved, ctx, error);
    if (error instanceof DbError) rethrow(error, resolved.label);
    throw new ToolFailure(
      "internal_failure",
      "the export could not be written; the partial file was removed",
    );
  }
}

/**
 * Create the export file unless the call was stopped first: a call
 * cancelled while it was vetted (its answer already sent) creates no file,
 * and one stopped while the file was being created removes it at once.
 */
async function createUnlessStopped(
  signal: AbortSignal,
  path: string,
  format: ExportFormat,
  limits: ExportLimits,
): Promise<ExportWriter> {
  signal.throwIfAborted();
  const writer = await ExportWriter.create(path, format, limits).catch(
    cannotWrite,
  );
  if (signal.aborted) {
    writer.close();
    await Deno.remove(path).catch(() => {});
    signal.throwIfAborted();
  }
  return writer;
}

/** A failure to use the exports directory, as the client sees it. */
function cannotWrite(error: unknown): never {
  throw new ToolFailure(
    "internal_failure",
    `cannot write to the exports directory (exportDirectory): ${
      error instanceof Error ? error.name : "error"
    }`,
  );
}
