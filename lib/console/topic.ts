/**
 * What changes refresh a page's live part: a leaf, so the page routes
 * (log_routes.tsx) and the app that mounts them (app.tsx) share it without
 * importing each other.
 *
 * @module
 */

/** What changes refresh a page's live part. */
export type ConsoleTopic = "approvals" | "activity" | "history";
