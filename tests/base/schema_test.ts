/**
 * lib/base/schema.ts: every kind's published JSON (byte for byte, keys in
 * the order given), its TypeScript type (the `@ts-expect-error` lines are
 * checked by `deno task check`), and what `issueOf` says of a wrong value.
 */

import { assertEquals } from "@std/assert";
import * as s from "../../lib/base/schema.ts";

const json = (schema: unknown) => JSON.stringify(schema);

Deno.test("each builder publishes its JSON Schema with the keys in the order given", () => {
  assertEquals(json(s.string()), '{"type":"string"}');
  assertEquals(
    json(s.string({ maxLength: 5, description: "d", default: "x" })),
    '{"type":"string","maxLength":5,"description":"d","default":"x"}',
  );
  assertEquals(
    json(s.choice(["csv", "jsonl"], { description: "f" })),
    '{"type":"string","enum":["csv","jsonl"],"description":"f"}',
  );
  assertEquals(json(s.enumOf(["a", "b"])), '{"enum":["a","b"]}');
  assertEquals(json(s.literal(true)), '{"const":true}');
  assertEquals(
    json(s.literal(true, { description: "p" })),
    '{"const":true,"description":"p"}',
  );
  assertEquals(
    json(s.integer({ minimum: 1, maximum: 300 })),
    '{"type":"integer","minimum":1,"maximum":300}',
  );
  assertEquals(json(s.number({ minimum: 0 })), '{"type":"number","minimum":0}');
  assertEquals(
    json(s.boolean({ description: "b" })),
    '{"type":"boolean","description":"b"}',
  );
  assertEquals(
    json(s.nullable(s.integer({ minimum: 0 }))),
    '{"type":["integer","null"],"minimum":0}',
  );
  assertEquals(json(s.any("plan")), '{"description":"plan"}');
  assertEquals(
    json(s.array(s.SCALAR, { maxItems: 3, description: "v" })),
    '{"type":"array","items":{"type":["string","number","boolean","null"]},"maxItems":3,"description":"v"}',
  );
  assertEquals(
    json(s.object({ a: s.string(), b: s.integer() }, ["b", "a"], {
      description: "o",
    })),
    '{"type":"object","description":"o","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["b","a"],"additionalProperties":false}',
  );
  // No required field: no `required` key at all.
  assertEquals(
    json(s.object({})),
    '{"type":"object","properties":{},"additionalProperties":false}',
  );
});

const optionalA = () => s.object({ a: s.string() });

const ROW = s.object({
  id: s.string(),
  port: s.nullable(s.integer()),
  kind: s.enumOf(["table", "view"]),
  tags: s.array(s.choice(["x", "y"])),
  private: s.literal(true),
  note: s.string(),
  plan: s.any("any JSON"),
}, ["id", "port", "kind", "tags", "plan"]);

Deno.test("Infer<> reads the TypeScript type from the schema", () => {
  const row: s.Infer<typeof ROW> = {
    id: "a",
    port: null,
    kind: "view",
    tags: ["x"],
    plan: { any: [1, "json"] },
    private: true,
  };
  // @ts-expect-error a required field may not be left out
  const missing: s.Infer<typeof ROW> = { ...row, id: undefined };
  // @ts-expect-error a value outside the enum is no `kind`
  const wrongKind: s.Infer<typeof ROW> = { ...row, kind: "index" };
  // @ts-expect-error a nullable integer is no string
  const wrongPort: s.Infer<typeof ROW> = { ...row, port: "5432" };
  // @ts-expect-error a const is only itself
  const notPrivate: s.Infer<typeof ROW> = { ...row, private: false };
  // @ts-expect-error an optional field is not there to read as a string
  const note: string = row.note;
  assertEquals([missing, wrongKind, wrongPort, notPrivate, note].length, 5);
  // Same<>: a type and its schema's, optional fields included.
  const same: s.Same<{ a?: string }, s.Infer<ReturnType<typeof optionalA>>> =
    true;
  // @ts-expect-error one optional field more is another type
  const more: s.Same<{ a?: string; b?: string }, { a?: string }> = true;
  assertEquals([same, more], [true, true]);
  assertEquals(s.is(ROW, row), true);
});

const ARGS = s.object({
  connection_id: s.string(),
  max_rows: s.integer({ minimum: 1 }),
  format: s.choice(["csv", "jsonl"]),
  kinds: s.array(s.choice(["table", "view"]), { uniqueItems: true }),
  params: s.array(s.SCALAR, { maxItems: 2 }),
  verbose: s.boolean(),
  ratio: s.number(),
}, ["connection_id"]);

Deno.test("issueOf() names the field and says what it must be, quoting nothing itself", () => {
  const cases: [unknown, s.Issue][] = [
    [{ connection_id: 1 }, {
      kind: "type",
      path: ["connection_id"],
      expected: "a string",
      value: 1,
    }],
    [{ connection_id: "c", max_rows: 1.5 }, {
      kind: "type",
      path: ["max_rows"],
      expected: "an integer",
      value: 1.5,
    }],
    [{ connection_id: "c", format: "xml" }, {
      kind: "type",
      path: ["format"],
      expected: 'one of "csv", "jsonl"',
      value: "xml",
    }],
    [{ connection_id: "c", kinds: ["table", "table"] }, {
      kind: "type",
      path: ["kinds"],
      expected: 'a list of distinct values of "table", "view"',
      value: ["table", "table"],
    }],
    [{ connection_id: "c", params: [1, 2, 3] }, {
      kind: "type",
      path: ["params"],
      expected: "a list of strings, numbers, booleans or nulls (at most 2)",
      value: [1, 2, 3],
    }],
    [{ connection_id: "c", params: [{}] }, {
      kind: "type",
      path: ["params"],
      expected: "a list of strings, numbers, booleans or nulls (at most 2)",
      value: [{}],
    }],
    [{ connection_id: "c", verbose: "yes" }, {
      kind: "type",
      path: ["verbose"],
      expected: "true or false",
      value: "yes",
    }],
    [{ connection_id: "c", ratio: Infinity }, {
      kind: "type",
      path: ["ratio"],
      expected: "a number",
      value: Infinity,
    }],
    [[], { kind: "type", path: [], expected: "an object", value: [] }],
  ];
  for (const [value, issue] of cases) {
    assertEquals(s.issueOf(ARGS, value), issue, JSON.stringify(value));
  }
  // Well typed, out of range: not the schema's business unless asked.
  assertEquals(s.issueOf(ARGS, { connection_id: "c", max_rows: 0 }), null);
});

Deno.test("issueOf() checks names, then required fields, then values; own keys only", () => {
  assertEquals(s.issueOf(ARGS, { other: 1, connection_id: 2 }), {
    kind: "unknown",
    path: [],
    key: "other",
    known: [
      "connection_id",
      "max_rows",
      "format",
      "kinds",
      "params",
      "verbose",
      "ratio",
    ],
  });
  assertEquals(s.issueOf(ARGS, { format: 1 }), {
    kind: "required",
    path: [],
    key: "connection_id",
  });
  for (const name of ["__proto__", "toString", "constructor"]) {
    const value = JSON.parse(`{"connection_id": "x", "${name}": 1}`);
    assertEquals(s.issueOf(ARGS, value)?.kind, "unknown", name);
  }
  // An inherited value is not a given one.
  assertEquals(
    s.issueOf(ARGS, Object.create({ connection_id: "inherited" }))?.kind,
    "required",
  );
});

Deno.test("issueOf() walks into lists of objects and nested objects, naming the place", () => {
  const list = s.object({ rows: s.array(ROW) }, ["rows"]);
  const good = {
    id: "a",
    port: 1,
    kind: "table",
    tags: [],
    plan: null,
  };
  assertEquals(s.issueOf(list, { rows: [good, { ...good, port: "x" }] }), {
    kind: "type",
    path: ["rows", 1, "port"],
    expected: "an integer or null",
    value: "x",
  });
  assertEquals(s.issueOf(list, { rows: [good, { ...good, private: false }] }), {
    kind: "type",
    path: ["rows", 1, "private"],
    expected: "true",
    value: false,
  });
  assertEquals(s.issueOf(list, { rows: [good] }), null);
});

Deno.test("issueOf() with bounds checks and says minimum, maximum and maxLength", () => {
  const limits = s.object({
    port: s.integer({ minimum: 0, maximum: 65535 }),
    rows: s.integer({ minimum: 1 }),
    text: s.string({ maxLength: 3 }),
  });
  const at = (value: unknown) =>
    s.issueOf(limits, value, { bounds: true }) as { expected: string } | null;
  assertEquals(at({ port: 70000 })?.expected, "an integer from 0 to 65535");
  assertEquals(at({ rows: 0 })?.expected, "an integer of at least 1");
  assertEquals(
    at({ text: "long" })?.expected,
    "a string of at most 3 characters",
  );
  assertEquals(at({ port: 0, rows: 1, text: "abc" }), null);
});

Deno.test("shown() quotes a value as JSON, cut at 200 characters, non-finite numbers as themselves", () => {
  assertEquals(s.shown("x"), '"x"');
  // 1e999 parses to Infinity: said as such, never as JSON's null.
  assertEquals(
    s.shown([Infinity, -Infinity, NaN]),
    '["Infinity","-Infinity","NaN"]',
  );
  assertEquals(s.shown(undefined), "undefined");
  const long = s.shown("a".repeat(500));
  assertEquals(long, `"${"a".repeat(199)}… (502 characters)`);
});

Deno.test("refine(): its own check decides and says the problem; the published JSON stays the schema's", () => {
  const even = s.refine(
    s.integer({ description: "e" }),
    (value) =>
      typeof value === "number" && value % 2 === 0 ? null : "must be even",
  );
  assertEquals(json(even), '{"type":"integer","description":"e"}');
  assertEquals(s.issueOf(s.object({ n: even }), { n: 3 }), {
    kind: "invalid",
    path: ["n"],
    problem: "must be even",
    value: 3,
  });
  assertEquals(s.issueOf(even, 4), null);
  // A type JSON Schema cannot say: the check's, read by Infer.
  const word = s.refine<s.AnySchema, "on" | { at: number }>(
    s.any("on, or a time"),
    (value) => value === "on" ? null : "must be on",
  );
  const on: s.Infer<typeof word> = "on";
  // @ts-expect-error "off" is not the refined type
  const off: s.Infer<typeof word> = "off";
  assertEquals([s.issueOf(word, on), s.issueOf(word, off)?.kind], [
    null,
    "invalid",
  ]);
});

Deno.test("firstFieldIssue(): fields in declared order, absent required ones checked as undefined, others' fields left alone", () => {
  const file = s.object({
    version: s.literal(1),
    port: s.refine(
      s.integer(),
      (v) => typeof v === "number" ? null : "the port is not a number",
    ),
    note: s.string(),
  }, ["version", "port"]);
  // Given last, declared first: the version is said first.
  assertEquals(s.firstFieldIssue(file, { port: "x", version: 2 }), {
    kind: "type",
    path: ["version"],
    expected: "1",
    value: 2,
  });
  assertEquals(s.firstFieldIssue(file, { version: 1 }), {
    kind: "invalid",
    path: ["port"],
    problem: "the port is not a number",
    value: undefined,
  });
  assertEquals(
    s.firstFieldIssue(file, { version: 1, port: 2, newer: true }),
    null,
  );
});
