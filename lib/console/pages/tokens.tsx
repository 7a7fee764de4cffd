/**
 * The Tokens page: every token (never its plaintext) with its level,
 * connections, expiry and last use; a form that creates one — its plaintext
 * shown once, on the page after — and Revoke.
 *
 * @module
 */

import { LEVELS, type TokenInfo, tokenStatus } from "../../app/tokens.ts";
import { at, Csrf, Time } from "./layout.tsx";
import type { TokenBudget } from "../../app/token_budgets.ts";
import { BridgeBudget, BudgetCell } from "./tokens_budget.tsx";
import { type Column, Table } from "./table.tsx";

/** The lifetimes the form offers. */
export const TOKEN_LIFETIMES = ["1d", "7d", "30d", "90d", "365d", "never"];

/** The create form and the list. */
export function TokensPage(props: {
  tokens: readonly TokenInfo[];
  connections: readonly { id: string; name: string }[];
  csrf: string;
  now: number;
  created?: { name: string; plaintext: string } | undefined;
  notice?: string | undefined;
  /** Budgets by token id (and `bridge`); tokens_budget.tsx. */
  budgets?: ReadonlyMap<string, TokenBudget>;
}) {
  const nameOf = (id: string) =>
    props.connections.find((c) => c.id === id)?.name ?? id;
  return (
    <>
      {props.notice ? <p class="notice">{props.notice}</p> : null}
      {props.created
        ? (
          <div class="notice" id="created-token">
            <p>
              Created the token "{props.created.name}". Copy it now: it is shown
              only this once.
            </p>
            <p>
              <span class="secret" id="token-plaintext">
                {props.created.plaintext}
              </span>
            </p>
            <p class="muted">
              HTTP clients send it as the header Authorization: Bearer
              &lt;token&gt;
            </p>
          </div>
        )
        : null}
      <section class="card">
        <h2>New token</h2>
        <form class="create" method="post" action={at("/tokens")}>
          <Csrf token={props.csrf} />
          <label>
            Name
            <input
              name="name"
              required
              maxlength={100}
              placeholder="laptop claude"
            />
          </label>
          <label>
            Level
            <select name="level">
              {LEVELS.map((level) => (
                <option key={level} value={level}>{level}</option>
              ))}
            </select>
          </label>
          <label>
            Expires in
            <select name="expires">
              {TOKEN_LIFETIMES.map((lifetime) => (
                <option value={lifetime} selected={lifetime === "90d"}>
                  {lifetime}
                </option>
              ))}
            </select>
          </label>
          {props.connections.length === 0 ? null : (
            <fieldset class="picker">
              <legend class="muted">Connections (none ticked: all)</legend>
              <input
                type="search"
                placeholder="Find a connection"
                aria-label="Find a connection"
                data-filter-list="token-connections"
                id="token-connection-search"
              />
              <div class="picklist" id="token-connections">
                {props.connections.map((c) => (
                  <label data-name={c.name.toLowerCase()}>
                    <input type="checkbox" name="connections" value={c.id} />
                    {c.name}
                  </label>
                ))}
              </div>
            </fieldset>
          )}
          <button class="primary" type="submit">Create</button>
        </form>
      </section>
      <Table
        stack
        rows={[...props.tokens].reverse()}
        row={(token) => ({ "data-token": token.id })}
        columns={tokenColumns(props, nameOf)}
        empty={<p class="empty">No token yet.</p>}
      />
      <BridgeBudget budget={props.budgets?.get("bridge")} csrf={props.csrf} />
    </>
  );
}

/** The list's columns. */
function tokenColumns(
  props: {
    now: number;
    csrf: string;
    budgets?: ReadonlyMap<string, TokenBudget>;
  },
  nameOf: (id: string) => string,
): Column<TokenInfo>[] {
  const status = (token: TokenInfo) => tokenStatus(token, props.now);
  return [
    { label: "Name", cell: (token) => token.name },
    { label: "Prefix", cell: (token) => <code>{token.prefix}…</code> },
    { label: "Level", cell: (token) => token.level },
    {
      label: "Connections",
      cell: (token) =>
        token.connections === null
          ? "all"
          : token.connections.map(nameOf).join(", "),
    },
    { label: "Created", cell: (token) => <Time ms={token.createdAt} /> },
    {
      label: "Expires",
      cell: (token) =>
        token.expiresAt === null ? "never" : <Time ms={token.expiresAt} />,
    },
    { label: "Last used", cell: (token) => <Time ms={token.lastUsedAt} /> },
    {
      label: "Status",
      class: (token) => `status-${status(token)}`,
      cell: status,
    },
    {
      label: "Budget",
      cell: (token) =>
        status(token) === "revoked" ? null : (
          <BudgetCell
            id={token.id}
            budget={props.budgets?.get(token.id)}
            csrf={props.csrf}
          />
        ),
    },
    {
      label: "",
      cell: (token) =>
        status(token) === "revoked" ? null : (
          <form
            class="inline"
            method="post"
            action={at(`/tokens/${token.id}/revoke`)}
          >
            <Csrf token={props.csrf} />
            <button class="revoke" type="submit">Revoke</button>
          </form>
        ),
    },
  ];
}
