/**
 * Reading PostgreSQL's regression suite (`src/test/regress/sql/*.sql`) for
 * `deno task corpus`: psql's meta-commands left out, the text split into
 * statements, each statement sorted by PostgreSQL's own parser into a plain
 * read (a SELECT without INTO, locking clauses or data-changing parts), a
 * statement safe to run as setup in a scratch database, or one left out,
 * and refusal messages grouped by their shape.
 *
 * @module
 */

import { loadModule, parseSync } from "libpg-query";
import { split } from "../lib/db/sql/lexer.ts";

/** What the corpus does with a statement. */
export type Use =
  /** A plain read: sent through dbport's read path. */
  | "read"
  /** Setup run directly in the scratch database (tables, data, types…). */
  | "setup"
  /** Left out: psql variables, a parse error, or a statement with reach. */
  | "skip";

/** One statement of a file and what is done with it. */
export interface CorpusStatement {
  text: string;
  use: Use;
  /** The parse tree's statement node name (SelectStmt, CreateStmt…). */
  kind: string;
}

/**
 * Setup statements that act only inside the scratch database: nothing
 * cluster-wide (roles, databases, tablespaces, ALTER SYSTEM, replication),
 * nothing that reaches files or programs (COPY, LOAD, extensions, foreign
 * servers), no anonymous code (DO) and no procedure calls.
 */
const SETUP_KINDS = new Set([
  "CreateStmt",
  "CreateTableAsStmt",
  "ViewStmt",
  "InsertStmt",
  "UpdateStmt",
  "DeleteStmt",
  "MergeStmt",
  "IndexStmt",
  "CompositeTypeStmt",
  "CreateEnumStmt",
  "CreateRangeStmt",
  "DefineStmt",
  "CreateDomainStmt",
  "AlterTableStmt",
  "AlterDomainStmt",
  "AlterEnumStmt",
  "CreateSeqStmt",
  "AlterSeqStmt",
  "CommentStmt",
  "RuleStmt",
  "CreateTrigStmt",
  "CreatePolicyStmt",
  "CreateSchemaStmt",
  "DropStmt",
  "TruncateStmt",
  "VariableSetStmt",
  "TransactionStmt",
  "CreateCastStmt",
  "CreateOpClassStmt",
  "CreateOpFamilyStmt",
  "CreateConversionStmt",
  "AlterFunctionStmt",
  "RenameStmt",
  "CreateStatsStmt",
  "CreateFunctionStmt",
  "AlterOpFamilyStmt",
  "AlterObjectSchemaStmt",
  "RefreshMatViewStmt",
]);

/** Languages a setup function may be written in (no C, no untrusted). */
const SETUP_LANGUAGES = new Set(["sql", "plpgsql"]);

/** Load the parser (once). */
export function loadParser(): Promise<void> {
  return loadModule();
}

/** The statements of one psql file, in order, each with its use. */
export function corpusStatements(text: string): CorpusStatement[] {
  // psql meta-commands (\set, \d…) are psql's, not the server's; \g and
  // \gset end a statement as ; does.
  const sql = text.split("\n").map((line) =>
    /^\s*\\/.test(line) ? "" : line.replace(/\\g(set|x|exec)?\b.*$/, ";")
  ).join("\n");
  return split(sql, "postgres").statements.map(({ text, tokens }) => {
    // :var, :'var' and :"var" are psql variables the file set with \set.
    const psqlVariable = tokens.some((token, k) =>
      (token.kind === "param" && token.text[0] === ":") ||
      (token.text === ":" && tokens[k + 1]?.start === token.end &&
        ["string", "quoted"].includes(tokens[k + 1]!.kind))
    );
    if (psqlVariable) {
      return { text, use: "skip", kind: "psql variable" };
    }
    return classifyText(text);
  });
}

/** The names of the functions a statement calls (the parser's FuncCall). */
export function calledFunctions(text: string): string[] {
  let json: string;
  try {
    json = JSON.stringify(parseSync(text));
  } catch {
    return [];
  }
  const names = new Set<string>();
  for (const match of json.matchAll(/"FuncCall":\{"funcname":\[([^\]]*)\]/g)) {
    const parts = [...match[1]!.matchAll(/"sval":"([^"]*)"/g)].map((m) =>
      m[1]!
    );
    const name = parts.at(-1);
    if (name !== undefined) names.add(name);
  }
  return [...names];
}

/** Sort one statement by PostgreSQL's parser. */
export function classifyText(text: string): CorpusStatement {
  let tree: { stmts?: { stmt?: Record<string, unknown> }[] };
  try {
    tree = parseSync(text) as typeof tree;
  } catch {
    return { text, use: "skip", kind: "parse error" };
  }
  const stmts = tree.stmts ?? [];
  if (stmts.length !== 1 || stmts[0]?.stmt === undefined) {
    return { text, use: "skip", kind: "not one statement" };
  }
  const node = stmts[0].stmt;
  const kind = Object.keys(node)[0] ?? "";
  const json = JSON.stringify(node);
  if (kind === "SelectStmt") {
    const plain =
      !/"(intoClause|lockingClause|InsertStmt|UpdateStmt|DeleteStmt|MergeStmt)"/
        .test(json);
    if (plain) return { text, use: "read", kind };
    // SELECT INTO makes a table the later reads use.
    return {
      text,
      use: /"intoClause"/.test(json) && !/"lockingClause"/.test(json)
        ? "setup"
        : "skip",
      kind,
    };
  }
  if (!SETUP_KINDS.has(kind)) return { text, use: "skip", kind };
  if (kind === "CreateFunctionStmt") {
    const language = /"defname":"language","arg":\{"String":\{"sval":"([^"]+)"/
      .exec(json)?.[1]?.toLowerCase() ?? "sql";
    if (!SETUP_LANGUAGES.has(language)) return { text, use: "skip", kind };
  }
  return { text, use: "setup", kind };
}

/**
 * A refusal's message without what varies between statements (quoted
 * values, numbers, positions), so that alike ones are counted together;
 * the function or relation a refusal names is kept: it is the reason.
 */
export function messageShape(message: string): string {
  return message
    .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
    .replace(/'(?:[^'\\]|\\.)*'/g, "'…'")
    .replace(/\b\d+(\.\d+)?\b/g, "N")
    .replace(/\s+/g, " ")
    .slice(0, 160);
}
