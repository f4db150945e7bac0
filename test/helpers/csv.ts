/**
 * A small RFC 4180 reader for the tests, written apart from the service's (src/http/csv.ts) so
 * that an export is checked by a reader that does not share its mistakes: records end in CRLF
 * only, and a bare LF or CR outside quotes is a failure, not a line end.
 */

/** A field as read: null for an empty unquoted one, else its text (`""` is the empty string). */
export type CsvValue = string | null

export function readCsv(text: string): CsvValue[][] {
  const records: CsvValue[][] = []
  let record: CsvValue[] = []
  let i = 0
  const fail = (why: string): never => {
    throw new Error(`not RFC 4180 at character ${i}: ${why} (${JSON.stringify(text.slice(Math.max(0, i - 20), i + 20))})`)
  }
  while (i < text.length) {
    let value: CsvValue
    if (text[i] === '"') {
      value = ''
      i++
      for (;;) {
        if (i >= text.length) fail('a quoted field never closed')
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            value += '"'
            i += 2
            continue
          }
          i++
          break
        }
        value += text[i++]
      }
    } else {
      let end = i
      while (end < text.length && !',\r\n'.includes(text[end]!)) {
        if (text[end] === '"') fail('a quote in an unquoted field')
        end++
      }
      value = end === i ? null : text.slice(i, end)
      i = end
    }
    record.push(value)
    if (text[i] === ',') {
      i++
      continue
    }
    if (text.startsWith('\r\n', i)) {
      i += 2
      records.push(record)
      record = []
      continue
    }
    fail(i >= text.length ? 'the last record does not end in CRLF' : 'a field followed by neither a comma nor CRLF')
  }
  return records
}

/** The records as objects by the header's names. */
export function csvObjects(text: string): Record<string, CsvValue>[] {
  const [header, ...rows] = readCsv(text)
  return rows.map((row) => Object.fromEntries(header!.map((name, i) => [name!, row[i] ?? null])))
}
