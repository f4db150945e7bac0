/**
 * An NDJSON import's lines as the items of a JSON array: one JSON object per line, each read as a
 * JSON body is (src/http/body-parser.ts); a line that is not one is a 400 naming it. Blank lines
 * are skipped.
 */
import { ApiError } from '../../errors.js'
import { parseJsonText, type Imported } from '../../http/body-parser.js'

export function itemsFromNdjson(text: string): Imported {
  const items: Record<string, unknown>[] = []
  const lines: number[] = []
  text.split('\n').forEach((raw, i) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    if (line.trim() === '') return
    try {
      items.push(parseJsonText(line) as Record<string, unknown>)
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      // "The request body is not valid JSON: ..." said of the line.
      const said = error.message.replace(/^The request body /, '')
      throw new ApiError(error.code, `Line ${i + 1} of the NDJSON body ${said}`, [{ field: `line ${i + 1}`, reason: said.replace(/\.$/, '') }])
    }
    lines.push(i + 1)
  })
  if (items.length === 0) throw new ApiError('BAD_REQUEST', 'The NDJSON body is empty: send one JSON object per line, an item each.')
  return { items, lines }
}
