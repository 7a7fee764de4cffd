/**
 * A function's own `SET search_path` (`pg_proc.proconfig`), read as the
 * server reads the setting: schema names separated by commas, each bare
 * (folded to lower case) or double-quoted (`""` for a quote).
 *
 * @module
 */

/** The schemas of `search_path` in `config`; null when it sets none. */
export function configuredPath(
  config: readonly string[] | null,
): string[] | null {
  const entry = config?.findLast((item) =>
    item.toLowerCase().startsWith("search_path=")
  );
  if (entry === undefined) return null;
  return splitPath(entry.slice("search_path=".length));
}

/** `a, "B c", $user` → `["a", "B c", "$user"]`. */
export function splitPath(value: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < value.length) {
    while (value[i] === " " || value[i] === "\t" || value[i] === ",") i++;
    if (i >= value.length) break;
    if (value[i] === '"') {
      let name = "";
      i++;
      while (i < value.length) {
        if (value[i] === '"' && value[i + 1] === '"') {
          name += '"';
          i += 2;
        } else if (value[i] === '"') {
          i++;
          break;
        } else name += value[i++];
      }
      out.push(name);
    } else {
      let name = "";
      while (i < value.length && value[i] !== ",") name += value[i++];
      out.push(name.trim().toLowerCase());
    }
    while (i < value.length && value[i] !== ",") i++;
  }
  return out;
}
