/**
 * CSV as RFC 4180 has it: records ending in CRLF, fields separated by commas, a field with a
 * comma, a quote, CR or LF quoted, a quote in it doubled (§2). As PostgreSQL's COPY reads it, an
 * empty field unquoted is no value (null), and `""` is the empty string: the two stay apart.
 */
import { ApiError } from '../errors.js'

/** `text/csv` (RFC 7111 registers `header`: whether the first record names the fields). */
export const CSV_MEDIA_TYPE = 'text/csv'

/** RFC 4180 §2.6: what makes a field need quotes. */
const NEEDS_QUOTES = /[",\r\n]/
const QUOTES = /"/g

/** One field: null as nothing, the empty string as `""`, anything else quoted when it must be. */
export function csvField(value: string | null): string {
  if (value === null) return ''
  if (value === '') return '""'
  return NEEDS_QUOTES.test(value) ? `"${value.replace(QUOTES, '""')}"` : value
}

/** One record, with its CRLF (RFC 4180 §2.1). */
export const csvRecord = (fields: readonly (string | null)[]): string => `${fields.map(csvField).join(',')}\r\n`

/** A field as read: its text, and whether it was quoted (`""` is the empty string, an empty field is none). */
export interface CsvCell {
  text: string
  quoted: boolean
}

/** A record as read, with the line of the file it starts on (1 for the first). */
export interface CsvRow {
  cells: CsvCell[]
  line: number
}

const unreadable = (line: number, reason: string) =>
  new ApiError('BAD_REQUEST', `The CSV body cannot be read: line ${line} ${reason}.`, [{ field: `line ${line}`, reason }])

/**
 * The records of a CSV text. Lines may end in CRLF or LF; a line with nothing on it is skipped
 * (an editor's last empty line). A quote in an unquoted field, anything but a comma or the line's
 * end after a closing quote, and a quoted field never closed are 400s naming the line.
 */
export function parseCsv(text: string): CsvRow[] {
  const rows: CsvRow[] = []
  let at = 0
  let line = 1
  const end = text.length
  while (at < end) {
    if (text[at] === '\n' || (text[at] === '\r' && text[at + 1] === '\n')) {
      at += text[at] === '\n' ? 1 : 2
      line++
      continue
    }
    const start = line
    const cells: CsvCell[] = []
    for (;;) {
      let cell: CsvCell
      if (text[at] === '"') {
        let value = ''
        let from = at + 1
        for (;;) {
          const quote = text.indexOf('"', from)
          if (quote < 0) throw unreadable(start, `has a quoted field that is never closed (it starts in record ${rows.length + 1})`)
          value += text.slice(from, quote)
          if (text[quote + 1] === '"') {
            value += '"'
            from = quote + 2
            continue
          }
          at = quote + 1
          break
        }
        line += countLineBreaks(value)
        cell = { text: value, quoted: true }
      } else {
        let stop = at
        while (stop < end && text[stop] !== ',' && text[stop] !== '\n' && text[stop] !== '\r') stop++
        const value = text.slice(at, stop)
        if (value.includes('"')) throw unreadable(line, 'has a quote inside a field that does not start with one: quote the whole field and double the quotes inside it')
        at = stop
        cell = { text: value, quoted: false }
      }
      cells.push(cell)
      if (at >= end) break
      if (text[at] === ',') {
        at++
        continue
      }
      if (text[at] === '\n' || (text[at] === '\r' && text[at + 1] === '\n')) {
        at += text[at] === '\n' ? 1 : 2
        line++
        break
      }
      throw unreadable(line, cell.quoted ? 'has something after a closing quote other than a comma or the end of the line' : 'has a carriage return outside quotes that does not end the line')
    }
    rows.push({ cells, line: start })
  }
  return rows
}

function countLineBreaks(value: string): number {
  let count = 0
  for (let i = value.indexOf('\n'); i >= 0; i = value.indexOf('\n', i + 1)) count++
  return count
}
