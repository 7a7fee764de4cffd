/**
 * A token of SQL text: a leaf that the lexer and the compound-statement
 * reader (which the lexer calls) both read.
 *
 * @module
 */

/** What a token is. Comments and whitespace produce no token. */
export type TokenKind =
  | "word"
  | "quoted"
  | "string"
  | "number"
  | "param"
  | "punct"
  | "semicolon"
  /** MySQL `/*! ... *\/`: a comment the server executes (code, not a comment). */
  | "exec_comment";

/** One token and where it sits in the text. */
export interface Token {
  kind: TokenKind;
  /** The token's text; for a word, upper-cased. */
  text: string;
  start: number;
  end: number;
}
