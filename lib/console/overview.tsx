/**
 * The Overview's figures, read from the activity log and the driver pool.
 *
 * @module
 */

import { windowStats } from "../app/activity_stats.ts";
import type { ConsoleDeps } from "./deps.ts";
import { OverviewBody, type Problem } from "./pages/overview.tsx";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The Overview below its approvals: the last hour and day, and problems. */
export async function overview(deps: ConsoleDeps) {
  const now = deps.now();
  const rows = await deps.activity.since(now - DAY);
  const names = new Map(deps.connections.all().map((c) => [c.id, c.name]));
  const problems: Problem[] = deps.connections.all().flatMap((connection) => {
    const failure = deps.pool.lastFailure(connection.id);
    const risks = deps.pool.risks(connection.id);
    return failure !== null || (risks !== null && risks.length > 0)
      ? [{ connection, failure, risks }]
      : [];
  });
  return (
    <OverviewBody
      windows={[
        {
          key: "hour",
          title: "Last hour",
          stats: windowStats(rows, now + 1 - HOUR, now + 1, 60),
        },
        {
          key: "day",
          title: "Last 24 hours",
          stats: windowStats(rows, now + 1 - DAY, now + 1, 96),
        },
      ]}
      problems={problems}
      nameOf={(id) => names.get(id) ?? id}
    />
  );
}
