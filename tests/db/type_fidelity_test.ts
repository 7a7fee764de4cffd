/**
 * Values exactly as stored, per engine: for each type a user meets, a row of
 * values stored by the engine itself and a row of SQL NULLs, read back
 * through the driver and compared cell by cell with the JSON encoding the
 * tools' output schema describes (lib/db/values.ts).
 */

import { assertEquals } from "@std/assert";
import { openDriver } from "../../lib/db/open_driver.ts";
import type { Cell, Engine } from "../../lib/db/types.ts";
import { type Fixture, needs, openFixture, READ_OPTIONS } from "../_db.ts";

const READ = READ_OPTIONS;

/** Column type, a literal the engine stores, and the cell that must come back. */
type Case = [type: string, literal: string, cell: Cell];

const UNICODE = "é👩‍👩‍👧 שלום\u200b\ttab\nline";

const POSTGRES: Case[] = [
  ["smallint", "-32768", -32768],
  ["integer", "2147483647", 2147483647],
  ["bigint", "-9223372036854775808", "-9223372036854775808"],
  ["bigint", "9007199254740993", "9007199254740993"],
  [
    "numeric",
    "12345678901234567890.123456789",
    "12345678901234567890.123456789",
  ],
  ["numeric", "'NaN'", "NaN"],
  ["money", "12.5", "$12.50"],
  ["double precision", "'NaN'", "NaN"],
  ["double precision", "'-Infinity'", "-Infinity"],
  ["double precision", "'-0'", "-0"],
  ["double precision", "1.5e300", 1.5e300],
  ["real", "0.1", 0.1],
  ["text", `'${UNICODE}'`, UNICODE],
  ["text", "'NULL'", "NULL"],
  ["bytea", "'\\x00ff10'", "AP8Q"],
  ["boolean", "false", false],
  ["date", "'2024-02-29'", "2024-02-29"],
  ["date", "'infinity'", "infinity"],
  ["time", "'13:14:15.5'", "13:14:15.5"],
  ["timetz", "'13:14:15+05:30'", "13:14:15+05:30"],
  ["timestamp", "'2024-02-29 13:14:15.123456'", "2024-02-29T13:14:15.123456"],
  [
    "timestamptz",
    "'2024-02-29 13:14:15.123456+02'",
    "2024-02-29T11:14:15.123456Z",
  ],
  [
    "interval",
    "'1 year 2 mons 3 days 04:05:06'",
    "1 year 2 mons 3 days 04:05:06",
  ],
  [
    "uuid",
    "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
    "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
  ],
  ["inet", "'192.168.0.1/24'", "192.168.0.1/24"],
  ["cidr", "'10.0.0.0/8'", "10.0.0.0/8"],
  ["json", "'null'", "null"],
  ["jsonb", "'null'", "null"],
  ["jsonb", `'"x"'`, '"x"'],
  ["jsonb", "'5'", "5"],
  ["jsonb", `'{"a": [1, null, "NULL"]}'`, { a: [1, null, "NULL"] }],
  ["int[]", "ARRAY[1, NULL]", [1, null]],
  ["text[]", "ARRAY['x', NULL, 'NULL', '', ' s ']", [
    "x",
    null,
    "NULL",
    "",
    " s ",
  ]],
  ["boolean[]", "ARRAY[true, NULL]", [true, null]],
  ["date[]", "ARRAY['2024-01-01'::date, NULL]", ["2024-01-01", null]],
  ["numeric[]", "ARRAY[1.50, NULL]", ["1.50", null]],
  ["jsonb[]", `ARRAY['{"a":1}'::jsonb, NULL]`, [{ a: 1 }, null]],
  ["text[][]", `'{{"a b","c,d"},{"e\\"f",NULL}}'`, [["a b", "c,d"], [
    'e"f',
    null,
  ]]],
  ["int[]", "'[0:1]={7,8}'", "[0:1]={7,8}"],
  ["mood[]", "ARRAY['ok', NULL]::mood[]", ["ok", null]],
  ["mood", "'sad'", "sad"],
  ["int4range", "'[1,2)'", "[1,2)"],
  ["bit(3)", "B'101'", "101"],
  ["point", "'(1,2)'", "(1,2)"],
  ["box", "'((0,0),(1,1))'", "(1,1),(0,0)"],
];

const MYSQL: Case[] = [
  ["tinyint", "-128", -128],
  ["bigint", "-9223372036854775808", "-9223372036854775808"],
  ["bigint unsigned", "18446744073709551615", "18446744073709551615"],
  [
    "decimal(40,9)",
    "12345678901234567890.123456789",
    "12345678901234567890.123456789",
  ],
  ["double", "1.5e300", 1.5e300],
  [
    "text",
    `'${UNICODE.replaceAll("\n", "\\n").replaceAll("\t", "\\t")}'`,
    UNICODE,
  ],
  ["text", "'NULL'", "NULL"],
  ["varbinary(8)", "X'00FF10'", "AP8Q"],
  ["boolean", "false", false],
  ["bit(1)", "b'1'", true],
  ["bit(8)", "b'101'", 5],
  ["date", "'2024-02-29'", "2024-02-29"],
  ["time", "'-838:59:59'", "-838:59:59"],
  ["datetime(6)", "'2024-02-29 13:14:15.123456'", "2024-02-29T13:14:15.123456"],
  [
    "timestamp(6)",
    "'2024-02-29 13:14:15.123456'",
    "2024-02-29T13:14:15.123456Z",
  ],
  ["year", "2024", 2024],
  ["enum('ok','sad')", "'sad'", "sad"],
  ["set('a','b')", "'a,b'", "a,b"],
  // MariaDB's JSON is text marked format=json: read as JSON like MySQL's.
  ["json", "'null'", "null"],
  ["json", `'"x"'`, '"x"'],
  ["json", `'{"a": [1, null]}'`, { a: [1, null] }],
];

const SQLITE: Case[] = [
  ["integer", "-9223372036854775808", "-9223372036854775808"],
  ["integer", "9007199254740991", 9007199254740991],
  ["real", "1.5e300", 1.5e300],
  ["real", "-0.0", 0],
  ["text", `'${UNICODE}'`, UNICODE],
  ["text", "'NULL'", "NULL"],
  ["blob", "X'00FF10'", "AP8Q"],
  ["boolean", "0", false],
  ["bigint", "9223372036854775807", "9223372036854775807"],
  // NUMERIC affinity stores the text as the real 12.5: that is what comes back.
  ["decimal(10,2)", "'12.50'", "12.5"],
  ["datetime", "'2024-02-29 13:14:15.123'", "2024-02-29T13:14:15.123"],
  ["json", "'null'", "null"],
  ["json", `'{"a": [1, null]}'`, { a: [1, null] }],
];

const CASES: Record<Engine, Case[]> = {
  postgres: POSTGRES,
  mysql: MYSQL,
  sqlite: SQLITE,
};

async function roundTrip(fixture: Fixture, cases: Case[]) {
  const table = fixture.engine === "postgres"
    ? `${fixture.schema}.fidelity`
    : "fidelity";
  if (fixture.engine === "postgres") {
    await fixture.admin(
      `create type ${fixture.schema}.mood as enum ('ok', 'sad')`,
    );
    await fixture.admin(`set search_path = ${fixture.schema}`);
  }
  await fixture.admin(
    `create table ${table} (${
      cases.map(([type], i) => `c${i} ${type}`).join(", ")
    })`,
  );
  await fixture.admin(
    `insert into ${table} values (${
      cases.map(([, literal]) => literal).join(", ")
    })`,
  );
  await fixture.admin(
    `insert into ${table} values (${cases.map(() => "null").join(", ")})`,
  );
  const url = fixture.engine === "postgres"
    ? `${fixture.url}?search_path=${fixture.schema}`
    : fixture.url;
  const driver = openDriver({ id: "f", engine: fixture.engine, url });
  try {
    const result = await driver.query(
      `select * from ${table} order by c0 is null`,
      READ,
    );
    const [stored, nulls] = result.rows;
    const wrong: string[] = [];
    cases.forEach(([type, literal, cell], i) => {
      const got = stored![i];
      if (JSON.stringify(got) !== JSON.stringify(cell)) {
        wrong.push(
          `${type} ${literal}: got ${JSON.stringify(got)}, wanted ${
            JSON.stringify(cell)
          }`,
        );
      }
    });
    assertEquals(wrong, []);
    // SQL NULL is null in every column, never a JSON "null" or false.
    assertEquals(nulls, cases.map(() => null));
  } finally {
    await driver.close();
  }
}

for (const engine of ["postgres", "mysql", "sqlite"] as const) {
  Deno.test(
    `${engine}: every type comes back exactly as stored, and SQL NULL as null`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      await roundTrip(fixture, CASES[engine]);
    },
  );
}
