/**
 * Import (DESIGN "Data over time"): a collection's POST with a CSV or NDJSON body is the array
 * create, its items read from the body here, then checked and written as a JSON array's are (all
 * or none, BULK_MAX_ITEMS, the body limit, Idempotency-Key, upserts). What an export writes
 * imports as it is: the fields a create does not take (`id`, `created_at`...) are left out.
 */
import { ApiError, type ErrorDetail } from '../../errors.js'
import { CSV_MEDIA_TYPE } from '../../http/csv.js'
import type { Imported, ImportType } from '../../http/body-parser.js'
import { itemsFromCsv, type JsonSchema } from './csv-items.js'
import { itemsFromNdjson } from './ndjson-items.js'

/** An NDJSON item without the fields only the server sets, as a CSV's columns of them are skipped. */
function withoutReadOnly(imported: Imported, create: JsonSchema, readOnly: ReadonlySet<string>): Imported {
  const dropped = [...readOnly].filter((name) => !(name in (create.properties ?? {})))
  for (const item of imported.items) for (const name of dropped) delete item[name]
  return imported
}

/**
 * The route's reader of CSV and NDJSON bodies (src/http/body-parser.ts), built once per
 * collection and version: `create` is the version's create body schema, `readOnly` the item's
 * fields a create does not take.
 */
export function importerOf(create: object, readOnly: ReadonlySet<string>): (text: string, type: ImportType) => Imported {
  const schema = create as JsonSchema
  return (text, type) => (type === CSV_MEDIA_TYPE ? itemsFromCsv(text, schema, readOnly) : withoutReadOnly(itemsFromNdjson(text), schema, readOnly))
}

const ITEM = /^\[(\d+)\]/

/**
 * An import's error with the line of each item it names (`[2].price` ... `(line 4)`): a CSV or
 * NDJSON user finds a row by its line, and the details keep the array create's `[i]` for code.
 */
export function withLines(error: unknown, lines: readonly number[] | undefined): unknown {
  if (!lines || !(error instanceof ApiError) || !error.details.some((detail) => ITEM.test(detail.field))) return error
  const located = (detail: ErrorDetail): ErrorDetail => {
    const line = lines[Number(ITEM.exec(detail.field)?.[1] ?? -1)]
    return line === undefined ? detail : { field: detail.field, reason: `${detail.reason} (line ${line})` }
  }
  return new ApiError(error.code, error.message, error.details.map(located), { headers: error.headers, cause: error.cause })
}
