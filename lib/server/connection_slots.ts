/**
 * The listener's connection slots (docs/wire.md "Limits"): at most `max`
 * connections at once; one past the cap waits up to `slotWaitMs` for a free
 * slot, then gets `busyResponse` - never a bare reset. Before it waits, the
 * least recently used idle keep-alive connection is closed to make room. A
 * socket gets `idleMs` to deliver a whole request, head and body (Deno's
 * node:http does not enforce `headersTimeout`, and a body has no deadline
 * of its own: a slow loris would hold its slot for ever);
 * while a request is answered, `idleMs` without a byte either way goes to
 * {@linkcode ConnectionSlots.timedOut}, which spares a socket whose request
 * is still being worked on. These are alarms (lib/base/alarms.ts), not
 * node:http's socket timeouts: those were two runtime timers a request.
 *
 * @module
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { type Alarm, alarm } from "../base/alarms.ts";

/** The slots' limits. */
export interface SlotLimits {
  max: number;
  idleMs: number;
  slotWaitMs: number;
  /** The raw HTTP answer a connection that found no slot is sent. */
  busyResponse: string;
}

/** A connection past the cap, paused until a slot frees or its wait ends. */
interface Waiting {
  socket: Socket;
  timer: ReturnType<typeof setTimeout>;
}

/** Counts connections, queues the ones past the cap, and times them out. */
export class ConnectionSlots {
  readonly #limits: SlotLimits;
  #open = 0;
  readonly #waiting: Waiting[] = [];
  /**
   * Requests being answered keep their socket: a long statement with no
   * progress must not be cut by the idle timer.
   */
  readonly #busy = new WeakMap<Socket, number>();
  /**
   * Answered connections that ask nothing now, least recently used first
   * (a Map keeps insertion order; each answer moves its socket last), with
   * the bytes each had read when its answer closed: one that read more
   * since has started its next request (its head is on the way).
   */
  readonly #idleKeptAlive = new Map<Socket, number>();
  /** Each socket's deadline to deliver a whole request, head and body. */
  readonly #headDeadline = new WeakMap<
    Socket,
    Alarm
  >();
  /**
   * The request each socket is answering: one whose body has not fully
   * arrived when the idle timer fires is a stalled upload, not work.
   */
  readonly #current = new WeakMap<Socket, IncomingMessage>();

  constructor(limits: SlotLimits) {
    this.#limits = limits;
  }

  /** A new connection: a slot now, or a wait for one (then a 503). */
  connected(socket: Socket): void {
    if (this.#open < this.#limits.max) return this.#admit(socket);
    // Not read until a slot frees: node:http parses nothing meanwhile.
    socket.pause();
    const entry = {
      socket,
      timer: setTimeout(() => {
        this.#unqueue(entry);
        socket.end(this.#limits.busyResponse);
        setTimeout(() => socket.destroy(), 1_000).unref?.();
      }, this.#limits.slotWaitMs),
    };
    this.#waiting.push(entry);
    // Room from the connection idle the longest, if there is one (not one
    // already sending its next request): its close admits the first
    // waiting connection.
    for (const [idle, read] of this.#idleKeptAlive) {
      if (idle.bytesRead !== read) continue;
      this.#idleKeptAlive.delete(idle);
      idle.destroy();
      break;
    }
    socket.once("close", () => {
      clearTimeout(entry.timer);
      this.#unqueue(entry);
    });
  }

  /** A request arrived on its socket: busy until its answer closes. */
  requested(request: IncomingMessage, response: ServerResponse): void {
    const socket = request.socket;
    this.#current.set(socket, request);
    // The head's deadline holds until the body has come too: a body
    // trickled a byte at a time is a slow loris as much as a head (an
    // outsider kept a connection 20 idle timeouts that way).
    const deadline = this.#headDeadline.get(socket);
    if (request.complete) deadline?.clear();
    else request.once("end", () => deadline?.clear());
    this.#idleKeptAlive.delete(socket);
    this.#busy.set(socket, (this.#busy.get(socket) ?? 0) + 1);
    const watch = new IdleWatch(
      socket,
      this.#limits.idleMs,
      () => this.timedOut(socket),
    );
    response.once("close", () => {
      watch.clear();
      const left = (this.#busy.get(socket) ?? 1) - 1;
      this.#busy.set(socket, left);
      if (left === 0 && !socket.destroyed) {
        this.#armHead(socket);
        this.#idleKeptAlive.set(socket, socket.bytesRead);
      }
    });
  }

  /**
   * The idle timer fired: a request still being worked on keeps its socket;
   * but a client that stopped reading its answer (bytes waiting to be sent
   * for `idleMs`) holds its slot as much as a silent one, and a body that
   * stopped arriving holds it like a slow loris: both are cut.
   */
  timedOut(socket: Socket): void {
    const request = this.#current.get(socket);
    const stalled = request !== undefined && !request.complete;
    const working = (this.#busy.get(socket) ?? 0) > 0;
    if (working && socket.writableLength === 0 && !stalled) return;
    socket.destroy();
  }

  #admit(socket: Socket): void {
    this.#open++;
    this.#armHead(socket);
    socket.once("close", () => {
      this.#headDeadline.get(socket)?.clear();
      this.#idleKeptAlive.delete(socket);
      this.#open--;
      const next = this.#waiting.shift();
      if (next !== undefined) {
        clearTimeout(next.timer);
        this.#admit(next.socket);
        next.socket.resume();
      }
    });
  }

  /** `idleMs` to deliver a whole request, head and body: from now. */
  #armHead(socket: Socket): void {
    this.#headDeadline.get(socket)?.clear();
    this.#headDeadline.set(
      socket,
      alarm(this.#limits.idleMs, () => socket.destroy()),
    );
  }

  #unqueue(entry: Waiting): void {
    const at = this.#waiting.indexOf(entry);
    if (at !== -1) this.#waiting.splice(at, 1);
  }
}

/**
 * A request's idle timer: every `idleMs` it looks whether a byte moved on
 * the socket either way since it last looked; when none did, `idle` is
 * told (and it keeps looking while the socket stays open). A client cut
 * for silence waited `idleMs` to twice that.
 */
class IdleWatch {
  #seen: number;
  #alarm: Alarm;
  readonly #tick = () => this.#look();

  constructor(
    readonly socket: Socket,
    readonly idleMs: number,
    readonly idle: () => void,
  ) {
    this.#seen = moved(socket);
    this.#alarm = alarm(idleMs, this.#tick);
  }

  #look(): void {
    const now = moved(this.socket);
    if (now === this.#seen) this.idle();
    this.#seen = now;
    if (!this.socket.destroyed) this.#alarm = alarm(this.idleMs, this.#tick);
  }

  clear(): void {
    this.#alarm.clear();
  }
}

/** Bytes read and handed to write on `socket` so far. */
function moved(socket: Socket): number {
  return socket.bytesRead + socket.bytesWritten;
}
