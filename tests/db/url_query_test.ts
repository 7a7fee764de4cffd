/**
 * url_query.ts: one reading of where a URL's query string stands, and its
 * two decodings side by side — the drivers' (URLSearchParams: a malformed
 * escape stays as written) and the strict one redaction uses (both forms of
 * a value, a name decoded by decodeURIComponent or kept as written).
 */
import { assertEquals } from "@std/assert";
import {
  decodedName,
  decodedValue,
  queryValues,
  rawQueryParts,
  urlQuery,
  withQuery,
} from "../../lib/db/url_query.ts";

Deno.test("the query string stands after the first '?' up to the '#' after it, in a URL of several hosts too", () => {
  const url = "postgres://u@h1:5432,h2:5433/db?sslmode=require&a=1#sslmode=x";
  assertEquals([...urlQuery(url)], [["sslmode", "require"], ["a", "1"]]);
  assertEquals([...urlQuery("postgres://h/db#x=1")], []);
  assertEquals([...urlQuery("?a=1")], [["a", "1"]]);
  assertEquals(
    rawQueryParts(url).map((part) => [part.name, part.value]),
    [["sslmode", "require"], ["a", "1"]],
  );
});

Deno.test("the two decodings differ on a malformed escape: the drivers keep it as written, redaction keeps only the raw form", () => {
  const url = "postgres://h/db?sslpassword=p%zz&ssl%70assword=a+b%21";
  assertEquals(urlQuery(url).getAll("sslpassword"), ["p%zz", "a b!"]);
  assertEquals(decodedValue("p%zz"), null);
  assertEquals(decodedValue("a+b%21"), "a b!");
  assertEquals(queryValues(url, ["sslpassword"]), ["p%zz", "a+b%21", "a b!"]);
  assertEquals(decodedName("ssl%70assword"), "sslpassword");
  assertEquals(decodedName("ssl%zz"), "ssl%zz");
});

Deno.test("rawQueryParts skips a part without '=', splits at a part's first '=' and says where each value stands", () => {
  const url = "libsql://h?flag&authToken=a=b&&x=";
  const parts = rawQueryParts(url);
  assertEquals(
    parts.map((part) => [part.name, part.value]),
    [["authToken", "a=b"], ["x", ""]],
  );
  for (const part of parts) {
    assertEquals(url.slice(part.valueStart, part.valueEnd), part.value);
  }
  assertEquals(queryValues(url, ["authToken", "x"]), ["a=b"]);
});

Deno.test("withQuery replaces the query string, keeping the fragment unless told not to; a URL without '?' is left as it is", () => {
  assertEquals(
    withQuery("postgres://h/db?a=1#f", "b=2"),
    "postgres://h/db?b=2#f",
  );
  assertEquals(withQuery("postgres://h/db?a=1#f", ""), "postgres://h/db#f");
  assertEquals(
    withQuery("postgres://h/db?a=1#f", "b=2", false),
    "postgres://h/db?b=2",
  );
  assertEquals(withQuery("postgres://h/db#f", "b=2"), "postgres://h/db#f");
});
