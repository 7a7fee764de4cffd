/**
 * Building a prompt: its published definition, argument checks, the
 * connection it works on, consent, and the one user message it renders.
 *
 * Rules (issue 7, TablePro's prompts): an undeclared argument, a missing or
 * blank required one, a value outside an argument's fixed choices, and an
 * unknown or hidden connection are `-32602` naming the argument; the
 * connection's policy may ask the user first (`input_required`).
 *
 * @module
 */

import type { SavedConnection } from "../../app/connections.ts";
import { driverSpec } from "../../app/connections.ts";
import { wire } from "../../protocol/errors.ts";
import type { PromptEntry } from "../catalog.ts";
import { NeedsInput } from "../consent.ts";
import type { CallContext } from "../context.ts";
import type { FeatureDeps } from "../deps.ts";
import { admit, type Resolved } from "../tools/access.ts";
import { asWireError } from "../wire_failure.ts";
import { markPrivate } from "../tools/private_marks.ts";
import { findConnection } from "./connection_arg.ts";

/** One argument of a prompt. */
export interface PromptArgument<N extends string = string> {
  name: N;
  title: string;
  description: string;
  required: boolean;
  /** Fixed choices, in the order completion offers them; the first is the default. */
  choices?: readonly [string, ...string[]];
}

/** An argument that always has a value once checked: required, or with a default choice. */
type Valued = { required: true } | { choices: readonly string[] };

/** The value of a checked argument: one of its choices, or its text. */
type ValueOf<A> = A extends { choices: readonly (infer C)[] } ? C : string;

/**
 * The checked arguments of a prompt typed from their declarations:
 * `connection`, the required ones and those with choices (a default is
 * filled in) always present, the others optional.
 */
export type PromptArgs<A extends readonly PromptArgument[]> =
  & { readonly connection: string }
  & {
    readonly [X in A[number] as X extends Valued ? X["name"] : never]: ValueOf<
      X
    >;
  }
  & {
    readonly [X in A[number] as X extends Valued ? never : X["name"]]?: string;
  };

/** What a prompt's renderer gets. */
export interface RenderInput<Args = Readonly<Record<string, string>>> {
  /** The checked arguments (choices lower-cased, defaults filled in). */
  args: Args;
  resolved: Resolved;
  ctx: CallContext;
}

/** Everything that makes a prompt. */
export interface PromptSpec<A extends readonly PromptArgument[]> {
  name: string;
  title: string;
  description: string;
  /** `connection` first; it is added by {@linkcode definePrompt}. */
  arguments: A;
  /** The user message's text (markdown). */
  render(input: RenderInput<PromptArgs<A>>): Promise<string>;
}

/** The argument every prompt takes. */
export const CONNECTION_ARGUMENT: PromptArgument = {
  name: "connection",
  title: "Connection",
  description: "The connection's name or id (list_connections).",
  required: true,
};

/** The longest message a prompt renders, in characters. */
export const PROMPT_TEXT_LIMIT = 60_000;

/** The arguments of a built prompt, `connection` first. */
function promptArguments(
  spec: PromptSpec<readonly PromptArgument[]>,
): readonly PromptArgument[] {
  return [CONNECTION_ARGUMENT, ...spec.arguments];
}

/** Build a catalog entry from a spec. */
export function definePrompt<const A extends readonly PromptArgument[]>(
  deps: FeatureDeps,
  spec: PromptSpec<A>,
): PromptEntry {
  const declared = promptArguments(spec);
  return {
    definition: {
      name: spec.name,
      title: spec.title,
      description: spec.description,
      arguments: declared.map((argument) => ({
        name: argument.name,
        title: argument.title,
        description: argument.choices === undefined
          ? argument.description
          : `${argument.description} One of: ${argument.choices.join(", ")}.`,
        required: argument.required,
      })),
    },
    choices: Object.fromEntries(
      declared.flatMap((argument) =>
        argument.choices === undefined
          ? []
          : [[argument.name, argument.choices]]
      ),
    ),
    async get(given, ctx) {
      // checkArguments() holds the values to the declarations the type is
      // read from: this is the one place the two meet.
      const args = checkArguments(spec.name, declared, given) as PromptArgs<A>;
      const connection = findConnection(deps, ctx.principal, args.connection);
      ctx.record?.({ connectionId: connection.id });
      try {
        const resolved = resolve(deps, connection);
        await admit(deps, ctx, connection, null, "reading its schema");
        const text = bound(await spec.render({ args, resolved, ctx }));
        return {
          description: `${spec.title}: ${connection.name}`,
          messages: [{ role: "user", content: { type: "text", text } }],
        };
      } catch (error) {
        if (error instanceof NeedsInput) return error.result;
        throw asWireError(error, `render the prompt "${spec.name}"`);
      }
    },
  };
}

function resolve(deps: FeatureDeps, connection: SavedConnection): Resolved {
  return {
    connection,
    label: JSON.stringify(connection.name),
    driver: markPrivate(
      deps.pool.get(driverSpec(connection)),
      connection.privateColumns,
    ),
  };
}

/** Check the given arguments against the declared ones. */
export function checkArguments(
  prompt: string,
  declared: readonly PromptArgument[],
  given: Readonly<Record<string, string>>,
): Record<string, string> {
  const known = new Map(declared.map((argument) => [argument.name, argument]));
  for (const name of Object.keys(given)) {
    if (!known.has(name)) {
      throw wire.invalidParams(
        `Invalid argument "${name}": the prompt "${prompt}" takes ${
          declared.map((argument) => argument.name).join(", ")
        }`,
        { argument: name },
      );
    }
  }
  const args: Record<string, string> = {};
  for (const argument of declared) {
    const value = given[argument.name];
    if (value === undefined || value.trim() === "") {
      if (argument.required) {
        throw wire.invalidParams(
          `Missing argument "${argument.name}": the prompt "${prompt}" needs it (${argument.description})`,
          { argument: argument.name },
        );
      }
      if (argument.choices !== undefined) {
        args[argument.name] = argument.choices[0];
      }
      continue;
    }
    if (argument.choices !== undefined) {
      const choice = value.trim().toLowerCase();
      if (!argument.choices.includes(choice)) {
        throw wire.invalidParams(
          `Invalid argument "${argument.name}": ${
            JSON.stringify(value.slice(0, 80))
          } is not one of ${argument.choices.join(", ")}`,
          { argument: argument.name },
        );
      }
      args[argument.name] = choice;
    } else {
      args[argument.name] = value;
    }
  }
  return args;
}

/** Cut a rendered message at the limit, saying so. */
function bound(text: string): string {
  if (text.length <= PROMPT_TEXT_LIMIT) return text;
  return `${
    text.slice(0, PROMPT_TEXT_LIMIT - 80)
  }\n\n[… cut: the schema is larger than this prompt may carry]`;
}
