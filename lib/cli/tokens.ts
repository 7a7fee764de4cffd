/**
 * `dbport tokens create|list|revoke`: the app's integrations settings as a
 * CLI. A plaintext token is printed once, at creation, and never again; a
 * running server picks up changes within a second.
 *
 * @module
 */

import { cliCommand } from "../app/cli_command.ts";
import { DEFAULT_TOKEN_LIFETIME, parseDuration } from "../app/duration.ts";
import type { StateDb } from "../app/state_db.ts";
import {
  isLevel,
  LEVELS,
  type TokenInfo,
  tokenStatus,
  TokenStore,
} from "../app/tokens.ts";
import { formatTime, parseFlags, stringFlag, table } from "./args.ts";
import { type CliIO, UsageError } from "./io.ts";

/** Usage of the tokens command. */
export const TOKENS_USAGE = `Usage:
  dbport tokens create --name NAME --level ${LEVELS.join("|")}
                       [--connections ID,ID] [--expires DURATION|never] [--json]
  dbport tokens list [--json]
  dbport tokens revoke ID_OR_NAME

DURATION is a number with s, m, h or d (90s, 30m, 12h, 30d); default ${DEFAULT_TOKEN_LIFETIME}.
Levels: readOnly (tools:read, resources:read), readWrite (+ tools:write),
fullAccess (+ admin).`;

/** Run `tokens <subcommand>`. */
export async function tokensCommand(
  db: StateDb,
  args: string[],
  io: CliIO,
  now = Date.now(),
): Promise<number> {
  const [sub, ...rest] = args;
  const store = new TokenStore(db);
  switch (sub) {
    case "create":
      return await create(store, rest, io, now);
    case "list":
      return await list(store, rest, io, now);
    case "revoke":
      return await revoke(store, rest, io, now);
    default:
      throw new UsageError(
        sub === undefined
          ? `tokens: name a subcommand\n\n${TOKENS_USAGE}`
          : `tokens: unknown subcommand "${sub}"\n\n${TOKENS_USAGE}`,
      );
  }
}

/** `--connections ID,ID` of `command`: null when absent (every connection). */
export function parseConnections(
  command: string,
  text: string | undefined,
): string[] | null {
  if (text === undefined) return null;
  const ids = text.split(",").map((id) => id.trim());
  if (ids.some((id) => id === "" || /\s/.test(id))) {
    throw new UsageError(
      `${command}: --connections must be a comma-separated list of connection ids, got "${text}"`,
    );
  }
  return [...new Set(ids)];
}

async function create(
  store: TokenStore,
  args: string[],
  io: CliIO,
  now: number,
): Promise<number> {
  const parsed = parseFlags("tokens create", args, {
    name: { type: "string" },
    level: { type: "string" },
    connections: { type: "string" },
    expires: { type: "string" },
    json: { type: "boolean" },
  });
  if (parsed.positionals.length > 0) {
    throw new UsageError(
      `tokens create: unexpected argument "${parsed.positionals[0]}"`,
    );
  }
  const name = stringFlag(parsed, "name");
  if (name === undefined || name.trim() === "") {
    throw new UsageError("tokens create: --name is required");
  }
  const level = stringFlag(parsed, "level");
  if (level === undefined || !isLevel(level)) {
    throw new UsageError(
      `tokens create: --level must be one of ${LEVELS.join(", ")}${
        level === undefined ? "" : `, got "${level}"`
      }`,
    );
  }
  const lifetime = parseDuration(
    stringFlag(parsed, "expires") ?? DEFAULT_TOKEN_LIFETIME,
  );
  if (!lifetime.ok) throw new UsageError(`tokens create: ${lifetime.message}`);
  const { token, plaintext } = await store.create({
    name,
    level,
    connections: parseConnections(
      "tokens create",
      stringFlag(parsed, "connections"),
    ),
    expiresAt: lifetime.ms === null ? null : now + lifetime.ms,
  }, now);
  if (parsed.flags.json === true) {
    io.out(JSON.stringify({
      id: token.id,
      name: token.name,
      level: token.level,
      token: plaintext,
      expiresAt: token.expiresAt === null
        ? null
        : new Date(token.expiresAt).toISOString(),
      connections: token.connections,
    }));
    return 0;
  }
  io.out(`Created token "${token.name}" (${describe(token)})`);
  io.out(`  id: ${token.id}`);
  io.out("");
  io.out(`  ${plaintext}`);
  io.out("");
  io.out("Copy it now: it is shown only this once.");
  io.out("HTTP clients send it as the header  Authorization: Bearer <token>");
  return 0;
}

function describe(token: TokenInfo): string {
  const connections = token.connections === null
    ? "all connections"
    : `${token.connections.length} connection${
      token.connections.length === 1 ? "" : "s"
    }`;
  const expiry = token.expiresAt === null
    ? "never expires"
    : `expires ${formatTime(token.expiresAt)}`;
  return `${token.level}, ${connections}, ${expiry}`;
}

async function list(
  store: TokenStore,
  args: string[],
  io: CliIO,
  now: number,
): Promise<number> {
  const parsed = parseFlags("tokens list", args, { json: { type: "boolean" } });
  const tokens = await store.list();
  if (parsed.flags.json === true) {
    io.out(JSON.stringify(
      tokens.map((token) => ({
        id: token.id,
        name: token.name,
        prefix: token.prefix,
        level: token.level,
        connections: token.connections,
        status: tokenStatus(token, now),
        createdAt: new Date(token.createdAt).toISOString(),
        expiresAt: iso(token.expiresAt),
        revokedAt: iso(token.revokedAt),
        lastUsedAt: iso(token.lastUsedAt),
      })),
      null,
      2,
    ));
    return 0;
  }
  if (tokens.length === 0) {
    io.out(
      `No tokens yet. Create one with: ${cliCommand()} tokens create --name NAME --level readOnly`,
    );
    return 0;
  }
  for (
    const line of table(
      [
        "ID",
        "NAME",
        "LEVEL",
        "CONNECTIONS",
        "STATUS",
        "EXPIRES",
        "LAST USED",
        "PREFIX",
      ],
      tokens.map((token) => [
        token.id,
        token.name,
        token.level,
        token.connections === null ? "all" : token.connections.join(","),
        tokenStatus(token, now),
        token.expiresAt === null ? "never" : formatTime(token.expiresAt),
        formatTime(token.lastUsedAt),
        `${token.prefix}…`,
      ]),
    )
  ) io.out(line);
  return 0;
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

async function revoke(
  store: TokenStore,
  args: string[],
  io: CliIO,
  now: number,
): Promise<number> {
  const parsed = parseFlags("tokens revoke", args, {});
  const [target, ...extra] = parsed.positionals;
  if (target === undefined || extra.length > 0) {
    throw new UsageError("tokens revoke: name exactly one token id or name");
  }
  const found = await store.find(target);
  if (!found.ok) {
    io.err(`tokens revoke: ${found.message}`);
    return 1;
  }
  const { token } = found;
  if (token.revokedAt !== null) {
    io.out(
      `Token "${token.name}" (${token.id}) was already revoked at ${
        formatTime(token.revokedAt)
      }`,
    );
    return 0;
  }
  await store.revoke(token.id, now);
  io.out(
    `Revoked token "${token.name}" (${token.id}); a running server refuses it within a second`,
  );
  return 0;
}
