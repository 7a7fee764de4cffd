/**
 * Testing a saved connection as its owner: each SSH hop in turn (the key it
 * showed), then the database (its version, or the error and what to fix),
 * then what its reading login may do beyond reading. Shared by
 * `connections add|test` (which print each step) and the console's
 * Connections page (which lists them).
 *
 * @module
 */

import { ENGINES } from "../db/engines.ts";
import { DbError } from "../db/errors.ts";
import {
  defaultSshContext,
  openDriver,
  type SshContext,
} from "../db/open_driver.ts";
import { sshHops } from "../db/ssh/hops.ts";
import { readKnownHosts, trustCommand } from "../db/ssh/known_hosts.ts";
import { isUntrustedHostKey, SshTunnel } from "../db/ssh/tunnel.ts";
import {
  describeTarget,
  lenientDecode,
  urlParts,
  urlProblem,
} from "../db/target.ts";
import { messageOf } from "../base/message_of.ts";
import { driverSpec, type SavedConnection } from "./connections.ts";

/** One thing the test tried, as a line for the owner. */
export interface ProbeStep {
  ok: boolean;
  text: string;
}

/** What a connection test found. */
export type ProbeReport =
  & { steps: ProbeStep[] }
  & (
    | { outcome: "ok"; version: string; risks: string[] }
    | { outcome: "untrusted" }
    | { outcome: "failed"; fix: string; message: string }
  );

/** The fix of a failed SSH hop. */
const HOP_FIX =
  "check the SSH hop named above (--ssh USER@HOST:PORT, --ssh-key, --ssh-password): see connections --help";

/**
 * Test `connection`: `knownHosts` is dbport's own known_hosts file (beside
 * connections.json), read with the user's.
 */
export async function probeConnection(
  connection: SavedConnection,
  knownHosts: string,
  context: SshContext = defaultSshContext([knownHosts]),
  open: typeof openDriver = openDriver,
): Promise<ProbeReport> {
  const steps: ProbeStep[] = [];
  const name = JSON.stringify(connection.name);
  // Each SSH hop first, so a failure says which one.
  if (connection.ssh !== undefined) {
    const hops = await checkHops(connection, context, steps);
    if (hops === "untrusted") return { steps, outcome: "untrusted" };
    if (hops === "failed") {
      return {
        steps,
        outcome: "failed",
        fix: HOP_FIX,
        message: steps.at(-1)?.text ?? "",
      };
    }
  }
  const driver = open(driverSpec(connection), "owner", context);
  const where = describeWhere(connection);
  try {
    const version = await driver.version({
      signal: new AbortController().signal,
      timeoutMs: 15_000,
    });
    steps.push({
      ok: true,
      text: `${name}: connected to ${where}: ${version}`,
    });
    // Not knowing is said as such, never as "no risks": the owner would
    // take a superuser's login for a reading one.
    const risks = await driver.loginRisks({
      signal: new AbortController().signal,
      timeoutMs: 15_000,
    }).catch((error): string[] => [
      `could not be checked for powers beyond reading (${
        error instanceof DbError ? error.message : messageOf(error)
      })`,
    ]);
    if (connection.aiLogin !== undefined) {
      steps.push({
        ok: true,
        text: `${name}: AI reads run as ${
          JSON.stringify(connection.aiLogin.user)
        }${risks.length > 0 ? `, which ${risks.join(", ")}` : ""}`,
      });
      return { steps, outcome: "ok", version, risks: [] };
    }
    return { steps, outcome: "ok", version, risks };
  } catch (error) {
    const message = error instanceof DbError
      ? error.message
      : error instanceof Error
      ? error.message
      : String(error);
    steps.push({
      ok: false,
      text: `${name}: cannot connect to ${where}: ${message}`,
    });
    return {
      steps,
      outcome: "failed",
      fix: fixFor(connection, message),
      message,
    };
  } finally {
    await driver.close();
  }
}

/** Reach each hop, and say what key each showed. */
async function checkHops(
  connection: SavedConnection,
  context: SshContext,
  steps: ProbeStep[],
): Promise<"ok" | "untrusted" | "failed"> {
  let tunnel: SshTunnel | null = null;
  try {
    const { hops } = await sshHops(
      connection.ssh!,
      context.env,
      connection.name,
    );
    tunnel = new SshTunnel({
      hops,
      secrets: [],
      trustCommand: trustCommand(connection.name),
      knownHosts: () => readKnownHosts(context.knownHostsFiles),
    });
    for (const report of await tunnel.check()) {
      steps.push({
        ok: true,
        text:
          `"${connection.name}": SSH ${report.host}:${report.port} ok (${report.keyType} ${report.fingerprint})`,
      });
    }
    return "ok";
  } catch (error) {
    steps.push({
      ok: false,
      text: `"${connection.name}": ${messageOf(error)}`,
    });
    return isUntrustedHostKey(error) ? "untrusted" : "failed";
  } finally {
    await tunnel?.close();
  }
}

/**
 * What to change for a failed test, from what the engine said (advice for
 * the owner only, never a decision about access).
 */
export function fixFor(connection: SavedConnection, message: string): string {
  const target = describeTarget(connection.engine, connection.url);
  // Before the password's: "sslpassword" is a client key's passphrase.
  if (/\b(sslcert|sslkey|sslpassword)\b|client certificate/i.test(message)) {
    return "check the client certificate in --url: sslcert and sslkey name its PEM files (readable by you), sslpassword is an encrypted key's passphrase, and the server must trust the CA that signed the certificate";
  }
  if (/password|authentication|Access denied|auth/i.test(message)) {
    return "check the user in --url and the password: give it with --password (asked without echo) or --password-stdin";
  }
  if (/database .*(does not exist|unknown)|Unknown database/i.test(message)) {
    return `check the database name at the end of --url (${
      target?.database ?? "none given"
    }), or create it on the server`;
  }
  if (target === null) {
    const problem = urlProblem(connection.engine, connection.url);
    return `fix the URL: it ${problem ?? "cannot be read"}`;
  }
  if (target.host === null) {
    return "check the path in --url: the file must exist and be readable";
  }
  if (
    /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|timed? ?out|unreachable/i.test(message)
  ) {
    return `is the ${ENGINES[connection.engine].label} server running at ${
      where(target)
    }? Start it, or fix the host and port in --url`;
  }
  return "fix what the error above names in --url or the server, then run the same command again";
}

/** Host, port, database and user of a connection, for its owner's eyes. */
export function describeWhere(connection: SavedConnection): string {
  const target = describeTarget(connection.engine, connection.url);
  if (target === null) return "(an unreadable URL)";
  if (target.host === null) return target.database ?? connection.url;
  const userinfo = urlParts(connection.url)?.userinfo ?? "";
  const user = lenientDecode(userinfo.split(":")[0]!);
  return `${user ? `${user}@` : ""}${where(target)}/${target.database ?? ""}`;
}

/** `host:port`, or the host list alone where each host has its port. */
function where(target: { host: string | null; port: number | null }): string {
  return target.port === null
    ? target.host ?? ""
    : `${target.host}:${target.port}`;
}
