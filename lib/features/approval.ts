/**
 * The write gate's public face: what the server's approvals (the
 * `input_required` round and the console's pending list) and the console's
 * Query page (a write's preview, shown before the owner confirms it) need of
 * consent and of a write's preview. The gate itself is consent.ts (what to ask), the
 * tools' access.ts (`admit`, `admitStatement`), preview.ts (the dry run) and
 * preview_text.ts (how a preview reads); neither the server nor the console
 * imports any of them.
 *
 * @module
 */

export {
  type Consent,
  type ConsentAsk,
  type ConsentKind,
  describeStatement,
  NeedsInput,
} from "./consent.ts";
export { ToolFailure } from "./tools/failure.ts";
export {
  changedMessage,
  previewDigest,
  previewHeadline,
  previewJson,
} from "./tools/preview_text.ts";
export type { WritePreview } from "./tools/write_preview.ts";
