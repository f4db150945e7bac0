/** Finds a key given twice in one JSON object, which JSON.parse would silently let the last one win. */

const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * The first duplicated key of any object in `text` (already known to be valid JSON), or
 * undefined. One pass over the text; keys are compared after unescaping (`"a"` and `"\u0061"`).
 */
export function duplicateKey(text: string): string | undefined {
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
        if (keys.has(key)) return key
        keys.add(key)
        expectKey = false
      }
      i = end
    } else if (c === 0x7b) {
      open.push(new Set())
      expectKey = true
    } else if (c === 0x5b) {
      open.push(null)
    } else if (c === 0x7d || c === 0x5d) {
      open.pop()
    } else if (c === 0x2c) {
      expectKey = open[open.length - 1] !== null
    }
  }
  return undefined
}
