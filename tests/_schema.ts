/**
 * Validate what the server sends against the official MCP JSON Schemas in
 * `tests/schema/<version>/schema.json` (copied from the specification; see its README).
 *
 * @module
 */

import Ajv2020 from "ajv/dist/2020";
import Ajv from "ajv";
import { assert } from "@std/assert";

const SCHEMA_ROOT = new URL("./schema/", import.meta.url);

type Validate = ((value: unknown) => boolean) & { errors?: unknown };
const cache = new Map<
  string,
  { defs: string; ajv: { getSchema(ref: string): Validate | undefined } }
>();

function load(version: string) {
  let entry = cache.get(version);
  if (entry === undefined) {
    const schema = JSON.parse(
      Deno.readTextFileSync(new URL(`${version}/schema.json`, SCHEMA_ROOT)),
    );
    const draft07 = String(schema.$schema).includes("draft-07");
    // deno-lint-ignore no-explicit-any
    const AjvClass: any = draft07 ? Ajv : Ajv2020;
    const ajv = new AjvClass({
      strict: false,
      allErrors: true,
      validateFormats: false,
    });
    ajv.addSchema(schema, version);
    entry = { defs: draft07 ? "definitions" : "$defs", ajv };
    cache.set(version, entry);
  }
  return entry;
}

/** Assert that `value` is a valid `definition` of MCP `version`. */
export function assertSchema(
  version: string,
  definition: string,
  value: unknown,
): void {
  const { defs, ajv } = load(version);
  const validate = ajv.getSchema(`${version}#/${defs}/${definition}`);
  assert(validate !== undefined, `schema ${version} has no ${definition}`);
  const ok = validate(value);
  assert(
    ok,
    `${definition} (${version}) is invalid: ${
      JSON.stringify(validate.errors, null, 2)
    }\n${JSON.stringify(value, null, 2)}`,
  );
}
