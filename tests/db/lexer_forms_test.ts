/**
 * The lexer, form by form, in every dialect (issue 34): variables, comments
 * and quotes that could hide a second statement, bracket-quoted names,
 * dollar quotes, nested comments, and what it reports as uncertain. Each
 * case pins the tokens (kind and text) and the uncertainties exactly.
 */
import { assertEquals } from "@std/assert";
import { type Dialect, lex, split } from "../../lib/db/sql/lexer.ts";

const CASES: [string, string, Dialect, string[], string[]][] = [
  [
    "SQLite: a stray : at the end is one punct and the lexer ends",
    "SELECT 1 WHERE 2 = :",
    "sqlite",
    ["word SELECT", "number 1", "word WHERE", "number 2", "punct =", "punct :"],
    [],
  ],
  [
    "SQLite: a stray @ at the end is one punct and the lexer ends",
    "SELECT 1 WHERE 2 = @",
    "sqlite",
    ["word SELECT", "number 1", "word WHERE", "number 2", "punct =", "punct @"],
    [],
  ],
  [
    "SQLite: a stray $ at the end is one punct and the lexer ends",
    "SELECT 1 WHERE 2 = $",
    "sqlite",
    ["word SELECT", "number 1", "word WHERE", "number 2", "punct =", "punct $"],
    [],
  ],
  [
    "SQLite: a stray # at the end is one punct and the lexer ends",
    "SELECT 1 WHERE 2 = #",
    "sqlite",
    ["word SELECT", "number 1", "word WHERE", "number 2", "punct =", "punct #"],
    [],
  ],
  [
    "SQLite: every variable form (:a @b $c #d ? ?12, a Tcl suffix and ::) is one param; :: alone is two puncts",
    "SELECT :a, @b, $c, #d, ?, ?12, $x::y(z w), :: ",
    "sqlite",
    [
      "word SELECT",
      "param :a",
      "punct ,",
      "param @b",
      "punct ,",
      "param $c",
      "punct ,",
      "param #d",
      "punct ,",
      "param ?",
      "punct ,",
      "param ?12",
      "punct ,",
      "param $x::y(z",
      "word W",
      "punct )",
      "punct ,",
      "punct :",
      "punct :",
    ],
    [],
  ],
  [
    "SQLite: a bracket-quoted name is one quoted token, never a function call word",
    "SELECT [load_extension]('/tmp/x.so')",
    "sqlite",
    [
      "word SELECT",
      "quoted [load_extension]",
      "punct (",
      "string '/tmp/x.so'",
      "punct )",
    ],
    [],
  ],
  [
    "SQLite: an unclosed [ name swallows the rest and is uncertain",
    "SELECT [a;b",
    "sqlite",
    ["word SELECT", "quoted [a;b"],
    ["a [ name opened at character 8 never closes"],
  ],
  [
    "SQLite: -- hides a ; up to the newline, not past it",
    "SELECT 1 -- c; DROP\nSELECT 2",
    "sqlite",
    ["word SELECT", "number 1", "word SELECT", "number 2"],
    [],
  ],
  [
    "PostgreSQL: \\r ends a -- comment, so what follows is code",
    "SELECT 1 --\rDROP",
    "postgres",
    ["word SELECT", "number 1", "word DROP"],
    [],
  ],
  ["SQLite: \\r does not end a -- comment", "SELECT 1 --\rDROP", "sqlite", [
    "word SELECT",
    "number 1",
  ], []],
  ["MySQL: # hides a ; up to the newline", "SELECT 1 # x; DROP\n;", "mysql", [
    "word SELECT",
    "number 1",
    "semicolon ;",
  ], []],
  [
    "MySQL: --x is not a comment (two minus signs and a word)",
    "SELECT 1 --x",
    "mysql",
    ["word SELECT", "number 1", "punct -", "punct -", "word X"],
    [],
  ],
  [
    "MySQL: -- and a space is a comment up to the newline",
    "SELECT 1 -- x;\nDROP",
    "mysql",
    ["word SELECT", "number 1", "word DROP"],
    [],
  ],
  ["MySQL: -- at the very end is a comment", "SELECT 1 --", "mysql", [
    "word SELECT",
    "number 1",
  ], []],
  [
    "MySQL: -- and a control character is a comment",
    "SELECT 1 --\u0001x",
    "mysql",
    ["word SELECT", "number 1"],
    [],
  ],
  ["MySQL: -- and a tab is a comment", "SELECT 1 --\tx", "mysql", [
    "word SELECT",
    "number 1",
  ], []],
  [
    "PostgreSQL: block comments nest, so the ; inside is hidden",
    "SELECT /* /* */ ; */ 1",
    "postgres",
    ["word SELECT", "number 1"],
    [],
  ],
  [
    "MySQL: block comments do not nest: the first */ ends it and the ; is code",
    "SELECT /* /* */ ; */ 1",
    "mysql",
    ["word SELECT", "semicolon ;", "punct *", "punct /", "number 1"],
    [],
  ],
  [
    "SQLite: block comments do not nest: the first */ ends it and the ; is code",
    "SELECT /* /* */ ; */ 1",
    "sqlite",
    ["word SELECT", "semicolon ;", "punct *", "punct /", "number 1"],
    [],
  ],
  [
    "MySQL: /*! */ is an executable comment, read as code",
    "SELECT /*! 1; DROP */",
    "mysql",
    ["word SELECT", "exec_comment /*! 1; DROP */"],
    [],
  ],
  [
    "MySQL: /*+ */ (an optimizer hint) is an executable comment",
    "SELECT /*+ x */ 1",
    "mysql",
    ["word SELECT", "exec_comment /*+ x */", "number 1"],
    [],
  ],
  ["MariaDB: /*M! */ is an executable comment", "SELECT /*M! 1 */", "mysql", [
    "word SELECT",
    "exec_comment /*M! 1 */",
  ], []],
  [
    "MariaDB: /*M */ without ! is a plain comment",
    "SELECT /*M 1 */ 2",
    "mysql",
    ["word SELECT", "number 2"],
    [],
  ],
  ["PostgreSQL: /*! */ is a plain comment", "SELECT /*! 1 */", "postgres", [
    "word SELECT",
  ], []],
  [
    "PostgreSQL: an unclosed /* comment is uncertain",
    "SELECT /* x",
    "postgres",
    ["word SELECT"],
    ["a /* comment opened at character 8 never closes"],
  ],
  [
    "MySQL: '' and \\' escape inside a string, so the ; inside is hidden",
    "SELECT 'a''b;', 'c\\';' ;",
    "mysql",
    [
      "word SELECT",
      "string 'a''b;'",
      "punct ,",
      "string 'c\\';'",
      "semicolon ;",
    ],
    [],
  ],
  [
    "PostgreSQL: a backslash in '' is a plain character ending no escape",
    "SELECT 'a\\', 1",
    "postgres",
    ["word SELECT", "string 'a\\'", "punct ,", "number 1"],
    [],
  ],
  [
    "PostgreSQL: E'' strings take backslash escapes (e'' too)",
    "SELECT E'a\\';b', e'x'",
    "postgres",
    ["word SELECT", "string E'a\\';b'", "punct ,", "string e'x'"],
    [],
  ],
  [
    "MySQL: e'x' is a word and a string, not an E string",
    "SELECT e'x'",
    "mysql",
    ["word SELECT", "word E", "string 'x'"],
    [],
  ],
  ["SQLite: an unclosed string is uncertain", "SELECT 'abc", "sqlite", [
    "word SELECT",
    "string 'abc",
  ], ["a string opened at character 8 never closes"]],
  [
    "PostgreSQL: an unclosed E string is uncertain",
    "SELECT E'abc",
    "postgres",
    ["word SELECT", "string E'abc"],
    ["an E'' string opened at character 8 never closes"],
  ],
  ['PostgreSQL: "a;b" is a quoted name', 'SELECT "a;b"', "postgres", [
    "word SELECT",
    'quoted "a;b"',
  ], []],
  ['MySQL: "a;b" is a string', 'SELECT "a;b"', "mysql", [
    "word SELECT",
    'string "a;b"',
  ], []],
  [
    'MySQL: a backslash escapes " inside a double-quoted string',
    'SELECT "a\\";"',
    "mysql",
    ["word SELECT", 'string "a\\";"'],
    [],
  ],
  ["SQLite: an unclosed double quote is uncertain", 'SELECT "abc', "sqlite", [
    "word SELECT",
    'quoted "abc',
  ], ["a double quote opened at character 8 never closes"]],
  ["MySQL: `a;b` is a quoted name", "SELECT `a;b`", "mysql", [
    "word SELECT",
    "quoted `a;b`",
  ], []],
  [
    "PostgreSQL: a backtick is a plain character, so its ; is code",
    "SELECT `a;b`",
    "postgres",
    ["word SELECT", "punct `", "word A", "semicolon ;", "word B", "punct `"],
    [],
  ],
  ["SQLite: an unclosed backtick is uncertain", "SELECT `abc", "sqlite", [
    "word SELECT",
    "quoted `abc",
  ], ["a backtick opened at character 8 never closes"]],
  [
    "PostgreSQL: dollar quotes ($$, $tag$, a non-ASCII tag) hide a ; and $1 is a param",
    "SELECT $$a;b$$, $t$x$$;$t$, $1, $é$z$é$",
    "postgres",
    [
      "word SELECT",
      "string $$a;b$$",
      "punct ,",
      "string $t$x$$;$t$",
      "punct ,",
      "param $1",
      "punct ,",
      "string $é$z$é$",
    ],
    [],
  ],
  [
    "PostgreSQL: an unclosed dollar quote is uncertain",
    "SELECT $$abc",
    "postgres",
    ["word SELECT", "string $$abc"],
    ["the dollar quote $$ opened at character 8 never closes"],
  ],
  [
    "PostgreSQL: $ab (no closing $) is a $ and a word",
    "SELECT $ab",
    "postgres",
    ["word SELECT", "punct $", "word AB"],
    [],
  ],
  ["PostgreSQL: $1x is a param and a word", "SELECT $1x", "postgres", [
    "word SELECT",
    "param $1",
    "word X",
  ], []],
  [
    "Numbers with exponents, leading dots, hex and trailing letters are one token each",
    "SELECT 1.5e+10, .5, 0x1F, 1e-3, 12abc, 1.e5",
    "postgres",
    [
      "word SELECT",
      "number 1.5e+10",
      "punct ,",
      "number .5",
      "punct ,",
      "number 0x1F",
      "punct ,",
      "number 1e-3",
      "punct ,",
      "number 12abc",
      "punct ,",
      "number 1.e5",
    ],
    [],
  ],
  [
    "Words take $, _ and letters beyond ASCII, upper-cased",
    "SELECT a$b, _x, été",
    "postgres",
    ["word SELECT", "word A$B", "punct ,", "word _X", "punct ,", "word ÉTÉ"],
    [],
  ],
  [
    "MySQL: :name and @var are params; ? alone, @@ and :1 are not",
    "SELECT :name, @var, ?, @@global.x, :1",
    "mysql",
    [
      "word SELECT",
      "param :name",
      "punct ,",
      "param @var",
      "punct ,",
      "punct ?",
      "punct ,",
      "punct @",
      "param @global",
      "punct .",
      "word X",
      "punct ,",
      "punct :",
      "number 1",
    ],
    [],
  ],
  [
    "PostgreSQL: :name and @var are params; ? alone is a punct",
    "SELECT :name, @var, ?",
    "postgres",
    [
      "word SELECT",
      "param :name",
      "punct ,",
      "param @var",
      "punct ,",
      "punct ?",
    ],
    [],
  ],
  ["A control character is a punct and uncertain", "SELECT 1\u0001", "sqlite", [
    "word SELECT",
    "number 1",
    "punct \u0001",
  ], ["a control character U+0001 at character 9"]],
  ["DEL (U+007F) is a punct and uncertain", "SELECT 1", "sqlite", [
    "word SELECT",
    "number 1",
    "punct ",
  ], ["a control character U+007F at character 9"]],
  [
    "Whitespace of every kind (\\t \\v \\f \\r \\n) makes no token",
    "SELECT\t1\u000b\f\r\n;",
    "sqlite",
    ["word SELECT", "number 1", "semicolon ;"],
    [],
  ],
];

for (const [spec, sql, dialect, tokens, uncertain] of CASES) {
  Deno.test(`lex(${JSON.stringify(sql)}, ${dialect}): ${spec}`, () => {
    const lexed = lex(sql, dialect);
    assertEquals(lexed.tokens.map((t) => `${t.kind} ${t.text}`), tokens);
    assertEquals(lexed.uncertain, uncertain);
  });
}

Deno.test('lex("SELECT [], 1", sqlite): an empty bracket-quoted name is one quoted token', () => {
  assertEquals(
    lex("SELECT [], 1", "sqlite").tokens.map((t) => `${t.kind} ${t.text}`),
    ["word SELECT", "quoted []", "punct ,", "number 1"],
  );
});

Deno.test("lex() gives each token its start and end: SELECT 'a' [b] $1 in SQLite", () => {
  assertEquals(
    lex("SELECT 'a' [b] ?1;", "sqlite").tokens.map((t) => [t.start, t.end]),
    [[0, 6], [7, 10], [11, 14], [15, 17], [17, 18]],
  );
  assertEquals(
    lex("$$x$$ $1 E'y'", "postgres").tokens.map((t) => [t.start, t.end]),
    [[0, 5], [6, 8], [9, 13]],
  );
});

Deno.test('lex("SELECT $a(b", sqlite): a Tcl suffix left open at the end ends its param at the text\'s end (11)', () => {
  const [, param] = lex("SELECT $a(b", "sqlite").tokens;
  assertEquals(param, { kind: "param", text: "$a(b", start: 7, end: 11 });
});

Deno.test("split() drops empty statements (a lone ;, only a comment) and trims each text of its trailing comment", () => {
  const { statements, uncertain } = split(
    "SELECT 1; ; -- c\n SELECT 2 /* t */ ;",
    "sqlite",
  );
  assertEquals(statements.map((s) => s.text), ["SELECT 1", "SELECT 2"]);
  assertEquals(statements.map((s) => s.tokens.length), [2, 2]);
  assertEquals(uncertain, []);
});

Deno.test("split() finds the second statement a MySQL comment does not hide: SELECT 1 --x; DROP TABLE t", () => {
  assertEquals(
    split("SELECT 1 --x; DROP TABLE t", "mysql").statements.map((s) => s.text),
    ["SELECT 1 --x", "DROP TABLE t"],
  );
});

Deno.test("split() passes the lexer's uncertainty on: SELECT 'a; DROP", () => {
  const { statements, uncertain } = split("SELECT 'a; DROP", "postgres");
  assertEquals(statements.map((s) => s.text), ["SELECT 'a; DROP"]);
  assertEquals(uncertain, ["a string opened at character 8 never closes"]);
});
