/**
 * Access tokens as the app's integrations settings keep them: plaintext
 * `dbp_` + base64url of 32 random bytes, shown once; stored only as a salted
 * SHA-256 hash with a short display prefix, in `state.db`.
 *
 * Revoking keeps the row (marked revoked) so the list and the activity log
 * still name it. Every change bumps `meta.tokens_generation` in the same
 * transaction; a running server polls that one number to reload.
 *
 * @module
 */

import { isOneOf, oneOf } from "../base/one_of.ts";
import type { Row } from "./state_client.ts";
import { toBase64Url } from "../protocol/base64.ts";
import { TOKEN_PREFIX } from "../base/identity.ts";
import { sha256Hex } from "./digest.ts";
import type { StateDb } from "./state_db.ts";

/** A token's permission level (docs/wire.md "Authentication" 2). */
export type Level = "readOnly" | "readWrite" | "fullAccess";

/** Every level, weakest first. */
export const LEVELS: readonly Level[] = ["readOnly", "readWrite", "fullAccess"];

/** Whether a string names a level. */
export function isLevel(value: string): value is Level {
  return isOneOf(LEVELS, value);
}

/** What may be shown about a token: never its plaintext, salt or hash. */
export interface TokenInfo {
  id: string;
  name: string;
  /** The first characters of the plaintext, to recognise it in a list. */
  prefix: string;
  level: Level;
  /** Connection ids the token may use; null means all. */
  connections: string[] | null;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
  lastUsedAt: number | null;
}

/** A token with what verifies it. */
export interface StoredToken extends TokenInfo {
  salt: string;
  hash: string;
}

/** Where a token stands at a given time. */
export function tokenStatus(
  token: TokenInfo,
  now: number,
): "active" | "revoked" | "expired" {
  if (token.revokedAt !== null) return "revoked";
  if (token.expiresAt !== null && now >= token.expiresAt) return "expired";
  return "active";
}

/** How many plaintext characters the display prefix keeps. */
const DISPLAY_PREFIX_LENGTH = TOKEN_PREFIX.length + 6;

/** A fresh plaintext token: the prefix and base64url of 32 random bytes. */
export function generateToken(): string {
  return TOKEN_PREFIX + toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
}

/** A fresh salt: base64url of 16 random bytes. */
export function generateSalt(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(16)));
}

/** The stored hash of a plaintext: hex SHA-256 of salt followed by plaintext. */
export function hashToken(salt: string, plaintext: string): string {
  return sha256Hex(salt + plaintext);
}

/** The display prefix of a plaintext. */
export function displayPrefix(plaintext: string): string {
  return plaintext.slice(0, DISPLAY_PREFIX_LENGTH);
}

/** What `create` needs. */
export interface NewToken {
  name: string;
  level: Level;
  connections: string[] | null;
  expiresAt: number | null;
}

/** The outcome of finding a token by id or name. */
export type TokenLookup =
  | { ok: true; token: TokenInfo }
  | { ok: false; message: string };

const BUMP =
  "UPDATE meta SET value = value + 1 WHERE key = 'tokens_generation'";

/** The tokens table. */
export class TokenStore {
  readonly #db: StateDb;

  constructor(db: StateDb) {
    this.#db = db;
  }

  /** The state database (the budgets live beside the tokens). */
  get db(): StateDb {
    return this.#db;
  }

  /** Mint a token; the plaintext is returned here and never again. */
  async create(
    init: NewToken,
    now = Date.now(),
  ): Promise<{ token: TokenInfo; plaintext: string }> {
    const name = init.name.trim();
    if (name === "") throw new Error("Cannot create a token: --name is empty");
    const plaintext = generateToken();
    const salt = generateSalt();
    const token: TokenInfo = {
      id: crypto.randomUUID(),
      name,
      prefix: displayPrefix(plaintext),
      level: init.level,
      connections: init.connections === null ? null : [...init.connections],
      createdAt: now,
      expiresAt: init.expiresAt,
      revokedAt: null,
      lastUsedAt: null,
    };
    await this.#db.client.batch([
      {
        sql: `INSERT INTO tokens (id, name, prefix, salt, hash, level,
                connections, created_at, expires_at)
              VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        args: [
          token.id,
          token.name,
          token.prefix,
          salt,
          hashToken(salt, plaintext),
          token.level,
          token.connections === null ? null : JSON.stringify(token.connections),
          token.createdAt,
          token.expiresAt,
        ],
      },
      BUMP,
    ], "write");
    return { token, plaintext };
  }

  /** Every token with its verifier, oldest first. */
  async all(): Promise<StoredToken[]> {
    const result = await this.#db.client.execute(
      "SELECT * FROM tokens ORDER BY created_at, id",
    );
    return result.rows.map(fromRow);
  }

  /** Every token without its verifier, oldest first. */
  async list(): Promise<TokenInfo[]> {
    return (await this.all()).map(({ salt: _s, hash: _h, ...info }) => info);
  }

  /**
   * Find one token by id, or by name when exactly one token carries it
   * (names are not unique: the error lists the ids to choose from).
   */
  async find(idOrName: string): Promise<TokenLookup> {
    const tokens = await this.list();
    const byId = tokens.find((t) => t.id === idOrName);
    if (byId !== undefined) return { ok: true, token: byId };
    const byName = tokens.filter((t) => t.name === idOrName);
    if (byName.length === 1) return { ok: true, token: byName[0]! };
    if (byName.length === 0) {
      return {
        ok: false,
        message: `No token has the id or name "${idOrName}" (see: tokens list)`,
      };
    }
    return {
      ok: false,
      message:
        `${byName.length} tokens are named "${idOrName}"; revoke one by id: ${
          byName.map((t) => t.id).join(", ")
        }`,
    };
  }

  /** Revoke a token (kept, marked revoked). Revoking twice is harmless. */
  async revoke(id: string, now = Date.now()): Promise<void> {
    await this.#db.client.batch([
      {
        sql:
          "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
        args: [now, id],
      },
      BUMP,
    ], "write");
  }

  /**
   * Record use (for `tokens list`). Not a change a server must reload for, so
   * the generation is left alone.
   */
  async touch(id: string, time: number): Promise<void> {
    await this.#db.client.execute({
      sql: "UPDATE tokens SET last_used_at = ? WHERE id = ?",
      args: [time, id],
    });
  }

  /** The change counter: it moves whenever a token is added or revoked. */
  async generation(): Promise<number> {
    const result = await this.#db.client.execute(
      "SELECT value FROM meta WHERE key = 'tokens_generation'",
    );
    return Number(result.rows[0]?.value ?? 0);
  }
}

function fromRow(row: Row): StoredToken {
  const nullableNumber = (value: unknown) =>
    value === null || value === undefined ? null : Number(value);
  const connections = row.connections;
  return {
    id: String(row.id),
    name: String(row.name),
    prefix: String(row.prefix),
    salt: String(row.salt),
    hash: String(row.hash),
    // A level this module never writes grants the least.
    level: oneOf(LEVELS, row.level, "readOnly"),
    connections: typeof connections === "string"
      ? JSON.parse(connections) as string[]
      : null,
    createdAt: Number(row.created_at),
    expiresAt: nullableNumber(row.expires_at),
    revokedAt: nullableNumber(row.revoked_at),
    lastUsedAt: nullableNumber(row.last_used_at),
  };
}
