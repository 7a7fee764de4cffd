/**
 * The Overview page and its approvals (docs/console.md "How approvals reach you"): the
 * requests waiting for the owner's answer, live, above the activity's
 * summary; Approve or Deny posts to `/approvals/:id`.
 *
 * @module
 */

import { Hono } from "hono";
import { HttpError } from "../server/http_error.ts";
import type { ConsoleDeps } from "./deps.ts";
import type { ConsoleEnv } from "./guards.ts";
import { overview } from "./overview.tsx";
import { ApprovalsList } from "./pages/approvals.tsx";
import type { ConsoleView } from "./view.tsx";

/** The Overview page (`/`) and the approvals' answers. */
export function approvalRoutes(
  deps: ConsoleDeps,
  view: ConsoleView,
): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.get("/", async (c) => {
    const approvals = (
      <ApprovalsList
        approvals={deps.pending.list()}
        csrf={c.get("session").csrf}
        timeoutMs={deps.settings().approvalTimeoutSeconds * 1000}
        notice={view.notice(c)}
      />
    );
    if (c.req.query("fragment") === "1") return view.html(approvals);
    return view.whole({
      title: "Overview",
      path: "/",
      topic: "approvals",
      after: await overview(deps),
    }, approvals);
  });

  app.post("/approvals/:id", (c) => {
    const decision = c.get("form").decision;
    if (decision !== "approve" && decision !== "deny") {
      throw HttpError.plain(
        400,
        "bad_decision",
        'decision must be "approve" or "deny"',
      );
    }
    const answered = deps.pending.answer(
      c.req.param("id"),
      decision === "approve",
    );
    return view.see(
      `/?notice=${
        answered ? (decision === "approve" ? "approved" : "denied") : "gone"
      }`,
    );
  });

  return app;
}
