/**
 * A statement as the person approving it must see it: control characters and
 * invisible or direction-changing characters made visible (U+240D for a
 * carriage return, `\u0001`, `\u200b`), and a note when names or
 * dollar-quote tags use letters beyond ASCII - so no statement can look
 * harmless in a dialog while the engine reads something else
 * (docs/security.md "Approvals").
 *
 * @module
 */

/** Characters that change or hide what is shown, other than the line feed. */
const HIDDEN =
  // deno-lint-ignore no-control-regex
  /[\x00-\x09\x0b-\x1f\x7f-\x9f\u00a0\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]/g;

const NAMED: Readonly<Record<string, string>> = {
  "\r": "\u240d",
  "\t": "\u2409",
  "\x00": "\u2400",
};

function shown(c: string): string {
  return NAMED[c] ??
    `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** `statement` with every hidden character made visible. */
export function visibleStatement(statement: string): string {
  return statement.replace(HIDDEN, shown);
}

/** Words, and dollar-quote tags, that use letters beyond ASCII. */
export function nonAsciiNames(statement: string): string[] {
  const found = new Set<string>();
  for (const match of statement.matchAll(/\$[^\s$]*[^\0-\x7f][^\s$]*\$/g)) {
    found.add(match[0]);
  }
  for (const match of statement.matchAll(/[\p{L}\p{N}_$]+/gu)) {
    if (/[^\0-\x7f]/.test(match[0])) found.add(match[0]);
  }
  return [...found].slice(0, 5);
}

/** The statement as a dialog shows it, with a note on non-ASCII names. */
export function statementForApproval(statement: string): string {
  const text = visibleStatement(statement);
  const names = nonAsciiNames(statement);
  const hidden = text !== statement;
  const notes = [
    ...(hidden
      ? [
        "Note: this statement holds control or invisible characters, shown above as \u240d, \u2409 or \\uXXXX.",
      ]
      : []),
    ...(names.length > 0
      ? [
        `Note: names or dollar-quote tags here use letters beyond ASCII (${
          names.map((n) => JSON.stringify(visibleStatement(n))).join(", ")
        }); check that they are what they seem.`,
      ]
      : []),
  ];
  return notes.length === 0 ? text : `${text}\n\n${notes.join("\n")}`;
}
