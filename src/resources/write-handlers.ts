/** POST, PUT, PATCH and DELETE: validated bodies to stored data, with hooks and optimistic writes. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'
import { notFound, rejectInvalid, type Body, type HandlerContext, type Params } from './handler-context.js'
import { uuidv7 } from './ids.js'
import type { Representation } from './represent.js'
import { changes, checkReadOnly, fullData, patchData, toColumns, type WriteData } from './writes.js'

type WriteRequest = FastifyRequest<{ Params: Params; Body: Body }>

/**
 * Times a replace or patch re-reads and retries when another write changed the item in between.
 * Every lost race means another writer succeeded, so this bounds the writers racing on one item.
 */
const WRITE_ATTEMPTS = 50

export const createHandler = ({ collection, store, detail, listScope }: HandlerContext) =>
  async function create(request: WriteRequest, reply: FastifyReply) {
    const { parent, hooks } = collection.options
    const scope = await listScope(request.params)
    rejectInvalid(request)
    const data = fullData(collection, request.body)
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
    return detail(row)
  }

/** Read, merge, write only if nobody wrote in between (else again); a write that changes nothing stores nothing. */
async function update(
  { collection, store, detail, scopeOf }: HandlerContext,
  request: WriteRequest,
  operation: 'replace' | 'patch',
  toData: (current: Representation) => WriteData,
) {
  const params = request.params
  const scope = scopeOf(params)
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const row = await store.find(scope)
    if (!row) throw notFound()
    rejectInvalid(request)
    const current = detail(row)
    const data = toData(current)
    await collection.options.hooks?.beforeWrite?.({ operation, data, current, parentId: params.parentId })
    const changed = toColumns(collection, changes(data, current))
    if (Object.keys(changed).length === 0) return current
    // updated_at moves forward on every change, even two within one millisecond.
    const previous = row.updatedAt as Date
    changed.updatedAt = new Date(Math.max(Date.now(), previous.getTime() + 1))
    const updated = await store.updateIfUnchanged(scope, previous, changed)
    if (updated) return detail(updated)
  }
  throw new ApiError('CONFLICT', 'The item is being changed by other requests; try again.')
}

export const replaceHandler = (context: HandlerContext) => (request: WriteRequest) =>
  update(context, request, 'replace', (current) => {
    checkReadOnly(context.collection, request.body, current)
    return fullData(context.collection, request.body)
  })

export const patchHandler = (context: HandlerContext) => (request: WriteRequest) =>
  update(context, request, 'patch', () => patchData(context.collection, request.body))

export const deleteHandler = ({ store, scopeOf }: HandlerContext) =>
  async function remove(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
    if (!(await store.remove(scopeOf(request.params)))) throw notFound()
    return reply.code(204).send()
  }
