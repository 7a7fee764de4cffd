/**
 * Discovery's public face: what the console's Schema page needs of the
 * discovery tools (`list_schemas`, `list_tables`, …) so that it pages the
 * same way they do. It is a face of its own rather than part of the write
 * gate's (approval.ts): listing tables reads the catalog and never reaches
 * consent or a preview, and the console imports nothing of
 * `lib/features/tools/` (tests/architecture_test.ts).
 *
 * @module
 */

export { LIST_LIMIT } from "./tools/discovery.ts";
