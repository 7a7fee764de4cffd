/**
 * `dbport://docs/results`: how to read a tool's answer — how each value is
 * encoded, what a truncation means and how to get the rest, the answer
 * budget — and every tool's full output schema. tools/list stays lean
 * (docs/wire.md "Results"); a client reads this once and caches it: it is
 * the same for every caller and changes only with the server's version.
 *
 * @module
 */

import { URL_SCHEME } from "../../base/identity.ts";
import type { ResourceItem, ResourceProvider, ToolEntry } from "../catalog.ts";
import { CELL_ENCODING, TRUNCATION_REASONS } from "../tools/statement.ts";

/** The results documentation. */
export const RESULTS_DOC_URI = `${URL_SCHEME}://docs/results`;

/** The longest a client may cache it (the resource cache's own ceiling). */
const TTL_MS = 300_000;

const ITEM: ResourceItem = {
  uri: RESULTS_DOC_URI,
  name: "results",
  title: "How to read tool results",
  description:
    "Value encodings, truncation and the answer budget, and each tool's full output schema.",
  mimeType: "text/markdown",
};

/** The resource's text: the prose, then each tool's full output schema. */
export function resultsDoc(tools: readonly ToolEntry[]): string {
  const schemas = tools
    .filter((tool) => tool.outputSchema !== undefined)
    .map((tool) =>
      `### ${tool.definition.name}\n\n\`\`\`json\n${
        JSON.stringify(tool.outputSchema, null, 1)
      }\n\`\`\``
    );
  return [
    "# dbport results",
    "",
    "Every tool answers one JSON object, in `structuredContent` and as the one text item.",
    "",
    "## Values (execute_query rows, export_query JSON lines)",
    "",
    CELL_ENCODING,
    "",
    "## Truncation",
    "",
    TRUNCATION_REASONS,
    "",
    "## Output schemas",
    "",
    "tools/list names the fields every answer has; these are the full schemas.",
    "",
    ...schemas,
    "",
  ].join("\n");
}

/** The provider of `dbport://docs/results`: listed, public, cacheable. */
export function docsResources(tools: readonly ToolEntry[]): ResourceProvider {
  const text = resultsDoc(tools);
  return {
    list: () => Promise.resolve([ITEM]),
    read(uri) {
      if (uri.toLowerCase() !== RESULTS_DOC_URI) return Promise.resolve(null);
      return Promise.resolve({
        contents: [{ uri: RESULTS_DOC_URI, mimeType: "text/markdown", text }],
        ttlMs: TTL_MS,
      });
    },
  };
}
