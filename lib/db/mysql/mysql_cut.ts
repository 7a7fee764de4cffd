/**
 * Stopping a MySQL/MariaDB statement and ending its session: `KILL QUERY`
 * from a second, short-lived connection, and a killed session's socket
 * closed at once, never pooled again.
 *
 * @module
 */

import mysql from "mysql2";

/**
 * KILL QUERY from a separate short-lived connection, opened with `base`
 * (the driver's session options: the same server, login and stream).
 */
export async function kill(
  base: mysql.ConnectionOptions,
  threadId: number,
): Promise<void> {
  const side = mysql.createConnection(base);
  try {
    await side.promise().query(`KILL QUERY ${Number(threadId)}`);
  } catch {
    // ER_NO_SUCH_THREAD: it already ended.
  } finally {
    side.destroy();
  }
}

/**
 * End a session that is never pooled again, its socket closed at once.
 * mysql2's `destroy()` only half-closes the socket and waits for the
 * server's end; a session paused by a cut read never reads that end, so it
 * kept its socket and every packet the server had still sent, queued
 * (`_paused_packets`): under load (64 clients, reads cut at 500 rows) that
 * was one socket and ~1,500 rows per cut read, 800 MiB at the peak.
 */
export function discard(connection: mysql.Connection): void {
  connection.destroy();
  (connection as unknown as { stream?: { destroy?: () => void } }).stream
    ?.destroy?.();
}
