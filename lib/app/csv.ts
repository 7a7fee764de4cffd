/**
 * CSV per RFC 4180, shared by every file dbport writes (the query history's
 * export, `export_query`): fields quoted when they must be, and a text a
 * spreadsheet would run as a formula disarmed.
 *
 * @module
 */

/** A number written as text ("-12.50", "+1e3"): data, not a formula. */
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * One CSV field, quoted when it must be; a text a spreadsheet would run as a
 * formula (`=`, `+`, `-`, `@`, a tab or a carriage return first) gets a
 * leading `'`, unless it is a plain number.
 */
export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return "";
  if (typeof value !== "string") return String(value);
  const text = /^[=+\-@\t\r]/.test(value) && !NUMBER.test(value)
    ? `'${value}`
    : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV record, ended by CRLF as RFC 4180 has it. */
export function csvRecord(
  values: readonly (string | number | boolean | null)[],
): string {
  return `${values.map(csvCell).join(",")}\r\n`;
}
