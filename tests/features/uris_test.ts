import { assertEquals } from "@std/assert";
import {
  parseResourceUri,
  schemaUri,
} from "../../lib/features/resources/uris.ts";

const ID = "0f8fad5b-d9cb-469f-a165-70867728950e";
const ROOT = "dbport://connections";

Deno.test("parseResourceUri() reads every kind, with its query", () => {
  assertEquals(parseResourceUri(ROOT), {
    ok: true,
    ref: { kind: "connections" },
  });
  assertEquals(parseResourceUri(`${ROOT}/`), {
    ok: true,
    ref: { kind: "connections" },
  });
  assertEquals(parseResourceUri(`${ROOT}/${ID}/schema`), {
    ok: true,
    ref: { kind: "schema", connectionId: ID },
  });
  assertEquals(parseResourceUri(`${ROOT}/${ID}/schema?schema=sales`), {
    ok: true,
    ref: { kind: "schema", connectionId: ID, schema: "sales" },
  });
  assertEquals(parseResourceUri(`${ROOT}/${ID}/tables?schema=public`), {
    ok: true,
    ref: { kind: "tables", connectionId: ID, schema: "public" },
  });
  assertEquals(parseResourceUri(`${ROOT}/${ID}/tables/a%2Fb%20c?schema=s`), {
    ok: true,
    ref: { kind: "table", connectionId: ID, table: "a/b c", schema: "s" },
  });
  assertEquals(parseResourceUri(`${ROOT}/${ID}/history`), {
    ok: true,
    ref: { kind: "history", connectionId: ID, limit: 50 },
  });
  assertEquals(parseResourceUri(`${ROOT}/${ID}/history?limit=500#top`), {
    ok: true,
    ref: { kind: "history", connectionId: ID, limit: 500 },
  });
});

Deno.test("parseResourceUri() compares scheme, host and id case-insensitively", () => {
  assertEquals(
    parseResourceUri(`DBPORT://Connections/${ID.toUpperCase()}/schema`),
    { ok: true, ref: { kind: "schema", connectionId: ID } },
  );
});

Deno.test("parseResourceUri() leaves other schemes to other providers", () => {
  for (const uri of ["file:///etc/passwd", "not a uri", "https://x/y"]) {
    assertEquals(parseResourceUri(uri), { ok: false, ours: false }, uri);
  }
});

Deno.test("parseResourceUri() names the problem with a URI of ours", () => {
  const cases: [string, string][] = [
    [`dbport://elsewhere/${ID}/schema`, "not under dbport://connections"],
    [`${ROOT}/Shop/schema`, '"Shop" is not a connection id'],
    [`${ROOT}/${ID}`, "has no resource of its own"],
    [`${ROOT}/${ID}/bogus`, '"bogus" is not a resource'],
    [`${ROOT}/${ID}/schema/more`, "no such resource"],
    [`${ROOT}/${ID}/tables/users/statistics`, "no such resource"],
    [`${ROOT}/${ID}/tables/%20`, "must not be empty"],
    [`${ROOT}/${ID}/tables/%E0%A4%A`, "percent-encoding"],
    [`${ROOT}/${ID}/history?limit=0`, "from 1 to 500, got 0"],
    [`${ROOT}/${ID}/history?limit=501`, "from 1 to 500, got 501"],
    [`${ROOT}/${ID}/history?limit=ten`, 'got "ten"'],
    [`${ROOT}/${ID}/history?limit=5&limit=6`, "repeated"],
    [
      `${ROOT}/${ID}/schema?limit=5`,
      '"limit" is not one this resource takes (it takes schema)',
    ],
    [`${ROOT}/${ID}/schema?schema=`, "must not be empty"],
    [`${ROOT}/${ID}/tables?schema=`, "must not be empty"],
  ];
  for (const [uri, problem] of cases) {
    const parsed = parseResourceUri(uri);
    assertEquals(parsed.ok, false, uri);
    if (!parsed.ok && parsed.ours) {
      assertEquals(parsed.problem.includes(problem), true, parsed.problem);
    } else {
      throw new Error(`${uri} was not recognised as ours`);
    }
  }
});

Deno.test("schemaUri() round-trips through parseResourceUri()", () => {
  assertEquals(parseResourceUri(schemaUri(ID)), {
    ok: true,
    ref: { kind: "schema", connectionId: ID },
  });
});
