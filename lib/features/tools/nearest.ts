/**
 * The names nearest to a mistyped one, for "did you mean …" in `not_found`
 * and `invalid_argument` messages: case-insensitive edit distance, a prefix
 * or substring counted close, within a third of the word's length.
 *
 * @module
 */

/** Levenshtein distance, two rows of memory. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** Up to `most` of `candidates` close to `word`, nearest first. */
export function nearest(
  word: string,
  candidates: readonly string[],
  most = 3,
): string[] {
  const wanted = word.toLowerCase();
  const scored: [string, number][] = [];
  for (const candidate of new Set(candidates)) {
    const name = candidate.toLowerCase();
    let score = editDistance(wanted, name);
    if (name.includes(wanted) || wanted.includes(name)) {
      score = Math.min(score, 1 + Math.abs(name.length - wanted.length) / 10);
    }
    if (score <= Math.max(2, Math.ceil(wanted.length / 3))) {
      scored.push([candidate, score]);
    }
  }
  return scored
    .sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]))
    .slice(0, most)
    .map(([name]) => name);
}

/** ` (did you mean "a", "b"?)`, or nothing. */
export function didYouMean(names: readonly string[]): string {
  return names.length === 0
    ? ""
    : ` (did you mean ${
      names.map((name) => JSON.stringify(name)).join(", ")
    }?)`;
}
