/**
 * Export (DESIGN "Data over time"): a list asked for as CSV or NDJSON (`Accept`) answers every
 * row it matches, with its filters, sort and fields, its field and row rules, streamed by keyset
 * pages (src/resources/export/pages.ts) up to EXPORT_MAX_ROWS, as a file to save
 * (`Content-Disposition: attachment`).
 */
import { Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { isAdmin, type Standing } from '../../auth/access.js'
import { ApiError, type ErrorDetail } from '../../errors.js'
import { streamWithoutTimeLimit } from '../../http/time-limit.js'
import type { Params } from '../caller-access.js'
import type { FieldSelection } from '../field-selection.js'
import type { Shelf } from '../shelf.js'
import { onShelf } from '../trash.js'
import type { HandlerContext } from '../handler-context.js'
import { INCLUDE_KEY, parseListQuery, type RawQuery } from '../list-query/parse.js'
import type { Representation, Row } from '../represent.js'
import { columnsOf, type Column } from './columns.js'
import type { ExportFormat } from './formats.js'
import { exportPages, firstPage, type ExportQuery } from './pages.js'

/** What an export is allowed: its most rows (EXPORT_MAX_ROWS) and the rows it reads at once (EXPORT_PAGE_ROWS). */
export interface ExportLimits {
  maxRows: number
  pageRows: number
}

/** List parameters an export has no use for: it has every matching row, and no related items. */
function refuseListOnly(query: RawQuery): void {
  const details: ErrorDetail[] = []
  for (const name of ['page', 'size', 'cursor']) {
    if (query[name] !== undefined) details.push({ field: name, reason: 'does not apply to an export, which has every matching row: narrow it with filters instead' })
  }
  for (const name of Object.keys(query)) {
    if (name === 'include' || INCLUDE_KEY.test(name)) details.push({ field: name, reason: 'is not available on an export: export the related collection on its own' })
  }
  if (details.length > 0) throw new ApiError('INVALID_PARAMETER', `Invalid query parameter: ${details.map((d) => d.field).join(', ')}.`, details)
}

/**
 * The columns of the summary's fields and the owner: a list page reads every sortable column too
 * (its cursor may need any), an export only the sort keys it has (the store adds them). A million
 * products as CSV: 16.6-26.6 s with the list's columns (two timestamps parsed a row for nothing).
 */
const summaryColumnsOf = new WeakMap<object, readonly string[]>()
function summaryColumns(collection: HandlerContext['collection']): readonly string[] {
  let columns = summaryColumnsOf.get(collection)
  if (!columns) {
    const computed = collection.options.computed ?? {}
    const owner = collection.ownership.kind === 'own' ? [collection.ownership.column] : []
    columns = [...new Set(['id', ...owner, ...collection.summaryFields.flatMap((field) => (field.computed ? computed[field.name]!.from : [field.name]))])]
    summaryColumnsOf.set(collection, columns)
  }
  return columns
}

const tooLarge = (maxRows: number) =>
  new ApiError('EXPORT_TOO_LARGE', `More than ${maxRows.toLocaleString('en')} items match (EXPORT_MAX_ROWS); narrow the export with filters, such as created_at[gte] and created_at[lt], and export it in parts.`)

/**
 * The columns: the fields asked for (`fields=`) or the summary's, those the caller may read in
 * some row (a signed-in caller may own some rows and not others), split as the version shows them.
 */
function columnsFor(context: HandlerContext, request: FastifyRequest, selection: FieldSelection | undefined): Column[] {
  const { caller } = request
  const standings: Standing[] = !caller ? ['anonymous'] : isAdmin(caller) ? ['admin'] : context.collection.ownership.kind === 'none' ? ['user'] : ['user', 'owner']
  const fields = selection?.fields ?? context.collection.summaryFields
  const readable = fields.filter((field) => standings.some((standing) => !context.permissions[standing].hidden.has(field.name)))
  return columnsOf(context.version.schemas.item, readable.map((field) => field.name))
}

/**
 * The text of the export: the head, then each page's rows. Rows added since the count can take
 * the export past the limit: it is then cut off with an error (the connection closed before the
 * end), never sent as a complete-looking shorter file.
 */
async function* exportText(format: ExportFormat, columns: readonly Column[], pages: AsyncGenerator<Row[]>, represent: (row: Row) => Representation, maxRows: number) {
  let text = format.head(columns)
  let sent = 0
  for await (const rows of pages) {
    sent += rows.length
    if (sent > maxRows) throw new Error(`the export passed EXPORT_MAX_ROWS (${maxRows}) while it was sent: rows were added since it was counted`)
    for (const row of rows) text += format.row(represent(row), columns)
    yield text
    text = ''
  }
  if (text !== '') yield text
}

/**
 * GET of a list in an export's media type: 200 with every matching row, streamed; HEAD with the
 * headers only. `shelf`: the trash's items instead, or beside the live ones (src/resources/trash.ts).
 */
export async function exportList(context: HandlerContext, request: FastifyRequest<{ Params: Params }>, reply: FastifyReply, format: ExportFormat, shelf: Shelf | undefined): Promise<FastifyReply> {
  const { collection, store, listSpec, select, placement, readYourWrites, summary, exports } = context
  const query = request.query as RawQuery
  refuseListOnly(query)
  const plan = parseListQuery(query, listSpec)
  const selection = select(query.fields)
  const placed = await placement(request, 'list', request.params)
  const { standing } = placed
  const scope = onShelf(placed.scope, shelf)
  const on = await readYourWrites.reads(request)
  // Counted first, to at most the limit and one: refused before anything is sent, not cut short.
  if ((await store.countUpTo(plan, scope, exports.maxRows, on, request.caller)) > exports.maxRows) throw tooLarge(exports.maxRows)
  reply.header('content-type', format.contentType).header('content-disposition', `attachment; filename="${collection.name}.${format.extension}"`)
  if (request.method === 'HEAD') return reply.send()
  const exported: ExportQuery = { store, plan, scope, on, selected: selection?.columns ?? summaryColumns(collection), caller: request.caller, pageRows: exports.pageRows }
  const first = await firstPage(exported)
  streamWithoutTimeLimit(request, reply)
  const represent = (row: Row) => summary(row, standing(row), selection)
  // `close`: the answer is done, or the client has gone.
  let present = true
  reply.raw.once('close', () => (present = false))
  const text = exportText(format, columnsFor(context, request, selection), exportPages(exported, first, () => present), represent, exports.maxRows)
  // One chunk (a page's text) waits at a time: the next page is read when the socket has taken it.
  return reply.send(Readable.from(text, { highWaterMark: 1 }))
}
