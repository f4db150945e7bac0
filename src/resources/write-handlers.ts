/** POST, PUT, PATCH and DELETE: validated bodies to stored data, with hooks and optimistic writes. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'
import { evaluate, hasPrecondition, setValidators } from '../http/conditional.js'
import { notFound, rejectInvalid, type Body, type HandlerContext, type Params } from './handler-context.js'
import { uuidv7 } from './ids.js'
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

/**
 * After the item is found and the body is valid (404 and 422 come first): 428 when the collection
 * requires If-Match, then the request's preconditions against the item as it is (412).
 */
function checkPreconditions(context: HandlerContext, request: FastifyRequest, row: Row): void {
  if (context.collection.options.requireIfMatch && request.headers['if-match'] === undefined) {
    throw new ApiError('PRECONDITION_REQUIRED', `Changes to ${context.collection.name} need If-Match with the ETag you read; GET the item first.`)
  }
  evaluate(request, context.validators(row))
}

/** The representation a write answers with, with its new validators (RFC 9110 §8.8; CACHE-14). */
function written(context: HandlerContext, reply: FastifyReply, row: Row): Representation {
  setValidators(reply, context.validators(row))
  return context.version.toView(context.detail(row))
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
    const { collection, store, listScope } = context
    const { parent, hooks } = collection.options
    const scope = await listScope(request.params)
    const data = fullData(collection, validBody(context, request))
    await hooks?.beforeWrite?.({ operation: 'create', data, parentId: request.params.parentId })
    const now = new Date()
    const row = await store
      .create({ ...toColumns(collection, data), ...scope, id: uuidv7(), createdAt: now, updatedAt: now })
      .catch((error: unknown) => {
        // The parent was deleted between the check and the insert: it is gone, as for a list.
        const orphan = parent && error instanceof ApiError && error.details.some((d) => d.field === parent.field)
        throw orphan ? notFound() : error
      })
    reply.code(201).header('location', `${request.url.split('?', 1)[0]}/${row.id as string}`)
    return written(context, reply, row)
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
  toData: (body: Record<string, unknown>, current: Representation) => WriteData,
) {
  const { collection, store, detail, scopeOf } = context
  const params = request.params
  const scope = scopeOf(params)
  // Content-Location: the body is the item's current representation (RFC 9110 §8.7; CACHE-14).
  const answer = (stored: Row) => {
    reply.header('content-location', request.url.split('?', 1)[0]!)
    return written(context, reply, stored)
  }
  return optimistically(async () => {
    const row = await store.find(scope)
    if (!row) throw notFound()
    const current = detail(row)
    const data = toData(validBody(context, request), current)
    await collection.options.hooks?.beforeWrite?.({ operation, data, current, parentId: params.parentId })
    checkPreconditions(context, request, row)
    const changed = toColumns(collection, changes(data, current))
    if (Object.keys(changed).length === 0) return answer(row)
    // updated_at moves forward on every change, even two within one millisecond.
    const previous = row.updatedAt as Date
    changed.updatedAt = new Date(Math.max(Date.now(), previous.getTime() + 1))
    const updated = await store.updateIfUnchanged(scope, previous, changed)
    return updated ? answer(updated) : undefined
  })
}

export const replaceHandler = (context: HandlerContext) => (request: WriteRequest, reply: FastifyReply) =>
  update(context, request, reply, 'replace', (body, current) => {
    checkReadOnly(context.collection, body, current)
    return fullData(context.collection, body)
  })

export const patchHandler = (context: HandlerContext) => (request: WriteRequest, reply: FastifyReply) =>
  update(context, request, reply, 'patch', (body) => patchData(context.collection, body))

export const deleteHandler = (context: HandlerContext) =>
  async function remove(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
    const { store, scopeOf, collection } = context
    const scope = scopeOf(request.params)
    if (!collection.options.requireIfMatch && !hasPrecondition(request)) {
      if (!(await store.remove(scope))) throw notFound()
      return reply.code(204).send()
    }
    // A conditional delete removes the version it checked, or nothing.
    await optimistically(async () => {
      const row = await store.find(scope)
      if (!row) throw notFound()
      checkPreconditions(context, request, row)
      return (await store.remove(scope, row.updatedAt as Date)) || undefined
    })
    return reply.code(204).send()
  }
