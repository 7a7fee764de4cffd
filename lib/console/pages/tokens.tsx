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
      {props.tokens.length === 0
        ? <p class="empty">No token yet.</p>
        : (
          <table class="stack">
            <thead>
              <tr>
                <th>Name</th>
                <th>Prefix</th>
                <th>Level</th>
                <th>Connections</th>
                <th>Created</th>
                <th>Expires</th>
                <th>Last used</th>
                <th>Status</th>
                <th>Budget</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              {[...props.tokens].reverse().map((token) => {
                const status = tokenStatus(token, props.now);
                return (
                  <tr data-token={token.id}>
                    <td data-label="Name">{token.name}</td>
                    <td data-label="Prefix">
                      <code>{token.prefix}…</code>
                    </td>
                    <td data-label="Level">{token.level}</td>
                    <td data-label="Connections">
                      {token.connections === null
                        ? "all"
                        : token.connections.map(nameOf).join(", ")}
                    </td>
                    <td data-label="Created">
                      <Time ms={token.createdAt} />
                    </td>
                    <td data-label="Expires">
                      {token.expiresAt === null
                        ? "never"
                        : <Time ms={token.expiresAt} />}
                    </td>
                    <td data-label="Last used">
                      <Time ms={token.lastUsedAt} />
                    </td>
                    <td data-label="Status" class={`status-${status}`}>
                      {status}
                    </td>
                    <td data-label="Budget">
                      {status === "revoked" ? null : (
                        <BudgetCell
                          id={token.id}
                          budget={props.budgets?.get(token.id)}
                          csrf={props.csrf}
                        />
                      )}
                    </td>
                    <td>
                      {status === "revoked" ? null : (
                        <form
                          class="inline"
                          method="post"
                          action={at(`/tokens/${token.id}/revoke`)}
                        >
                          <Csrf token={props.csrf} />
                          <button class="revoke" type="submit">Revoke</button>
                        </form>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      <BridgeBudget budget={props.budgets?.get("bridge")} csrf={props.csrf} />
    </>
  );
}
