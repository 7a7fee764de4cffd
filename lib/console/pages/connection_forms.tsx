/**
 * The Connections page's forms: add (the engine inferred from the URL, the
 * password never shown back), a test's report (each step), edit, and the
 * removal's confirmation. Fields are named as the CLI's flags (`ssh-key`,
 * `ssh-jump`, …), so a setting added to the CLI is one more input here.
 *
 * @module
 */

import type { ProbeReport } from "../../app/connection_probe.ts";
import { type SavedConnection, WRITE_PREVIEWS } from "../../app/connections.ts";
import { ENGINE_NAMES } from "../../db/engines.ts";
import { at, Choice, Csrf } from "./layout.tsx";
import { maskUrlSecrets } from "../url_secrets.ts";

/** What the add form shows again after a refusal (never the password). */
export type AddValues = Record<string, string> & {
  name: string;
  url: string;
  engine: string;
};

/** A test's report with the connection it was about. */
export type TestReport = ProbeReport & { name: string; where: string };

/** One labelled text input. */
function Field(props: {
  label: string;
  name: string;
  value?: string;
  placeholder?: string;
  type?: string;
  required?: boolean;
  hint?: string;
}) {
  return (
    <label>
      {props.label}
      <input
        type={props.type ?? "text"}
        name={props.name}
        value={props.type === "password" ? "" : props.value ?? ""}
        placeholder={props.placeholder ?? ""}
        required={props.required}
        autocomplete={props.type === "password" ? "new-password" : "off"}
      />
      {props.hint ? <span class="muted">{props.hint}</span> : null}
    </label>
  );
}

/** The SSH fields (all optional). */
function SshFields(props: { values: Record<string, string> }) {
  return (
    <details class="ssh" open={Boolean(props.values.ssh)}>
      <summary>Through SSH (optional)</summary>
      <div class="fields">
        <Field
          label="SSH user@host[:port]"
          name="ssh"
          value={props.values.ssh ?? ""}
          placeholder="deploy@bastion.example:22"
        />
        <Field
          label="SSH key file"
          name="ssh-key"
          value={props.values["ssh-key"] ?? ""}
          placeholder="~/.ssh/id_ed25519"
        />
        <Field
          label="Jump hosts"
          name="ssh-jump"
          value={props.values["ssh-jump"] ?? ""}
          placeholder="user@host:port,host2"
        />
        <Field
          label="Key passphrase or SSH password"
          name="ssh-password"
          type="password"
        />
      </div>
    </details>
  );
}

/** Add a connection. */
export function AddForm(props: {
  csrf: string;
  values?: AddValues;
  error?: string;
}) {
  const values = props.values ??
    ({ name: "", url: "", engine: "" } as AddValues);
  return (
    <details class="card add" id="add" open={props.error !== undefined}>
      <summary>
        <strong>Add a connection</strong>
      </summary>
      {props.error
        ? (
          <p class="notice outcome-error" id="add-error" role="alert">
            {props.error}
          </p>
        )
        : null}
      <form method="post" action={at("/connections/add")} class="stacked">
        <Csrf token={props.csrf} />
        <div class="fields">
          <Field label="Name" name="name" value={values.name} required />
          <Field
            label="URL"
            name="url"
            value={values.url}
            placeholder="postgres://user@127.0.0.1:5432/shop, mysql://…, /path/to/file.db"
            required
            hint="The engine is read from it."
          />
          <Choice
            label="Engine"
            name="engine"
            options={[
              ["", "from the URL"],
              ...ENGINE_NAMES.map((e) => [e, e] as const),
            ]}
            current={values.engine}
          />
          <Field
            label="Password (if not in the URL)"
            name="password"
            type="password"
          />
        </div>
        <SshFields values={values} />
        <div class="actions">
          <button class="primary" type="submit" id="add-save">
            Test and save
          </button>
          <label class="check">
            <input type="checkbox" name="save-anyway" value="1" />{" "}
            Save anyway if the test fails
          </label>
        </div>
      </form>
    </details>
  );
}

/** What a test found, a line per step. */
export function TestReportView(props: { report: TestReport }) {
  const { report } = props;
  return (
    <section class="card" id="test-report">
      <h2>
        Test of {report.name}:{" "}
        <span
          class={report.outcome === "ok" ? "status-connected" : "outcome-error"}
          id="test-outcome"
        >
          {report.outcome === "ok"
            ? "connected"
            : report.outcome === "untrusted"
            ? "SSH host key not trusted yet"
            : "failed"}
        </span>
      </h2>
      <ol class="steps">
        {report.steps.map((step) => (
          <li class={step.ok ? "step-ok" : "step-failed outcome-error"}>
            {step.text}
          </li>
        ))}
      </ol>
      {report.outcome === "ok"
        ? <p id="test-version">Server version: {report.version}</p>
        : null}
      {report.outcome === "ok" && report.risks.length > 0
        ? (
          <p class="outcome-error">
            Its login{" "}
            {report.risks.join(", ")}: Harden makes a least-privilege login for
            AI reads.
          </p>
        )
        : null}
      {report.outcome === "failed" ? <p>Fix: {report.fix}</p> : null}
    </section>
  );
}

/** Edit a connection's name, URL, password, preview and SSH. */
export function EditForm(props: {
  connection: SavedConnection;
  csrf: string;
  error?: string;
}) {
  const { connection } = props;
  const ssh = connection.ssh;
  const values: Record<string, string> = {
    ssh: ssh?.host
      ? `${ssh.user ? `${ssh.user}@` : ""}${ssh.host}${
        ssh.port ? `:${ssh.port}` : ""
      }`
      : "",
    "ssh-key": ssh?.identityFile ?? "",
    "ssh-jump": ssh?.jump ?? "",
  };
  return (
    <section class="card">
      {props.error
        ? (
          <p class="notice outcome-error" id="edit-error" role="alert">
            {props.error}
          </p>
        )
        : null}
      <form
        method="post"
        action={at(`/connections/${connection.id}/edit`)}
        class="stacked"
      >
        <Csrf token={props.csrf} />
        <div class="fields">
          <Field label="Name" name="name" value={connection.name} required />
          <Field
            label="URL"
            name="url"
            value={maskUrlSecrets(connection.url)}
            required
          />
          <Field
            label={connection.password === undefined
              ? "Password (none saved)"
              : "New password (blank keeps the saved one)"}
            name="password"
            type="password"
          />
          {connection.password === undefined ? null : (
            <label class="check">
              <input type="checkbox" name="clear-password" value="1" />{" "}
              Forget the saved password
            </label>
          )}
          <Choice
            label="Write preview"
            name="writePreview"
            options={WRITE_PREVIEWS}
            current={connection.writePreview ?? "dryRun"}
          />
        </div>
        <SshFields values={values} />
        {ssh === undefined ? null : (
          <label class="check">
            <input type="checkbox" name="no-ssh" value="1" />{" "}
            Connect directly (no SSH)
          </label>
        )}
        <div class="actions">
          <button class="primary" type="submit" id="edit-save">Save</button>
          <a href={at("/connections")}>Cancel</a>
        </div>
      </form>
    </section>
  );
}

/** Remove a connection, offering to drop its AI login. */
export function RemoveConfirm(props: {
  connection: SavedConnection;
  shared: boolean;
  csrf: string;
}) {
  const { connection } = props;
  const login = connection.aiLogin?.user;
  return (
    <section class="card approval destructive" id="remove-confirm">
      <h2>Remove "{connection.name}" from dbport?</h2>
      <p>
        Its database is not touched; AI clients stop seeing it at once.
      </p>
      <form
        method="post"
        action={at(`/connections/${connection.id}/remove/apply`)}
      >
        <Csrf token={props.csrf} />
        {login === undefined ? null : props.shared
          ? (
            <p class="muted">
              The AI login "{login}" stays on the server: another saved
              connection uses it.
            </p>
          )
          : (
            <label class="check">
              <input
                type="checkbox"
                name="drop-ai-login"
                value="1"
                checked
                id="drop-ai-login"
              />{" "}
              Also drop the AI login "{login}" that Harden made on its server
            </label>
          )}
        <div class="actions">
          <button class="deny" type="submit" id="remove-apply">Remove</button>
          <a href={at("/connections")}>Cancel</a>
        </div>
      </form>
    </section>
  );
}
