/**
 * The optimal-string-alignment distance between `a` and `b`: insertions, deletions,
 * substitutions and swaps of two adjacent characters each cost 1 (`stauts` → `status` is 1).
 * Written by hand: a few lines, and the CLI's start-up should not load a library for it.
 */
export function editDistance(a: string, b: string): number {
  // rows[i][j]: distance between the first i characters of a and the first j of b.
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => rows[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[];
    for (let j = 1; j <= b.length; j++) {
      const substitution = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + substitution);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The candidate closest to `input` (case-insensitive), or undefined when none is within
 * `maxDistance` edits: by default 1 for inputs of up to four characters and 2 beyond, so a
 * typo is caught and an unrelated word (`trust` for `list`) is not. Ties go to the candidate
 * listed first.
 */
export function closestName(
  input: string,
  candidates: readonly string[],
  maxDistance: number = input.length <= 4 ? 1 : 2,
): string | undefined {
  const typed = input.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(typed, name.toLowerCase());
    if (distance <= maxDistance && (best === undefined || distance < best.distance))
      best = { name, distance };
  }
  return best?.name;
}
