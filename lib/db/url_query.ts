/**
 * A connection URL's query string: where it stands and how it is split,
 * for every reader of one. It is read from the text alone (after the first
 * `?`, up to the `#` after it): a URL of several hosts (`h1:5432,h2:5432`)
 * is no WHATWG URL, and its parameters count still (outsider stop 51).
 *
 * Two decodings, each kept for its readers:
 *
 * - `urlQuery`: as the drivers read a URL (URLSearchParams: a malformed
 *   escape stays as written), for what a connection does.
 * - `rawQueryParts` with `decodedName` and `decodedValue`: each `name=value`
 *   part as written, to be decoded strictly (`decodeURIComponent`, `+` a
 *   space), for what is redacted or masked: both the written and the
 *   decoded form of a value are secrets (target.ts `queryValues`).
 *
 * Loaded at start-up (target.ts): ASCII only.
 *
 * @module
 */

/**
 * Where `url`'s query string stands, `[start, end)` (after its `?`, up to
 * its `#` or the end), or null when it has no `?`.
 */
export function querySpan(url: string): { start: number; end: number } | null {
  const at = url.indexOf("?");
  if (at < 0) return null;
  const hash = url.indexOf("#", at);
  return { start: at + 1, end: hash < 0 ? url.length : hash };
}

/** `url`'s query parameters, decoded as the drivers decode them. */
export function urlQuery(url: string): URLSearchParams {
  const span = querySpan(url);
  return new URLSearchParams(
    span === null ? "" : url.slice(span.start, span.end),
  );
}

/**
 * `url` with its query string replaced by `query` (none when empty), its
 * fragment kept unless `keepFragment` is false. `url` without a `?` is
 * returned as it is.
 */
export function withQuery(
  url: string,
  query: string,
  keepFragment = true,
): string {
  const span = querySpan(url);
  if (span === null) return url;
  return url.slice(0, span.start - 1) + (query === "" ? "" : `?${query}`) +
    (keepFragment ? url.slice(span.end) : "");
}

/** One `name=value` part of a query string, as written. */
export interface RawQueryPart {
  name: string;
  value: string;
  /** Where `value` stands in the URL: `[valueStart, valueEnd)`. */
  valueStart: number;
  valueEnd: number;
}

/**
 * The `name=value` parts of `url`'s query string as written, in order,
 * split at each `&` and at each part's first `=`; a part without `=` is
 * left out.
 */
export function rawQueryParts(url: string): RawQueryPart[] {
  const span = querySpan(url);
  if (span === null) return [];
  const parts: RawQueryPart[] = [];
  for (let start = span.start; start <= span.end;) {
    const amp = url.indexOf("&", start);
    const end = amp < 0 || amp > span.end ? span.end : amp;
    const eq = url.indexOf("=", start);
    if (eq >= 0 && eq < end) {
      parts.push({
        name: url.slice(start, eq),
        value: url.slice(eq + 1, end),
        valueStart: eq + 1,
        valueEnd: end,
      });
    }
    start = end + 1;
  }
  return parts;
}

/**
 * A query string's text decoded strictly (`+` a space), or null when it is
 * not percent-encoded as it should be.
 */
export function decodedValue(text: string): string | null {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    return null;
  }
}

/**
 * A query parameter's name as URLSearchParams reads it (pg_tls.ts does):
 * `%73slcert` is `sslcert`; one not percent-encoded as it should be, as
 * written.
 */
export function decodedName(name: string): string {
  return decodedValue(name) ?? name;
}

/**
 * The values of `names` in `url`'s query string (a name percent-encoded
 * too: `decodedName`), each as written and decoded (`decodedValue`), once
 * each, none empty.
 */
export function queryValues(url: string, names: readonly string[]): string[] {
  const values: string[] = [];
  for (const { name, value } of rawQueryParts(url)) {
    if (!names.includes(decodedName(name))) continue;
    values.push(value);
    // Not percent-encoded as it should be: the raw value only.
    const decoded = decodedValue(value);
    if (decoded !== null) values.push(decoded);
  }
  return [...new Set(values)].filter((value) => value !== "");
}
