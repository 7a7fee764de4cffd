/**
 * A bound on one row's size that holds before the row is in memory: mysql2
 * buffers a whole row (a 400 MB `REPEAT` arrives as two dozen 16 MiB wire
 * packets it joins into one), and MariaDB lets no session lower its own
 * `max_allowed_packet`. So the guard reads the packet headers of the bytes
 * the server sends, before mysql2's parser sees them: once one logical packet
 * (a row) announces more than the limit, nothing more is handed to the
 * parser, and the reader is told to stop the query (KILL QUERY on a side
 * connection) and destroy the session.
 *
 * It sits between the connection's stream (TCP, TLS or an SSH channel) and
 * mysql2's packet parser, so it reads plain packets in every case. The
 * compressed protocol (`?compress=true`) is not guarded (noted in
 * docs/security.md).
 *
 * @module
 */

/** The largest payload of one wire packet; a longer one continues. */
const MAX_PAYLOAD = 0xffffff;

/** The part of mysql2's connection the guard takes its place in. */
interface ParserHolder {
  packetParser: { execute(chunk: Uint8Array): void };
  config?: { compress?: boolean };
}

/** One connection's guard. */
export class RowGuard {
  #limit = Infinity;
  #overflow: ((bytes: number) => void) | null = null;
  #tripped = false;
  /** Header bytes seen of the next packet (0–3), and the header so far. */
  #headerSeen = 0;
  #header = new Uint8Array(4);
  /** Payload bytes still to come of the current packet. */
  #payloadLeft = 0;
  /** Bytes of the current logical packet (a row split over wire packets). */
  #logical = 0;

  /** Guard the rows read until {@linkcode clear}: at most `bytes` each. */
  limit(bytes: number, overflow: (bytes: number) => void): void {
    this.#limit = bytes;
    this.#overflow = overflow;
  }

  /** No bound (between reads). */
  clear(): void {
    this.#limit = Infinity;
    this.#overflow = null;
  }

  /**
   * Whether `chunk` may go on to the parser. Past the limit it never does
   * again: the session is to be destroyed.
   */
  pass(chunk: Uint8Array): boolean {
    if (this.#tripped) return false;
    let at = 0;
    while (at < chunk.length) {
      if (this.#payloadLeft > 0) {
        const take = Math.min(this.#payloadLeft, chunk.length - at);
        this.#payloadLeft -= take;
        at += take;
        continue;
      }
      this.#header[this.#headerSeen++] = chunk[at++]!;
      if (this.#headerSeen < 4) continue;
      this.#headerSeen = 0;
      const length = this.#header[0]! | (this.#header[1]! << 8) |
        (this.#header[2]! << 16);
      this.#logical += length;
      this.#payloadLeft = length;
      if (this.#logical > this.#limit) {
        this.#tripped = true;
        const overflow = this.#overflow;
        this.clear();
        overflow?.(this.#logical);
        return false;
      }
      // A packet of the largest size continues in the next one.
      if (length < MAX_PAYLOAD) this.#logical = 0;
    }
    return true;
  }
}

const GUARDS = new WeakMap<object, RowGuard>();

/**
 * Put a guard in front of `connection`'s packet parser (a mysql2
 * connection, just made). Returns null for a compressed-protocol session.
 */
export function guardRows(connection: object): RowGuard | null {
  const holder = connection as ParserHolder;
  if (holder.config?.compress === true || holder.packetParser === undefined) {
    return null;
  }
  const guard = new RowGuard();
  const parser = holder.packetParser;
  holder.packetParser = {
    execute: (chunk) => {
      if (guard.pass(chunk)) parser.execute(chunk);
    },
  };
  GUARDS.set(connection, guard);
  return guard;
}

/** The guard of a connection, if it has one. */
export function rowGuardOf(connection: object): RowGuard | undefined {
  return GUARDS.get(connection);
}

/**
 * The most bytes one row may take on the wire in a read with this answer
 * budget: the budget itself, but never under 16 MiB (one wire packet, so a
 * row whose long cells the budget cuts is still read) and never over
 * 64 MiB (mysql2 holds a row twice while it joins its packets).
 */
export function rowLimit(maxBytes: number): number {
  return Math.min(Math.max(maxBytes, 16 * 1024 * 1024), 64 * 1024 * 1024);
}
