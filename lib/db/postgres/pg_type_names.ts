/**
 * PostgreSQL's built-in types by OID (pg_type, fixed since 8.x): the names a
 * result's columns are shown with in the console. Another type (an enum, a
 * domain, an extension's) is shown by its OID.
 *
 * @module
 */

const NAMES: Readonly<Record<number, string>> = {
  16: "bool",
  17: "bytea",
  18: "char",
  19: "name",
  20: "int8",
  21: "int2",
  23: "int4",
  24: "regproc",
  25: "text",
  26: "oid",
  114: "json",
  142: "xml",
  600: "point",
  650: "cidr",
  700: "float4",
  701: "float8",
  790: "money",
  829: "macaddr",
  869: "inet",
  1000: "bool[]",
  1001: "bytea[]",
  1005: "int2[]",
  1007: "int4[]",
  1009: "text[]",
  1015: "varchar[]",
  1016: "int8[]",
  1021: "float4[]",
  1022: "float8[]",
  1042: "bpchar",
  1043: "varchar",
  1082: "date",
  1083: "time",
  1114: "timestamp",
  1184: "timestamptz",
  1186: "interval",
  1231: "numeric[]",
  1266: "timetz",
  1560: "bit",
  1562: "varbit",
  1700: "numeric",
  2249: "record",
  2950: "uuid",
  2951: "uuid[]",
  3802: "jsonb",
  3807: "jsonb[]",
  3904: "int4range",
  3906: "numrange",
  3908: "tsrange",
  3910: "tstzrange",
  3912: "daterange",
  3926: "int8range",
};

/** The type's name, or `oid 16384` for one not built in. */
export function pgTypeName(oid: number): string {
  return NAMES[oid] ?? `oid ${oid}`;
}
