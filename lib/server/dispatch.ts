/**
 * Run one request's handler and answer it: as JSON, or as an SSE stream when
 * the request carries a progressToken or the method streams (docs/wire.md
 * "Progress streaming", "Request lifecycle").
 *
 * @module
 */

import { Heartbeat } from "./heartbeat.ts";
import type {
  CallContext,
  CallRecord,
  Principal,
} from "../features/context.ts";
import type { Settings } from "../app/settings.ts";
import type { ClientInfo, TraceContext } from "../protocol/envelope.ts";
import {
  ErrorCode,
  errorResponse,
  toolError,
  wire,
  WireError,
} from "../protocol/errors.ts";
import type { JsonObject, JsonRpcId } from "../protocol/jsonrpc.ts";
import type { Era } from "../protocol/versions.ts";
import type { Logger } from "../base/log.ts";
import {
  activityEntry,
  type ActivityInput,
  type ActivitySink,
} from "./activity.ts";
import type { BudgetRefusal, TokenBudgets } from "./budgets.ts";
import { type Answer, toResponse } from "./answer.ts";
import { Deadline, type InFlightRegistry, RequestStopped } from "./inflight.ts";
import type { MethodSpec } from "./methods.ts";
import { finishResult } from "./result_envelope.ts";
import { SseStream } from "./sse_stream.ts";

/** The handler deadline (docs/wire.md "Limits"). */
export const HANDLER_DEADLINE_MS = 330_000;

/** One request, checked and ready to run. */
export interface Dispatch {
  spec: MethodSpec;
  id: JsonRpcId;
  era: Era;
  protocolVersion: string;
  params: JsonObject;
  clientCapabilities: JsonObject;
  clientInfo: ClientInfo | undefined;
  trace: TraceContext;
  principal: Principal;
  progressToken: string | number | undefined;
  session: { logLevel: string } | null;
  /** Aborts when the client's connection drops. */
  connection: AbortSignal;
}

/** What the dispatcher needs. */
export interface DispatcherDeps {
  inflight: InFlightRegistry;
  shutdown: AbortSignal;
  log: Logger;
  deadlineMs?: number;
  keepAliveMs?: number;
  /** Heartbeat interval of a request with a progressToken (heartbeat.ts). */
  heartbeatMs?: number;
  /** Where each finished request is logged. */
  activity?: ActivitySink;
  /** The clock for log times. */
  now?: () => number;
  /** Per-token budgets and the kill switch (budgets.ts). */
  budgets?: TokenBudgets;
  /**
   * The live settings: read once at each call's start, and the call sees
   * that snapshot throughout (`ctx.settings`).
   */
  settings?: () => Settings;
}

const STOPPED: Record<RequestStopped["reason"], () => WireError> = {
  cancelled: () =>
    new WireError(
      ErrorCode.RequestCancelled,
      "Request cancelled by the client",
    ),
  revoked: () =>
    new WireError(
      ErrorCode.RequestCancelled,
      "Request cancelled: its token was revoked",
    ),
  paused: () =>
    new WireError(
      ErrorCode.RequestCancelled,
      "Request cancelled: the user paused its token",
    ),
  disconnected: () =>
    new WireError(
      ErrorCode.RequestCancelled,
      "Request cancelled: the client disconnected",
    ),
  deadline: () =>
    new WireError(
      ErrorCode.RequestTimeout,
      "Request timed out: the handler deadline ran out",
    ),
  shutdown: () =>
    new WireError(
      ErrorCode.ServiceUnavailable,
      "Service unavailable: the server is shutting down",
    ),
};

/** What a running call left for its answer and its log. */
interface CallState {
  /** The handler's work can no longer be undone (ctx.holdAnswer). */
  held: boolean;
  /** What the handler resolved (ctx.record). */
  recorded: CallRecord;
  /** What the handler noted for the activity log (ctx.note). */
  notes: string[];
  /** The call ended: what it records or notes later is not logged. */
  done: boolean;
  heartbeat: Heartbeat | null;
}

const RECORD_KEYS = [
  "connectionId",
  "sql",
  "object",
] as const satisfies readonly (keyof CallRecord)[];

/** Runs requests. */
export class Dispatcher {
  readonly #deps: DispatcherDeps;
  readonly #deadlineMs: number;
  /** Activity entries to log once their answers are on their way. */
  #toLog: ActivityInput[] = [];

  constructor(deps: DispatcherDeps) {
    this.#deps = deps;
    this.#deadlineMs = deps.deadlineMs ?? HANDLER_DEADLINE_MS;
  }

  /**
   * Admit a request answered outside {@linkcode run} (legacy `initialize`)
   * by its token's budget: the error to answer, or null. A paused token or
   * one past its calls per minute may not mint sessions either (there are
   * 16, shared: minting evicts other clients').
   */
  admit(principal: Principal): WireError | null {
    const refused = this.#deps.budgets?.admit(principal) ?? null;
    return refused === null ? null : budgetError(refused);
  }

  /** Run a request; resolves with its answer as soon as the answer starts. */
  run(request: Dispatch): Promise<Response> {
    return this.answer(request).then(toResponse);
  }

  /**
   * Run a request; resolves with its answer, not yet written, as soon as
   * the answer starts (the fast path writes it to the socket itself).
   */
  answer(request: Dispatch): Promise<Answer> {
    const { inflight, log } = this.#deps;
    const entry = inflight.add(request.principal.key, request.id);
    const control = entry.controller;
    const onDisconnect = () =>
      control.abort(new RequestStopped("disconnected"));
    if (request.connection.aborted) onDisconnect();
    request.connection.addEventListener("abort", onDisconnect, { once: true });
    // One signal for the handler: what stops the request from outside and
    // its deadline abort it (the reason tells a timeout from a cancellation).
    const deadline = request.spec.deadline
      ? new Deadline(this.#deadlineMs, control)
      : null;
    const signal = control.signal;

    const streaming = request.progressToken !== undefined ||
      request.spec.streams;
    let stream: SseStream | null = null;
    let settle!: (answer: Answer) => void;
    const answer = new Promise<Answer>((resolve) => settle = resolve);
    const open = (): SseStream => {
      if (stream === null) {
        stream = new SseStream(this.#deps.keepAliveMs);
        stream.gone.addEventListener("abort", onDisconnect, { once: true });
        settle(stream);
      }
      return stream;
    };
    const { ctx, state } = this.#callContext(request, signal, deadline, open);

    const finish = async () => {
      const time = (this.#deps.now ?? Date.now)();
      const started = performance.now();
      let message: unknown;
      let status = 200;
      let headers: Record<string, string> = {};
      let ended: { errorCode: number } | { result: JsonObject };
      try {
        checkScope(request.principal, request.spec);
        const refused = this.#deps.budgets?.admit(request.principal) ?? null;
        // A tool call past its token's budget is the tool error `denied`
        // (a model reads it); any other request, the protocol error.
        if (refused !== null && request.spec.name !== "tools/call") {
          throw budgetError(refused);
        }
        const result = refused !== null
          ? toolError("denied", refused.message)
          : await untilStopped(request.spec.handler(ctx), signal, state);
        ended = { result };
        message = resultMessage(request, result);
      } catch (error) {
        const failure = toWireError(error, log, request.spec.name);
        ended = { errorCode: failure.code };
        message = errorResponse(request.id, failure);
        status = failure.status;
        headers = { ...failure.headers };
      } finally {
        deadline?.clear();
        state.heartbeat?.stop();
        ctx.budget?.release();
        request.connection.removeEventListener("abort", onDisconnect);
        inflight.delete(entry);
      }
      const durationMs = performance.now() - started;
      // What the call recorded and noted ends here, as its answer does.
      state.done = true;
      const input = this.#activityInput(request, state, {
        time,
        durationMs,
        ended,
      });
      // An open stream ends with the answer as its last frame; a streaming
      // request that failed before any frame keeps its HTTP status as JSON.
      const sse = (stream as SseStream | null) ??
        (streaming && status === 200 ? open() : null);
      if (sse === null) {
        settle({ status, body: message, headers });
        // The log entry is built once the answer is on its way: the fast
        // path's await of it is queued first, and writes the answer before
        // this runs (`run`'s caller, queued after it, sees the entry).
        if (input !== null) this.#logSoon(input);
      } else {
        if (input !== null) this.#deps.activity?.(activityEntry(input));
        sse.write(message);
        sse.close();
      }
    };
    void finish();
    return answer;
  }

  /**
   * The activity log's input for `request`, ended as `call` says, with what
   * its handler recorded and noted (`state`); null when nothing is logged.
   */
  #activityInput(
    request: Dispatch,
    state: CallState,
    call: Pick<ActivityInput, "time" | "durationMs" | "ended">,
  ): ActivityInput | null {
    const { time, durationMs, ended } = call;
    return this.#deps.activity === undefined ? null : {
      time,
      durationMs,
      principal: request.principal,
      clientInfo: request.clientInfo,
      method: request.spec.name,
      params: request.params,
      trace: request.trace,
      ended,
      recorded: state.recorded,
      detail: state.notes.length === 0 ? undefined : state.notes.join("; "),
    };
  }

  /** Log `input` in a microtask queued now (one for the entries of a turn). */
  #logSoon(input: ActivityInput): void {
    this.#toLog.push(input);
    if (this.#toLog.length === 1) queueMicrotask(this.#logQueued);
  }

  /** Log every entry {@linkcode #logSoon} queued. */
  readonly #logQueued = (): void => {
    const inputs = this.#toLog;
    this.#toLog = [];
    for (const input of inputs) this.#deps.activity?.(activityEntry(input));
  };

  /**
   * The handler's view of `request`: its one signal and deadline, the
   * settings as they are now (one snapshot per call), progress frames on
   * the stream `open` starts, and what it records and notes for the log.
   */
  #callContext(
    request: Dispatch,
    signal: AbortSignal,
    deadline: Deadline | null,
    open: () => SseStream,
  ): { ctx: CallContext; state: CallState } {
    let lastProgress = -Infinity;
    const frame = (progress: number, total: number, message: string) => {
      const token = request.progressToken;
      // A non-advancing update is dropped (docs/wire.md "Progress streaming").
      if (token === undefined || !(progress > lastProgress)) return;
      if (signal.aborted) return;
      lastProgress = progress;
      heartbeat?.sent(progress);
      open().write({
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken: token, progress, total, message },
      });
    };
    const heartbeat = request.progressToken === undefined
      ? null
      : new Heartbeat(
        (progress, message) => frame(progress, 1, message),
        this.#deps.heartbeatMs,
      );
    const budget = this.#deps.budgets?.callBudget(request.principal);
    const settings = this.#deps.settings?.();
    const state: CallState = {
      held: false,
      recorded: {},
      notes: [],
      done: false,
      heartbeat,
    };
    const ctx: CallContext = {
      era: request.era,
      protocolVersion: request.protocolVersion,
      method: request.spec.name,
      params: request.params,
      clientCapabilities: request.clientCapabilities,
      clientInfo: request.clientInfo,
      trace: request.trace,
      principal: request.principal,
      signal,
      ...(deadline === null ? {} : { deadlineAt: deadline.at }),
      ...(settings === undefined ? {} : { settings }),
      shutdown: this.#deps.shutdown,
      session: request.session,
      id: request.id,
      progress: frame,
      waiting: (what, leftMs) => heartbeat?.waiting(what, leftMs),
      holdAnswer: () => {
        state.held = true;
      },
      note: (text) => {
        if (!state.done) state.notes.push(text);
      },
      record: (what) => {
        if (state.done) return;
        // Only what is given: a later record adds to the earlier ones.
        for (const key of RECORD_KEYS) {
          const value = what[key];
          if (value !== undefined) state.recorded[key] = value;
        }
      },
      notify: (method, params) => {
        if (signal.aborted) return;
        open().write({ jsonrpc: "2.0", method, params });
      },
      ...(budget === undefined ? {} : { budget }),
    };
    return { ctx, state };
  }
}

/** The JSON-RPC response carrying a handler's `result` for `request`. */
function resultMessage(request: Dispatch, result: JsonObject): JsonObject {
  return {
    jsonrpc: "2.0",
    id: request.id,
    result: finishResult(
      result,
      request.spec,
      request.era,
      request.params,
    ),
  };
}

/**
 * The method's own scope (docs/wire.md "JSON-RPC methods"); a tool's scope is
 * checked by `tools/call` once it knows the tool.
 */
function checkScope(principal: Principal, spec: MethodSpec): void {
  if (spec.scope !== null && !principal.scopes.has(spec.scope)) {
    throw wire.insufficientScope([spec.scope], spec.name);
  }
}

/**
 * A request past its token's budget: `-33010` with `Retry-After` past the
 * calls per minute, `-33007` while the token is paused.
 */
function budgetError(refused: BudgetRefusal): WireError {
  const { message } = refused;
  if (refused.paused || refused.retryAfterSeconds === null) {
    return new WireError(ErrorCode.Forbidden, `Forbidden: ${message}`);
  }
  const seconds = refused.retryAfterSeconds;
  return new WireError(
    ErrorCode.RateLimited,
    `Rate limited: ${message}`,
    { retryAfterSeconds: seconds },
    { "retry-after": String(seconds) },
  );
}

/**
 * Resolve with the handler, or reject with the stop reason once stopped -
 * unless the handler holds its answer (its work can no longer be undone).
 */
function untilStopped<T>(
  work: Promise<T>,
  signal: AbortSignal,
  held: { readonly held: boolean },
): Promise<T> {
  // The abandoned handler may still settle later; its outcome is not wanted.
  work.catch(() => {});
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      if (!held.held) reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/** Map anything a handler threw to a wire error; internal details never leave. */
export function toWireError(
  error: unknown,
  log: Logger,
  method: string,
): WireError {
  if (error instanceof WireError) return error;
  if (error instanceof RequestStopped) return STOPPED[error.reason]();
  log(
    `dbport: ${method} failed: ${
      error instanceof Error ? error.stack ?? error.message : String(error)
    }`,
  );
  return wire.internal();
}
