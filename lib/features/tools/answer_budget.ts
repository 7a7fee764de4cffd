/**
 * The answer budget: the most characters of a tool result's text
 * (`maxAnswerChars`, 40,000 ≈ 10k tokens by default), never more than the
 * byte budget of any result (`maxResultBytes`). Every tool answers within it
 * and says what it left out (docs/wire.md "Results").
 *
 * @module
 */

import type { Settings } from "../../app/settings.ts";

/** The characters a tool result's text may take. */
export function answerBudget(settings: Settings): number {
  return Math.min(settings.maxAnswerChars, settings.maxResultBytes);
}
