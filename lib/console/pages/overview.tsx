/**
 * The Overview (the console's home, docs/console.md "Overview"): the
 * approvals waiting (live, above), then what the AI clients did over the
 * last hour and day — calls, calls per minute, p50/p95 latency, denials and
 * errors, as inline SVG drawn here on the server, by client and by
 * connection — and the connections with problems. Every number comes from
 * the activity log (lib/app/activity_stats.ts).
 *
 * @module
 */

import type { Figures, WindowStats } from "../../app/activity_stats.ts";
import type { SavedConnection } from "../../app/connections.ts";
import type { ConnectionFailure } from "../../db/pool.ts";
import { at, Time } from "./layout.tsx";
import { type Column, Table } from "./table.tsx";

/** A connection that needs a look. */
export interface Problem {
  connection: SavedConnection;
  failure: ConnectionFailure | null;
  risks: readonly string[] | null;
}

/** Everything below the approvals. */
export function OverviewBody(props: {
  windows: readonly { key: string; title: string; stats: WindowStats }[];
  problems: readonly Problem[];
  nameOf: (id: string) => string;
}) {
  return (
    <>
      <section class="card" id="problems">
        <h2>Connections with problems</h2>
        {props.problems.length === 0
          ? (
            <p class="muted">
              None: every connection answered at its last try.
            </p>
          )
          : (
            <ul>
              {props.problems.map((problem) => (
                <li data-problem={problem.connection.id}>
                  <a href={at("/connections")}>{problem.connection.name}</a>
                  {problem.failure
                    ? (
                      <span class="outcome-error failure">
                        {` — ${problem.failure.message} (`}
                        <Time ms={problem.failure.at} />)
                      </span>
                    )
                    : null}
                  {problem.risks && problem.risks.length > 0
                    ? (
                      <span class="outcome-error">
                        {` — its login ${problem.risks.join(", ")}`}
                      </span>
                    )
                    : null}
                </li>
              ))}
            </ul>
          )}
      </section>
      {props.windows.map((window) => (
        <section class="card" data-window={window.key}>
          <h2>{window.title}</h2>
          <FigureTiles figures={window.stats.total} prefix={window.key} />
          <CallsChart stats={window.stats} />
          <div class="split">
            <Breakdown
              title="By client"
              kind="client"
              rows={window.stats.byClient.map((row) => ({
                key: row.name,
                label: row.name,
                figures: row.figures,
              }))}
            />
            <Breakdown
              title="By connection"
              kind="connection"
              rows={window.stats.byConnection.map((row) => ({
                key: row.id ?? "",
                label: row.id === null ? "(none)" : props.nameOf(row.id),
                figures: row.figures,
              }))}
            />
          </div>
        </section>
      ))}
    </>
  );
}

function FigureTiles(props: { figures: Figures; prefix: string }) {
  const { figures } = props;
  const ms = (value: number | null) => value === null ? "—" : `${value} ms`;
  const tiles: [string, string, string][] = [
    ["calls", "Calls", String(figures.calls)],
    ["per-minute", "Per minute", String(figures.perMinute)],
    ["p50", "p50", ms(figures.p50)],
    ["p95", "p95", ms(figures.p95)],
    ["denied", "Denied", String(figures.denied)],
    ["errors", "Errors", String(figures.errors)],
  ];
  return (
    <dl class="tiles">
      {tiles.map(([key, label, value]) => (
        <div class={`tile tile-${key}`}>
          <dt>{label}</dt>
          <dd data-figure={`${props.prefix}-${key}`}>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Calls per bucket as stacked bars (answered, denied, errors), p95 as a line. */
function CallsChart(props: { stats: WindowStats }) {
  const { buckets } = props.stats;
  const width = 720;
  const height = 120;
  const top = 4;
  const bottom = 2;
  const plot = height - top - bottom;
  const most = Math.max(1, ...buckets.map((b) => b.calls));
  const slowest = Math.max(1, ...buckets.map((b) => b.p95 ?? 0));
  const step = width / buckets.length;
  const y = (count: number) => (count / most) * plot;
  const minutes = props.stats.bucketMs / 60_000;
  const label = (ms: number) => new Date(ms).toISOString().slice(11, 16);
  // Labels sit outside the SVG, which stretches to the page's width.
  const p95 = buckets
    .map((b, i) =>
      b.p95 === null
        ? null
        : `${(i + 0.5) * step},${top + plot - (b.p95 / slowest) * plot}`
    )
    .filter((point) => point !== null);
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`Calls per ${minutes} minute${minutes === 1 ? "" : "s"}`}
        preserveAspectRatio="none"
      >
        <line
          class="axis"
          x1="0"
          x2={String(width)}
          y1={String(top + plot)}
          y2={String(top + plot)}
        />
        {buckets.map((b, i) => {
          const ok = b.calls - b.denied - b.errors;
          const x = i * step + step * 0.1;
          const w = step * 0.8;
          let base = top + plot;
          const parts: [string, number][] = [
            ["bar-ok", ok],
            ["bar-denied", b.denied],
            ["bar-error", b.errors],
          ];
          return (
            <g>
              <title>
                {`${
                  label(b.start)
                } UTC: ${b.calls} calls, ${b.denied} denied, ${b.errors} errors${
                  b.p95 === null ? "" : `, p95 ${b.p95} ms`
                }`}
              </title>
              {parts.map(([cls, count]) => {
                if (count === 0) return null;
                const h = y(count);
                base -= h;
                return (
                  <rect
                    class={cls}
                    x={String(x)}
                    y={String(base)}
                    width={String(w)}
                    height={String(h)}
                  />
                );
              })}
            </g>
          );
        })}
        {p95.length > 1
          ? <polyline class="line-p95" points={p95.join(" ")} />
          : null}
      </svg>
      <div class="axis-labels muted">
        <span>
          <Time ms={props.stats.from} />
        </span>
        <span>most: {most} calls</span>
        <span>now</span>
      </div>
      <figcaption class="muted">
        Calls per {minutes === 1 ? "minute" : `${minutes} minutes`}:{" "}
        <span class="key-ok">answered</span>,{" "}
        <span class="key-denied">denied</span>,{" "}
        <span class="key-error">errors</span>;{" "}
        <span class="key-p95">the line: p95 latency</span> (up to {slowest} ms).
      </figcaption>
    </figure>
  );
}

function Breakdown(props: {
  title: string;
  kind: string;
  rows: readonly { key: string; label: string; figures: Figures }[];
}) {
  return (
    <div class="wide">
      <h3>{props.title}</h3>
      {props.rows.length === 0 ? <p class="muted">No calls.</p> : (
        <Table
          class={`by-${props.kind}`}
          rows={props.rows}
          row={(row) => ({ "data-key": row.key })}
          columns={[
            { label: props.kind, cell: (row) => row.label },
            ...FIGURE_COLUMNS,
          ]}
        />
      )}
    </div>
  );
}

/** A breakdown's figure column; `mark` names its cells for the tests. */
function figure(
  label: string,
  value: (figures: Figures) => number | string,
  mark?: string,
): Column<{ figures: Figures }> {
  return {
    label,
    headClass: "num",
    class: "num",
    ...(mark === undefined ? {} : { attrs: { [mark]: true } }),
    cell: (row) => value(row.figures),
  };
}

/** A breakdown's figures, a column each. */
const FIGURE_COLUMNS = [
  figure("Calls", (f) => f.calls, "data-calls"),
  figure("/min", (f) => f.perMinute),
  figure("p50", (f) => f.p50 ?? "—"),
  figure("p95", (f) => f.p95 ?? "—"),
  figure("Denied", (f) => f.denied, "data-denied"),
  figure("Errors", (f) => f.errors, "data-errors"),
];
