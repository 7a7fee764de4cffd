/**
 * `dbport connections test NAME` and `trust-host NAME`: connect and say
 * what was found, and trust an SSH hop's host key after the owner checks it.
 *
 * @module
 */

import { parseFlags } from "../args.ts";
import { trustHost } from "../ssh.ts";
import type { CliIO } from "../io.ts";
import { cli, find, knownHostsOf, load, probe } from "./common.ts";
import type { SecretInput } from "./input.ts";

export async function test(
  path: string,
  args: string[],
  io: CliIO,
): Promise<number> {
  const parsed = parseFlags("connections test", args, {});
  const connection = find(
    await load(path),
    parsed.positionals[0],
    "connections test",
  );
  const tested = await probe(connection, io, path);
  if (tested.outcome === "failed") {
    io.err(
      `Fix: ${tested.fix} (${cli()} connections set "${connection.name}" …)`,
    );
  }
  if (tested.outcome === "ok" && tested.risks.length > 0) {
    io.out(
      `Warning: the login of "${connection.name}" ${
        tested.risks.join(", ")
      }: only dbport's checks keep AI reads read-only. Make a least-privilege login for them: ${cli()} connections harden "${connection.name}" --apply`,
    );
  }
  return tested.outcome === "ok" ? 0 : 1;
}

export async function trust(
  path: string,
  args: string[],
  io: CliIO,
  input: SecretInput,
): Promise<number> {
  const parsed = parseFlags("connections trust-host", args, {
    yes: { type: "boolean" },
  });
  const connection = find(
    await load(path),
    parsed.positionals[0],
    "connections trust-host",
  );
  return await trustHost(
    connection,
    knownHostsOf(path),
    io,
    async (question) => {
      if (parsed.flags.yes === true) return true;
      const answer = await input.line(question);
      return answer !== null && /^\s*y(es)?\s*$/i.test(answer);
    },
  );
}
