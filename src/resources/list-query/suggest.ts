/** "Did you mean": the known name a mistyped list parameter is closest to, when it is close enough to be a slip. */

/**
 * Names other APIs give the list's own parameters, pointed at ours. Asked only for a name that is
 * no filter of the collection, so a field called `limit` stays a filter.
 */
const ALIASES: ReadonlyMap<string, string> = new Map([
  ['limit', 'size'],
  ['per_page', 'size'],
  ['page_size', 'size'],
  ['sort_by', 'sort'],
  ['order_by', 'sort'],
])

/** Edits a name may be off by and still be suggested: one per three characters of it, at most this many. */
const MAX_EDITS = 2

/**
 * Edits between `a` and `b`: a character inserted, deleted, replaced, or two neighbours swapped
 * (the optimal string alignment distance).
 */
export function editDistance(a: string, b: string): number {
  // d[i][j]: edits between the first i characters of a and the first j of b.
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1)
    }
  }
  return d[a.length]![b.length]!
}

/** The name in `known` that `typed` (compared in lower case) is a slip of, or undefined: the nearest, the first of equals. */
export function closestName(typed: string, known: readonly string[]): string | undefined {
  const lower = typed.toLowerCase()
  const alias = ALIASES.get(lower)
  if (alias !== undefined && known.includes(alias)) return alias
  let best: { name: string; edits: number } | undefined
  for (const name of known) {
    const edits = editDistance(lower, name)
    const allowed = Math.min(MAX_EDITS, Math.floor(name.length / 3))
    if (edits <= allowed && (!best || edits < best.edits)) best = { name, edits }
  }
  return best?.name
}
