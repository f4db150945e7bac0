/**
 * POST of a JSON array, and upserts (DESIGN "Writing many"). Every item is checked as a create
 * checks one, then all are written in one transaction, or none: an item's error names it by its
 * index (`[3].sku`). Without a hook or a parent, an array's items and their events are one
 * statement. An upsert (`Prefer: resolution=...` with `on_conflict=<unique field>`) creates each
 * item, or finds the one that holds its value of that field and, merging, changes it as a PATCH
 * would (its field and state rules, its hooks), or, ignoring, leaves it as it is.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Standing } from '../auth/access.js'
import type { Transaction } from '../db/client.js'
import { ApiError, within } from '../errors.js'
import { innerRequest, ITEM_VALIDATORS } from '../http/inner-requests.js'
import { preferenceApplied, preferences, varyByPrefer } from '../http/prefer.js'
import { requestPath } from '../http/request-target.js'
import { uuidv7 } from '../ids.js'
import { eventCollection, type Collection, type WriteData } from './collection.js'
import { notFound } from './caller-access.js'
import { rejectInvalid, type Body, type HandlerContext } from './handler-context.js'
import { changeLocked, inTransaction, type RecordEvent } from './in-transaction.js'
import { checkWritable } from './permissions.js'
import type { Representation, Row } from './represent.js'
import { checkInitial } from './states.js'
import type { Scope } from './store.js'
import { checkInTime, writeOnlyColumns, written, type Answer, type Secrets, type WriteRequest, type Written } from './write-steps.js'
import { fullData, toColumns } from './writes.js'

/** What an upsert does with an item whose unique value another already holds (RFC 7240 preference `resolution`, as PostgREST names it). */
export type Resolution = 'merge-duplicates' | 'ignore-duplicates'

/** An upsert: the resolution, and the unique field that finds the item (`on_conflict`). */
export interface Upsert {
  resolution: Resolution
  field: string
}

const RESOLUTIONS: readonly string[] = ['merge-duplicates', 'ignore-duplicates']

/**
 * The upsert a POST asks for, or undefined for a plain create: `on_conflict` and the resolution
 * come together (400 naming the one missing); `on_conflict` names a field the collection
 * declares unique. A resolution alone is another service's preference, ignored (RFC 7240 §2).
 */
export function upsertOf(collection: Collection, request: FastifyRequest): Upsert | undefined {
  const field = (request.query as Record<string, unknown>).on_conflict
  if (field === undefined) return undefined
  const unique: readonly string[] = collection.options.unique ?? []
  if (typeof field !== 'string' || !unique.includes(field)) {
    const reason = unique.length === 0 ? `is not taken here: ${collection.name} have no field an upsert may find an item by` : `must be ${unique.join(' or ')}`
    throw new ApiError('INVALID_PARAMETER', `on_conflict ${reason}.`, [{ field: 'on_conflict', reason }])
  }
  const resolution = request.headers.prefer === undefined ? undefined : preferences(request).get('resolution')
  if (resolution === undefined || !RESOLUTIONS.includes(resolution)) {
    throw new ApiError('BAD_REQUEST', 'on_conflict needs Prefer: resolution=merge-duplicates (update the item that holds the value) or resolution=ignore-duplicates (leave it).', [
      { field: 'Prefer', reason: 'must state resolution=merge-duplicates or resolution=ignore-duplicates with on_conflict' },
    ])
  }
  return { resolution: resolution as Resolution, field }
}

/** Runs `check` for each item, an error naming the item it is about. */
async function eachItem<T, R>(items: readonly T[], many: boolean, check: (item: T, index: number) => R | Promise<R>): Promise<R[]> {
  const results: R[] = []
  for (const [index, item] of items.entries()) {
    try {
      results.push(await check(item, index))
    } catch (error) {
      throw many ? within(`[${index}]`, error) : error
    }
  }
  return results
}

/**
 * A unique value taken: the driver says which (`Key (sku)=(CUP-1) already exists.`), so the item
 * that holds it is named: the second of two in the array that share it, or the one a stored item
 * already has.
 */
function takenBy(error: unknown, rows: readonly Row[]): number | undefined {
  if (!(error instanceof ApiError) || error.code !== 'CONFLICT') return undefined
  const detail = (error.cause as { detail?: unknown } | undefined)?.detail
  const match = typeof detail === 'string' ? /^Key \("?([^,()"]+)"?\)=\((.*)\) already exists/.exec(detail) : null
  if (!match) return undefined
  const [, column, value] = match
  const holders = rows.flatMap((row, index) => (String(row[column!]) === value ? [index] : []))
  return holders[1] ?? holders[0]
}

/** One item as a create would store it, checked. */
interface Prepared {
  body: Body
  /** Its values by field, which a hook may change. */
  data: WriteData
  secrets: Secrets
}

/** What a write of many made of one item. */
interface Outcome {
  row: Row
  created: boolean
  standing: Standing
  shown: Representation
}

/** The items the request carries, at most BULK_MAX_ITEMS, at least one. */
function itemsOf(body: unknown[], most: number): unknown[] {
  if (body.length > most) {
    throw new ApiError('PAYLOAD_TOO_LARGE', `One request creates at most ${most} items; this one has ${body.length}. Send them in several requests.`, [
      { field: 'body', reason: `has ${body.length} items; at most ${most}` },
    ])
  }
  if (body.length === 0) throw new ApiError('VALIDATION_ERROR', 'The array has no items: send at least one.', [{ field: 'body', reason: 'must have at least 1 item' }])
  return body
}

/** The creates or upserts of a POST whose body is an array, or that asks for an upsert. */
export async function createMany(context: HandlerContext, request: WriteRequest, reply: FastifyReply, answer: Answer, upsert: Upsert | undefined): Promise<Written> {
  const { collection, permissions, version } = context
  const many = Array.isArray(request.body)
  const bodies = many ? itemsOf(request.body as unknown as unknown[], context.bulkMaxItems) : [request.body]
  // A merge changes items: the caller must be allowed to change them too.
  if (upsert?.resolution === 'merge-duplicates') context.authorize(request, 'update')
  const { scope, standing: standingOf } = await context.placement(request, 'create', request.params)
  const standing = standingOf()
  rejectInvalid(request)
  const prepared = await eachItem(bodies, many, async (raw) => {
    const body = version.fromView(raw as Body)
    checkWritable(permissions[standing], body)
    if (upsert && (body[upsert.field] === undefined || body[upsert.field] === null)) {
      throw new ApiError('VALIDATION_ERROR', undefined, [{ field: upsert.field, reason: 'is required to find the item (on_conflict)' }])
    }
    // An upsert's item may exist: its state is checked as a create's only if it is created.
    if (collection.options.states && !upsert) checkInitial(collection.options.states, body)
    return { body, data: fullData(collection, body, permissions[standing].locked), secrets: await writeOnlyColumns(context, body, 'create') }
  })
  const outcomes = await write(context, request, reply, prepared, { scope, standing, upsert, many })
  return answerWith(context, request, reply, outcomes, answer, many, upsert)
}

interface WriteOptions {
  scope: Scope
  standing: Standing
  upsert: Upsert | undefined
  many: boolean
}

/** The items created, and with an upsert changed or left, in their order: one statement when it can be, else one transaction. */
async function write(context: HandlerContext, request: WriteRequest, reply: FastifyReply, prepared: readonly Prepared[], options: WriteOptions): Promise<Outcome[]> {
  const { collection, store } = context
  const { hooks, parent } = collection.options
  const now = new Date()
  // Made in the items' order, the ids sort so (UUIDv7).
  const ids = prepared.map(() => uuidv7())
  const rowOf = (item: Prepared, index: number): Row => ({ ...toColumns(collection, item.data), ...item.secrets.columns, ...options.scope, id: ids[index], created_at: now, updated_at: now })
  try {
    const rows = prepared.map(rowOf)
    const shape = Object.keys(rows[0]!).join()
    // Every item alike, without a hook, a parent or an upsert: one statement, rows and events.
    if (options.many && !options.upsert && !hooks?.beforeWrite && !parent && rows.every((row) => Object.keys(row).join() === shape)) {
      checkInTime(reply)
      const created = await store.createManyRecorded(rows, {
        type: `${eventCollection(collection)}.created`,
        collection: eventCollection(collection),
        actorId: request.caller?.user.id ?? null,
        deadline: request.deadline,
      })
      return created.map((row, i) => ({ row, created: true, standing: options.standing, shown: prepared[i]!.secrets.shown }))
    }
    return await inTransaction(context, request, reply, async (tx, record) => {
      // The parent stays until the commit; one deleted since the check above is gone, as for a list.
      if (parent && !(await context.parentStore!.exists({ id: request.params.parentId }, tx, 'keep'))) throw notFound()
      return eachItem(prepared, options.many, (item, index) => writeOne(context, request, tx, record, item, () => rowOf(item, index), options))
    })
  } catch (error) {
    // The rows as the hooks left them.
    const index = options.many ? takenBy(error, prepared.map(rowOf)) : undefined
    throw index === undefined ? error : within(`[${index}]`, error)
  }
}

/** One item in the transaction: created, or with an upsert, merged into or left as the item that holds its value. */
async function writeOne(context: HandlerContext, request: WriteRequest, tx: Transaction, record: RecordEvent, item: Prepared, rowOf: () => Row, options: WriteOptions): Promise<Outcome> {
  const { collection, store } = context
  const { upsert, scope, standing } = options
  const hooks = collection.options.hooks
  const create = async (): Promise<Outcome | null> => {
    if (collection.options.states) checkInitial(collection.options.states, item.body)
    await hooks?.beforeWrite?.({ operation: 'create', data: item.data, parentId: request.params.parentId, caller: request.caller, tx })
    const row = rowOf()
    const created = upsert ? await store.insertUnlessTaken(tx, row, upsert.field) : await store.insert(tx, row)
    if (!created) return null
    record(collection, 'created', created)
    return { row: created, created: true, standing, shown: item.secrets.shown }
  }
  if (!upsert) return (await create())!
  const existing = () => store.lock(tx, { ...scope, [upsert.field]: item.data[upsert.field] }, 'change')
  // Found, or created; or taken by an item created since the look (it is found then), or by one
  // this caller cannot reach (another parent's, another owner's): a conflict.
  const before = await existing()
  if (!before) {
    const created = await create()
    if (created) return created
  }
  const found = before ?? (await existing())
  if (!found) throw new ApiError('CONFLICT', `An item with the same ${upsert.field} already exists where you cannot change it.`, [{ field: upsert.field, reason: 'is already taken' }])
  if (upsert.resolution === 'ignore-duplicates') {
    return { row: found, created: false, standing: await context.standing(request, 'read', request.params, found, tx), shown: {} }
  }
  const secrets = Object.fromEntries(Object.entries(collection.options.writeOnly ?? {}).filter(([name]) => item.body[name] != null).map(([, field]) => [field.column, item.secrets.columns[field.column]]))
  const changed = await changeLocked(context, request, tx, record, found, { operation: 'patch', body: () => item.body, secrets, preconditions: () => {} })
  return { row: changed.row, created: false, standing: changed.standing, shown: {} }
}

/**
 * 201 when every item was created, else 200 (an upsert changed or left some). One item answers as
 * a create does (Location, validators); an array answers with every item in the request's order.
 */
function answerWith(context: HandlerContext, request: WriteRequest, reply: FastifyReply, outcomes: readonly Outcome[], answer: Answer, many: boolean, upsert: Upsert | undefined): Written {
  const allCreated = outcomes.every((outcome) => outcome.created)
  reply.code(allCreated ? 201 : 200)
  if (upsert) {
    preferenceApplied(reply, `resolution=${upsert.resolution}`)
    varyByPrefer(reply)
  }
  if (!many) {
    const [{ row, standing, shown, created }] = outcomes as [Outcome]
    if (created) reply.header('location', `${requestPath(request)}/${row.id as string}`)
    else reply.header('content-location', `${requestPath(request)}/${row.id as string}`)
    const body = written(context, request, reply, row, standing, answer, shown)
    // Preference-Applied names both the resolution and the return it honoured.
    if (upsert && answer.preference !== undefined) preferenceApplied(reply, `resolution=${upsert.resolution}, return=${answer.preference === 'minimal' && Object.keys(shown).length === 0 ? 'minimal' : 'representation'}`)
    return body
  }
  const minimal = answer.preference === 'minimal' && outcomes.every((outcome) => Object.keys(outcome.shown).length === 0)
  if (answer.preference !== undefined) {
    preferenceApplied(reply, [upsert && `resolution=${upsert.resolution}`, `return=${minimal ? 'minimal' : 'representation'}`].filter(Boolean).join(', '))
    varyByPrefer(reply)
  }
  if (minimal) return undefined
  // Several of a batch's creates sent as one array: each answers as alone (src/batch/route.ts).
  if (innerRequest()) {
    const validators = outcomes.map(({ row, standing }) => context.validators(row, standing, answer.selection))
    reply.header(ITEM_VALIDATORS, JSON.stringify(validators.map((v) => [v.etag, v.lastModified?.toUTCString() ?? null])))
  }
  reply.type(request.responseType)
  const items = outcomes.map(({ row, standing, shown }) => ({ ...context.detail(row, standing, answer.selection), ...shown }))
  if (answer.selection) return JSON.stringify(items)
  // Each item written as one create's answer is (the route's serializer: the same fields, in the same order).
  const serialize = reply.getSerializationFunction('201')!
  return `[${items.map((item) => serialize(item)).join(',')}]`
}
