/**
 * The media types an export is written in (`Accept` on a list): CSV (RFC 4180, a header row,
 * UTF-8 without a byte order mark) and NDJSON (one JSON object per line).
 */
import { CSV_MEDIA_TYPE, csvRecord } from '../../http/csv.js'
import { NDJSON_MEDIA_TYPE } from '../../http/body-parser.js'
import type { Representation } from '../represent.js'
import { cellOf, type Column } from './columns.js'

export interface ExportFormat {
  /** The response's Content-Type. */
  contentType: string
  /** The file name's extension, for Content-Disposition. */
  extension: string
  /** What comes before the first row. */
  head(columns: readonly Column[]): string
  /** One item, its line end included. */
  row(representation: Representation, columns: readonly Column[]): string
}

/** The formats, by media type: a list route offers these besides JSON (src/http/negotiation.ts). */
export const EXPORT_FORMATS: ReadonlyMap<string, ExportFormat> = new Map([
  [
    CSV_MEDIA_TYPE,
    {
      // RFC 7111 §1: `header=present` says the first record names the columns.
      contentType: `${CSV_MEDIA_TYPE}; charset=utf-8; header=present`,
      extension: 'csv',
      head: (columns) => csvRecord(columns.map((column) => column.name)),
      row: (representation, columns) => csvRecord(columns.map((column) => cellOf(representation, column))),
    },
  ],
  [
    NDJSON_MEDIA_TYPE,
    {
      contentType: NDJSON_MEDIA_TYPE,
      extension: 'ndjson',
      head: () => '',
      row: (representation) => `${JSON.stringify(representation)}\n`,
    },
  ],
])

/** The media types of EXPORT_FORMATS. */
export const EXPORT_TYPES: readonly string[] = [...EXPORT_FORMATS.keys()]
