/**
 * The Harden confirmation: the statements that make a connection's
 * least-privilege AI login (the same plan `connections harden` prints, the
 * new password masked), what the plan cannot do, and the second click that
 * runs them.
 *
 * @module
 */

import { at, Csrf } from "./layout.tsx";

/** The plan shown before it runs. */
export function HardenConfirm(props: {
  connection: { id: string; name: string };
  user: string;
  statements: readonly string[];
  notes: readonly string[];
  plan: string;
  csrf: string;
}) {
  return (
    <section class="card" data-harden={props.connection.id}>
      <h2>
        Harden "{props.connection.name}": a login for AI reads
      </h2>
      <p>
        Create the login <code>{props.user}</code>{" "}
        as the saved login, with these statements; every AI read then runs as
        it, and the database itself refuses it anything but reading your schemas
        (no files, programs, other sessions or password verifiers). Approved
        writes keep the saved login.
      </p>
      <pre
        class="sql"
        id="harden-statements"
      >{props.statements.map((sql) => `${sql};`).join("\n")}</pre>
      {props.notes.map((note) => <p class="muted" key={note}>Note: {note}</p>)}
      <form
        class="actions"
        method="post"
        action={at(`/connections/${props.connection.id}/harden/apply`)}
      >
        <Csrf token={props.csrf} />
        <input type="hidden" name="plan" value={props.plan} />
        <button class="approve" type="submit" id="harden-apply">
          Create the login and use it
        </button>
        <a href={at("/connections")}>Cancel</a>
      </form>
    </section>
  );
}

/** The first click: show the plan (nothing runs yet). */
export function HardenButton(
  props: { id: string; again: boolean; csrf: string },
) {
  return (
    <form
      class="inline"
      method="post"
      action={at(`/connections/${props.id}/harden`)}
    >
      <Csrf token={props.csrf} />
      <button type="submit" class="harden">
        {props.again ? "Harden again (new password)…" : "Harden…"}
      </button>
    </form>
  );
}
