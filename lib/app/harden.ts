/**
 * The AI login of a connection (docs/security.md "AI login"): the plan that
 * makes a least-privilege login for AI reads, so that the engine's own
 * privileges — not only dbport's classifier — keep AI clients from reading
 * server files, running programs or ending other sessions; its run as the
 * saved login, the proof that the new login reads and holds no such power,
 * its save with the connection, and its drop. Shared by `dbport connections
 * harden` (lib/cli/harden.ts) and the console's Harden button.
 *
 * The plan is made in harden_plan.ts, run in harden_run.ts, dropped in
 * harden_drop.ts; this module prepares, applies, proves and saves it.
 *
 * @module
 */

import { messageOf } from "../base/message_of.ts";
import {
  driverSpec,
  editConnections,
  previewMode,
  type SavedConnection,
} from "./connections.ts";
import { ENGINES } from "../db/engines.ts";
import { openDriver } from "../db/open_driver.ts";
import type { Driver } from "../db/types.ts";
import { changesDatabaseSelect, endMysqlSessions } from "./harden_private.ts";
import { type HardenPlan, newPassword, PLANS } from "./harden_plan.ts";
import { dropAiLogin } from "./harden_drop.ts";
import { HardenRefused, runAsOne, runEach } from "./harden_run.ts";
import { CALL, READ } from "./harden_sql.ts";

/** The default login name: `dbport_ai_` and the connection id's first part. */
export function aiUserName(connection: SavedConnection): string {
  return `dbport_ai_${connection.id.slice(0, 8)}`;
}

/** A plan made against a connection, to show and then apply. */
export interface PreparedHarden {
  connection: SavedConnection;
  plan: HardenPlan;
  /** The plan's statements with the new password masked, for showing. */
  shown: string[];
}

/**
 * Plan the AI login of `connection` (null for an engine without logins):
 * what the CLI prints and the console shows before anyone applies it.
 */
export async function prepareHarden(
  connection: SavedConnection,
  user: string = aiUserName(connection),
): Promise<PreparedHarden | null> {
  const makePlan = PLANS[connection.engine];
  if (makePlan === null) return null;
  const owner = ownerDriver(connection);
  try {
    const plan = await makePlan(
      owner,
      user,
      newPassword(),
      connection.privateColumns,
    );
    return {
      connection,
      plan,
      shown: plan.statements.map((sql) =>
        sql.replaceAll(plan.password, "********")
      ),
    };
  } finally {
    await owner.close();
  }
}

/** The saved login's driver (never the AI login), for the owner's eyes. */
function ownerDriver(connection: SavedConnection): Driver {
  const { aiLogin: _current, ...withoutLogin } = connection;
  return openDriver(driverSpec(withoutLogin), "owner");
}

/**
 * Run a prepared plan as the saved login, prove the new login reads and can
 * do no more, and return the connection with it (not saved yet); throws
 * with why it does not hold. A schema dropped meanwhile is passed over.
 */
export async function applyHarden(
  prepared: PreparedHarden,
): Promise<{ connection: SavedConnection; skipped: string[] }> {
  const { plan } = prepared;
  const owner = ownerDriver(prepared.connection);
  let skipped: string[];
  try {
    skipped = ENGINES[prepared.connection.engine].transactionalLogins
      ? await runAsOne(owner, plan)
      : await runEach(owner, plan);
    // A login made before: its sessions would keep an old database grant.
    if (
      ENGINES[prepared.connection.engine].sessionsKeepDatabaseGrants &&
      plan.statements.some(changesDatabaseSelect)
    ) {
      const left = await endMysqlSessions(owner, plan.user);
      if (left !== null) plan.notes.push(left);
    }
  } finally {
    await owner.close();
  }
  // The dry run would run as the saved login before anyone approves:
  // with an AI login the preview becomes the estimate, written down.
  const estimate = previewMode(prepared.connection) === "dryRun";
  const hardened: SavedConnection = {
    ...prepared.connection,
    aiLogin: { user: plan.user, password: plan.password },
    ...(estimate ? { writePreview: "estimate" as const } : {}),
  };
  const proven = await prove(hardened, plan);
  if (proven !== null) {
    // Nothing is saved, so a login this run created does not stay on the
    // server either: a role with a password nobody has (a failed proof
    // left one per try).
    let dropped = "";
    if (plan.creates === true) {
      const left = await dropAiLogin(hardened, { out: () => {} });
      dropped = left === null
        ? `; ${JSON.stringify(plan.user)} was dropped again`
        : `; dropping ${
          JSON.stringify(plan.user)
        } failed too (${left}): drop it yourself`;
    }
    throw new HardenRefused(
      `The new login does not hold: ${proven}${dropped}`,
    );
  }
  return { connection: hardened, skipped: [...new Set(skipped)] };
}

/**
 * Save the AI login of `hardened` with its connection in the file at
 * `path`; the rest of the entry is the file's own (a policy changed
 * meanwhile stays). A connection removed or pointed elsewhere meanwhile is
 * refused: the login was made where the plan ran.
 */
export async function saveHardened(
  path: string,
  hardened: SavedConnection,
): Promise<void> {
  // Under the connections file's lock, on the file as saved now: only the
  // AI login is set (the user may have changed the rest meanwhile).
  await editConnections(path, (fresh) => {
    const current = fresh.find((c) => c.id === hardened.id);
    if (
      current === undefined || current.url !== hardened.url ||
      current.engine !== hardened.engine
    ) {
      throw new Error(
        `"${hardened.name}" was removed or changed while its AI login was made; nothing was saved (run harden again)`,
      );
    }
    return fresh.map((c) =>
      c.id === hardened.id && hardened.aiLogin !== undefined
        ? {
          ...c,
          aiLogin: hardened.aiLogin,
          ...(hardened.writePreview === undefined
            ? {}
            : { writePreview: hardened.writePreview }),
        }
        : c
    );
  });
}

/**
 * Whether the AI login reads, holds no power past reading and is refused
 * the credential catalogs by the engine; why not.
 */
async function prove(
  connection: SavedConnection,
  plan: HardenPlan,
): Promise<string | null> {
  const reader = openDriver(driverSpec(connection), "owner");
  try {
    await reader.query("SELECT 1", READ);
    for (const sample of plan.mustRead ?? []) {
      const refused = await reader.query(sample.read, READ).then(
        () => null,
        (error: unknown) => error,
      );
      if (refused === null) break;
      // Dropped since the plan (another session's): the next one proves it.
      if ((await reader.query(sample.exists, READ)).rows.length > 0) {
        throw refused;
      }
    }
    const risks = await reader.loginRisks(CALL);
    if (risks.length > 0) return `it ${risks.join(", ")}`;
    for (const sql of plan.mustNotRead ?? []) {
      const read = await reader.query(sql, READ).then(() => true, () => false);
      if (read) return `it can run ${sql}`;
    }
    return null;
  } catch (error) {
    return messageOf(error);
  } finally {
    await reader.close();
  }
}
