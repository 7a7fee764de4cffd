/**
 * One MCP Apps view as a self-contained HTML5 document: its style and script
 * inline, nothing fetched. The document carries its own Content Security
 * Policy, stricter than the spec's host default: no network of any kind
 * (`default-src 'none'`, `connect-src 'none'`), no frames, forms or base
 * URI, and only the exact inline style and script of this document (by
 * SHA-256 hash, not `'unsafe-inline'`), so nothing a cell's text might
 * smuggle in could run even if it reached the markup. The views build their
 * DOM with `textContent`, never `innerHTML`, so it does not.
 *
 * @module
 */

import { createHash } from "node:crypto";

/** What makes a view: its title, style sheet and script (plain JavaScript). */
export interface ViewParts {
  title: string;
  css: string;
  script: string;
}

function sha256(text: string): string {
  return `'sha256-${createHash("sha256").update(text).digest("base64")}'`;
}

/** The view's document. */
export function viewPage(parts: ViewParts): string {
  const policy = [
    "default-src 'none'",
    `script-src ${sha256(parts.script)}`,
    `style-src ${sha256(parts.css)}`,
    "img-src data:",
    "connect-src 'none'",
    "font-src 'none'",
    "media-src 'none'",
    "frame-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  return [
    "<!DOCTYPE html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${policy}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${parts.title}</title>`,
    `<style>${parts.css}</style>`,
    "</head>",
    '<body><main id="app"><p class="wait">Waiting for the result…</p></main>',
    `<script>${parts.script}</script>`,
    "</body>",
    "</html>",
    "",
  ].join("\n");
}
