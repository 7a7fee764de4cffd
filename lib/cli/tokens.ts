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
import {
  formatTime,
  type Parsed,
  parseFlags,
  stringFlag,
  table,
} from "./args.ts";
import {
  BRIDGE_BUDGET,
  describeBudget,
  LIMIT_FLAGS,
  loadBudgets,
  NO_BUDGET,
  parseLimit,
  setLimits,
  setPaused,
  type TokenLimits,
} from "../app/token_budgets.ts";
import { type CliIO, UsageError } from "./io.ts";

/** Usage of the tokens command. */
export const TOKENS_USAGE = `Usage:
  dbport tokens create --name NAME --level ${LEVELS.join("|")}
                       [--connections ID,ID] [--expires DURATION|never] [--json]
                       [--max-calls-per-minute N] [--max-rows-per-hour N] [--max-writes-per-hour N]
  dbport tokens list [--json]
  dbport tokens revoke ID_OR_NAME
  dbport tokens set ID_OR_NAME|--bridge [--max-calls-per-minute N|off]
                       [--max-rows-per-hour N|off] [--max-writes-per-hour N|off]
  dbport tokens pause ID_OR_NAME|--bridge
  dbport tokens resume ID_OR_NAME|--bridge

Budgets: past a limit a call is refused with when to retry; pause refuses
everything the token sends and stops its running requests at once, until
resume. --bridge names the stdio bridge's tokens (docs/tokens.md).

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
    case "set":
      return await setBudget(db, store, rest, io);
    case "pause":
    case "resume":
      return await pause(db, store, sub, rest, io, now);
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

const LIMIT_SPEC = Object.fromEntries(
  Object.keys(LIMIT_FLAGS).map((flag) => [flag, { type: "string" as const }]),
);

/** The limits the flags give (`off` is none); throws on a bad value. */
function limitsOf(command: string, parsed: Parsed): Partial<TokenLimits> {
  const limits: Partial<TokenLimits> = {};
  for (const [flag, key] of Object.entries(LIMIT_FLAGS)) {
    const given = stringFlag(parsed, flag);
    if (given === undefined) continue;
    const value = parseLimit(given);
    if (value === undefined) {
      throw new UsageError(
        `${command}: --${flag} must be a positive whole number or off, got "${given}"`,
      );
    }
    limits[key] = value;
  }
  return limits;
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
    ...LIMIT_SPEC,
  });
  const limits = limitsOf("tokens create", parsed);
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
  const budget = Object.keys(limits).length === 0
    ? null
    : await setLimits(store.db, token.id, limits);
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
      ...(budget === null ? {} : { budget }),
    }));
    return 0;
  }
  io.out(`Created token "${token.name}" (${describe(token)})`);
  if (budget !== null) io.out(`  budget: ${describeBudget(budget)}`);
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
  const budgets = await loadBudgets(store.db);
  const budgetOf = (id: string) => budgets.get(id) ?? NO_BUDGET;
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
        budget: budgetOf(token.id),
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
        "BUDGET",
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
        describeBudget(budgetOf(token.id)),
      ]),
    )
  ) io.out(line);
  const bridge = budgets.get(BRIDGE_BUDGET);
  if (bridge !== undefined) {
    io.out(`The stdio bridge's tokens: ${describeBudget(bridge)}`);
  }
  return 0;
}

/** The budget key `ID_OR_NAME` or `--bridge` names, and how to say it. */
async function budgetTarget(
  store: TokenStore,
  command: string,
  parsed: Parsed,
): Promise<{ key: string; label: string } | { error: string }> {
  const [target, ...extra] = parsed.positionals;
  if (parsed.flags.bridge === true) {
    if (target !== undefined) {
      throw new UsageError(`${command}: name a token or --bridge, not both`);
    }
    return { key: BRIDGE_BUDGET, label: "the stdio bridge's tokens" };
  }
  if (target === undefined || extra.length > 0) {
    throw new UsageError(
      `${command}: name exactly one token id or name (or --bridge)`,
    );
  }
  const found = await store.find(target);
  if (!found.ok) return { error: `${command}: ${found.message}` };
  return {
    key: found.token.id,
    label: `token "${found.token.name}" (${found.token.id})`,
  };
}

async function setBudget(
  db: StateDb,
  store: TokenStore,
  args: string[],
  io: CliIO,
): Promise<number> {
  const parsed = parseFlags("tokens set", args, {
    bridge: { type: "boolean" },
    ...LIMIT_SPEC,
  });
  const limits = limitsOf("tokens set", parsed);
  if (Object.keys(limits).length === 0) {
    throw new UsageError(
      `tokens set: name a limit to change (--${
        Object.keys(LIMIT_FLAGS).join(", --")
      })`,
    );
  }
  const target = await budgetTarget(store, "tokens set", parsed);
  if ("error" in target) {
    io.err(target.error);
    return 1;
  }
  const budget = await setLimits(db, target.key, limits);
  io.out(
    `Budget of ${target.label}: ${
      describeBudget(budget)
    }; a running server applies it within a second`,
  );
  return 0;
}

async function pause(
  db: StateDb,
  store: TokenStore,
  sub: "pause" | "resume",
  args: string[],
  io: CliIO,
  now: number,
): Promise<number> {
  const command = `tokens ${sub}`;
  const parsed = parseFlags(command, args, { bridge: { type: "boolean" } });
  const target = await budgetTarget(store, command, parsed);
  if ("error" in target) {
    io.err(target.error);
    return 1;
  }
  await setPaused(db, target.key, sub === "pause" ? now : null);
  io.out(
    sub === "pause"
      ? `Paused ${target.label}: a running server refuses everything it sends and stops its running requests within a second (resume: ${cliCommand()} tokens resume ${
        target.key === BRIDGE_BUDGET ? "--bridge" : target.key
      })`
      : `Resumed ${target.label}`,
  );
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
