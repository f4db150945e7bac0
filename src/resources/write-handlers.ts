/** POST, PUT, PATCH and DELETE: validated bodies to stored data, with hooks and optimistic writes. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'
import { evaluate, hasPrecondition, setValidators } from '../http/conditional.js'
import type { Standing } from '../auth/access.js'
import { notFound, rejectInvalid, type Body, type HandlerContext, type Params } from './handler-context.js'
import { checkWritable, type FieldPermissions } from './permissions.js'
import { uuidv7 } from '../ids.js'
import type { Representation, Row } from './represent.js'
import { changes, checkReadOnly, fullData, patchData, toColumns, type WriteData } from './writes.js'

type WriteRequest = FastifyRequest<{ Params: Params; Body: Body }>

/**
 * Times a replace or patch re-reads and retries when another write changed the item in between.
 * Every lost race means another writer succeeded, so this bounds the writers racing on one item.
 */
const WRITE_ATTEMPTS = 50

/** The body as the collection takes it, once it is known to be valid for this version. */
function validBody({ version }: HandlerContext, request: WriteRequest): Record<string, unknown> {
  rejectInvalid(request)
  return version.fromView(request.body)
}

/** The stored values of the write-only fields the body sets (a password's hash). */
async function writeOnlyColumns({ collection }: HandlerContext, body: Record<string, unknown>): Promise<Row> {
  const columns: Row = {}
  for (const [name, field] of Object.entries(collection.options.writeOnly ?? {})) {
    if (body[name] !== undefined && body[name] !== null) columns[field.column] = await field.store(body[name])
  }
  return columns
}

/**
 * After the item is found and the body is valid (404 and 422 come first): 428 when the collection
 * requires If-Match, then the request's preconditions against the item as it is (412).
 */
function checkPreconditions(context: HandlerContext, request: FastifyRequest, row: Row, standing: Standing): void {
  // `If-Match: *` matches any version: it would say nothing about which one the client read.
  const ifMatch = request.headers['if-match']
  if (context.collection.options.requireIfMatch && (ifMatch === undefined || ifMatch.trim() === '*')) {
    throw new ApiError('PRECONDITION_REQUIRED', `Changes to ${context.collection.name} need If-Match with the ETag you read; GET the item first.`)
  }
  evaluate(request, context.validators(row, standing))
}

/** The representation a write answers with, with its new validators (RFC 9110 §8.8; CACHE-14). */
function written(context: HandlerContext, reply: FastifyReply, row: Row, standing: Standing): Representation {
  setValidators(reply, context.validators(row, standing))
  return context.detail(row, standing)
}

/**
 * Throws when the request has already been answered (a 503 for taking longer than
 * REQUEST_TIMEOUT_MS): no write starts after the client was told it failed.
 */
function checkInTime(reply: FastifyReply): void {
  if (reply.sent) throw new ApiError('SERVICE_UNAVAILABLE', 'The request was answered before its write could start.')
}

/**
 * Runs `attempt` until it settles: it reads the item and writes only if nobody wrote in between,
 * or returns undefined to go again. Every lost race means another writer succeeded, so the
 * bound is on the writers racing on one item.
 */
async function optimistically<T>(attempt: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < WRITE_ATTEMPTS; i++) {
    const result = await attempt()
    if (result !== undefined) return result
  }
  throw new ApiError('CONFLICT', 'The item is being changed by other requests; try again.')
}

export const createHandler = (context: HandlerContext) =>
  async function create(request: WriteRequest, reply: FastifyReply) {
    const { collection, store, permissions } = context
    const { parent, hooks } = collection.options
    context.authorize(request, 'create')
    const { scope, standing: standingOf } = await context.placement(request, 'create', request.params)
    const standing = standingOf()
    const body = validBody(context, request)
    checkWritable(permissions[standing], body)
    const data = fullData(collection, body, permissions[standing].locked)
    await hooks?.beforeWrite?.({ operation: 'create', data, parentId: request.params.parentId, caller: request.caller, db: context.db })
    const now = new Date()
    checkInTime(reply)
    const row = await store
      .create({ ...toColumns(collection, data), ...(await writeOnlyColumns(context, body)), ...scope, id: uuidv7(), createdAt: now, updatedAt: now })
      .catch((error: unknown) => {
        // The parent was deleted between the check and the insert: it is gone, as for a list.
        const orphan = parent && error instanceof ApiError && error.code === 'VALIDATION_ERROR' && error.details.some((d) => d.field === parent.field)
        throw orphan ? notFound() : error
      })
    reply.code(201).header('location', `${request.url.split('?', 1)[0]}/${row.id as string}`)
    return written(context, reply, row, standing)
  }

/**
 * Read, merge, check, write only if nobody wrote in between (else again); a write that changes
 * nothing stores nothing. The conditional write makes a precondition atomic: of several requests
 * with the same If-Match, one writes and the others, re-reading, find a new ETag (412).
 */
function update(
  context: HandlerContext,
  request: WriteRequest,
  reply: FastifyReply,
  operation: 'replace' | 'patch',
  toData: (body: Record<string, unknown>, current: Representation, permissions: FieldPermissions) => WriteData,
) {
  const { collection, store, stored, scopeOf } = context
  const params = request.params
  context.authorize(request, 'update')
  const scope = scopeOf(params)
  // Hashed once, not on every attempt: a password's scrypt takes 0.45 s.
  let secrets: Promise<Row> | undefined
  return optimistically(async () => {
    const row = await store.find(scope)
    if (!row) throw notFound()
    const standing = await context.standing(request, 'update', params, row)
    const current = stored(row)
    const body = validBody(context, request)
    checkWritable(context.permissions[standing], body, current)
    const data = toData(body, current, context.permissions[standing])
    await collection.options.hooks?.beforeWrite?.({ operation, data, current, parentId: params.parentId, caller: request.caller, db: context.db })
    checkPreconditions(context, request, row, standing)
    // Content-Location: the body is the item's current representation (RFC 9110 §8.7; CACHE-14).
    const answer = (result: Row) => {
      reply.header('content-location', request.url.split('?', 1)[0]!)
      return written(context, reply, result, standing)
    }
    const changed = { ...toColumns(collection, changes(data, current)), ...(await (secrets ??= writeOnlyColumns(context, body))) }
    if (Object.keys(changed).length === 0) return answer(row)
    // updated_at moves forward on every change, even two within one millisecond.
    const previous = row.updatedAt as Date
    changed.updatedAt = new Date(Math.max(Date.now(), previous.getTime() + 1))
    checkInTime(reply)
    const updated = await store.updateIfUnchanged(scope, previous, changed)
    return updated ? answer(updated) : undefined
  })
}

export const replaceHandler = (context: HandlerContext) => (request: WriteRequest, reply: FastifyReply) =>
  update(context, request, reply, 'replace', (body, current, permissions) => {
    checkReadOnly(context.collection, body, current)
    return fullData(context.collection, body, permissions.locked)
  })

export const patchHandler = (context: HandlerContext) => (request: WriteRequest, reply: FastifyReply) =>
  update(context, request, reply, 'patch', (body) => patchData(context.collection, body))

export const deleteHandler = (context: HandlerContext) =>
  async function remove(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
    const { store, scopeOf, collection } = context
    const { access, requireIfMatch, hooks } = collection.options
    context.authorize(request, 'delete')
    const scope = scopeOf(request.params)
    if (!requireIfMatch && !hasPrecondition(request) && access.delete !== 'owner-or-admin' && !hooks?.beforeDelete) {
      checkInTime(reply)
      if (!(await store.remove(scope))) throw notFound()
      return reply.code(204).send()
    }
    // A delete that depends on the item (its owner, its state, a precondition) removes the version it checked, or nothing.
    await optimistically(async () => {
      const row = await store.find(scope)
      if (!row) throw notFound()
      const standing = await context.standing(request, 'delete', request.params, row)
      await hooks?.beforeDelete?.({ current: context.stored(row), parentId: request.params.parentId, caller: request.caller, db: context.db })
      checkPreconditions(context, request, row, standing)
      checkInTime(reply)
      return (await store.remove(scope, row.updatedAt as Date)) || undefined
    })
    return reply.code(204).send()
  }
