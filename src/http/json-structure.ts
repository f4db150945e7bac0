/**
 * What JSON.parse accepts but a request body may not have: a key given twice in one object
 * (JSON.parse lets the last one win) and nesting deeper than any resource needs.
 */

/** Deepest nesting of objects and arrays a body may have (DESIGN "Limits and faults"). */
export const MAX_JSON_DEPTH = 64

const QUOTE = 0x22
const BACKSLASH = 0x5c

export type StructureProblem = { kind: 'duplicate'; key: string } | { kind: 'too-deep' }

/**
 * The first structural problem of `text` (already known to be valid JSON), or undefined. One
 * pass over the text; keys are compared after unescaping (`"a"` and `"\u0061"`). It stops at the
 * first container past the limit, so a 10,000-deep body costs no more than a 65-deep one.
 */
export function structureProblem(text: string): StructureProblem | undefined {
  // One set of keys per open object; null for an open array.
  const open: (Set<string> | null)[] = []
  let expectKey = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      let end = i + 1
      let escaped = false
      for (; text.charCodeAt(end) !== QUOTE; end++) {
        if (text.charCodeAt(end) === BACKSLASH) {
          escaped = true
          end++
        }
      }
      const keys = open[open.length - 1]
      if (expectKey && keys) {
        const key = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : text.slice(i + 1, end)
        if (keys.has(key)) return { kind: 'duplicate', key }
        keys.add(key)
        expectKey = false
      }
      i = end
    } else if (c === 0x7b || c === 0x5b) {
      if (open.length === MAX_JSON_DEPTH) return { kind: 'too-deep' }
      open.push(c === 0x7b ? new Set() : null)
      expectKey = c === 0x7b
    } else if (c === 0x7d || c === 0x5d) {
      open.pop()
    } else if (c === 0x2c) {
      expectKey = open[open.length - 1] !== null
    }
  }
  return undefined
}
