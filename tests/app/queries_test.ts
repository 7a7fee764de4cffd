/**
 * The saved-queries file: `--param` specs, what `queries.json` may hold,
 * and edits under the lock that never overwrite a malformed file.
 */

import { assertEquals, assertRejects, assertThrows } from "@std/assert";
import {
  editQueries,
  parseParamSpec,
  parseQueries,
  queriesText,
  type SavedQuery,
} from "../../lib/app/queries.ts";

const QUERY: SavedQuery = {
  name: "top_customers",
  connectionId: "0b6f3c1e-0000-4000-8000-000000000001",
  sql: "select * from c where region = :region limit :n",
  params: [{ name: "region", type: "text" }, {
    name: "n",
    type: "int",
    default: 10,
  }],
  description: "Best customers.",
};

Deno.test("parseParamSpec reads NAME:TYPE[:default=VALUE] by the type", () => {
  assertEquals(parseParamSpec("region:text"), { name: "region", type: "text" });
  assertEquals(parseParamSpec("n:int:default=10"), {
    name: "n",
    type: "int",
    default: 10,
  });
  assertEquals(parseParamSpec("x:float:default=2.5").default, 2.5);
  assertEquals(parseParamSpec("b:bool:default=false").default, false);
  assertEquals(parseParamSpec("t:text:default=a:b c").default, "a:b c");
  assertThrows(() => parseParamSpec("n"), Error, "NAME:TYPE");
  assertThrows(() => parseParamSpec("n:date"), Error, "is not one of");
  assertThrows(() => parseParamSpec("n:int:default=1.5"), Error, "not an int");
  assertThrows(
    () => parseParamSpec("n:int:default=9007199254740993"),
    Error,
    "not an int",
  );
});

Deno.test("parseQueries accepts its own text and names each fault", () => {
  assertEquals(parseQueries(queriesText([QUERY])), {
    ok: true,
    queries: [QUERY],
  });
  assertEquals(parseQueries(""), { ok: true, queries: [] });
  const bad = (query: unknown) =>
    parseQueries(JSON.stringify({ queries: [query] }));
  for (
    const [query, message] of [
      [{ ...QUERY, name: "Top" }, "queries[0].name must be"],
      [{ ...QUERY, extra: 1 }, 'unknown key "extra"'],
      [{ ...QUERY, description: "x".repeat(201) }, ".description"],
      [
        { ...QUERY, params: [{ name: "n", type: "int", default: "10" }] },
        ".params[0].default must be an int",
      ],
      [
        {
          ...QUERY,
          params: [{ name: "n", type: "int" }, { name: "n", type: "text" }],
        },
        'params[1].name "n" is used twice',
      ],
    ] as const
  ) {
    const parsed = bad(query);
    assertEquals(parsed.ok, false);
    if (!parsed.ok && !parsed.message.includes(message)) {
      throw new Error(`${parsed.message} (wanted: ${message})`);
    }
  }
  const twice = parseQueries(queriesText([QUERY, QUERY]));
  assertEquals(twice.ok, false);
});

Deno.test("editQueries writes under the lock and never overwrites a malformed file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dbport-queries-" });
  try {
    const path = `${dir}/queries.json`;
    await editQueries(path, (fresh) => [...fresh, QUERY]);
    assertEquals(parseQueries(await Deno.readTextFile(path)), {
      ok: true,
      queries: [QUERY],
    });
    await Deno.writeTextFile(path, "{not json");
    await assertRejects(
      () => editQueries(path, () => []),
      Error,
      "Cannot parse",
    );
    assertEquals(await Deno.readTextFile(path), "{not json");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
