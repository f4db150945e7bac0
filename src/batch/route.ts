/**
 * `POST /api/v{n}/batch` (DESIGN "Writing many"): up to BATCH_MAX_OPERATIONS operations, each a
 * request the caller could make alone, answered by its own route: the same rules, preconditions,
 * idempotency keys, events and rate limits. The service makes each one as a request to itself
 * (an inner request, src/http/inner-requests.ts), as the batch's caller; by default all of them
 * in one transaction (src/db/shared-transaction.ts), which the first failure rolls back. A later
 * operation may use an earlier one's answer (`{$0.id}`, src/batch/references.ts).
 *
 * A batch is no way around anything: an operation's path is below the batch's API version and is
 * not the batch itself, and it may carry only the headers that say what the operation is
 * (preconditions, Prefer, Idempotency-Key, its body's type), never one that changes who calls.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, LightMyRequestResponse as InjectResponse } from 'fastify'
import { requireCaller } from '../auth/caller.js'
import type { SharingDatabase } from '../db/shared-transaction.js'
import { EVENTS_TABLE } from '../db/events.js'
import type { IdempotencyKeys } from '../db/idempotency.js'
import { ApiError, within, type ErrorCode } from '../errors.js'
import { requireBody } from '../http/body-parser.js'
import { idempotent } from '../http/idempotency.js'
import { asInner, ITEM_VALIDATORS } from '../http/inner-requests.js'
import { rejectInvalid } from '../resources/handler-context.js'
import { checkInTime } from '../resources/write-steps.js'
import { referencesIn, resolveBody, resolvePath, stringsIn, type Answered } from './references.js'
import { batchDocument, type BatchBody, type Operation } from './schema.js'

/** The headers an operation may carry: what the operation is, not who makes it. */
const OPERATION_HEADERS = new Set(['if-match', 'if-none-match', 'if-modified-since', 'if-unmodified-since', 'prefer', 'idempotency-key', 'content-type'])
/** The headers of an operation's answer its result shows. */
const RESULT_HEADERS = ['location', 'content-location', 'etag', 'last-modified', 'preference-applied', 'idempotent-replayed', 'link', 'x-total-count', 'retry-after']

/** One operation's outcome, as the batch's answer lists it. */
interface Result extends Answered {
  headers: Record<string, string>
}

/** The headers of an answer its result shows. */
function kept(response: InjectResponse): Record<string, string> {
  const shown: Record<string, string> = {}
  for (const name of RESULT_HEADERS) if (response.headers[name] !== undefined) shown[name] = String(response.headers[name])
  return shown
}

/**
 * The operations in the groups they are sent in: alone, or consecutive creates in one top-level
 * collection of `arrays` (`/products`: only a collection's POST takes an array, and a nested one
 * records its parent's event once per request), without headers or query, none referring to
 * another of its group.
 */
function groupsOf(operations: readonly Operation[], arrays: ReadonlySet<string>, most: number): number[][] {
  const groups: number[][] = []
  const creates = (operation: Operation) =>
    operation.method === 'POST' && arrays.has(operation.path) && Object.keys(operation.headers ?? {}).length === 0 &&
    operation.body !== null && typeof operation.body === 'object' && !Array.isArray(operation.body)
  for (const [index, operation] of operations.entries()) {
    const group = groups.at(-1)
    const first = group && operations[group[0]!]!
    const joins = first && creates(first) && creates(operation) && operation.path === first.path &&
      [...stringsIn(operation.body, 'body')].every(([, text]) => referencesIn(text).every((to) => to < group[0]!))
    if (joins && group.length < most) group.push(index)
    else groups.push([index])
  }
  return groups
}

/** Thrown inside the transaction to roll it back: operation `index` failed with `result`. */
class Failed extends Error {
  constructor(
    readonly index: number,
    readonly result: Result,
  ) {
    super(`operation ${index} failed`)
  }
}

const badOperation = (index: number, field: string, reason: string) =>
  new ApiError('BAD_REQUEST', `operations[${index}].${field} ${reason}.`, [{ field: `operations[${index}].${field}`, reason }])

/** Decoded path segments that would climb out of the version (`..`, `%2e%2e`). */
const DOT_SEGMENT = /(^|\/)\.{1,2}(\/|$)/

/** Checks what can be checked before anything runs: the path, the headers, the references' order. */
function checkOperation(operation: Operation, index: number): void {
  const { path } = operation
  const target = path.split('?')[0]!
  let decoded: string
  try {
    decoded = decodeURIComponent(target)
  } catch {
    throw badOperation(index, 'path', 'is not a valid percent-encoded path')
  }
  if (!path.startsWith('/') || path.startsWith('//') || /[\\#\s]/.test(path) || DOT_SEGMENT.test(decoded)) {
    throw badOperation(index, 'path', 'must be a path below the API version, such as /products/{id}, without . or .. segments')
  }
  if (/^\/batch(\/|$)/.test(decoded.replace(/\/+$/, '') || '/')) throw badOperation(index, 'path', 'may not be /batch: a batch does not contain batches')
  for (const name of Object.keys(operation.headers ?? {})) {
    if (!OPERATION_HEADERS.has(name.toLowerCase())) {
      throw badOperation(index, `headers.${name}`, `may not be set in a batch: an operation carries only ${[...OPERATION_HEADERS].join(', ')}`)
    }
  }
  const later = [...referencesIn(path).map((to) => ['path', to] as const), ...[...stringsIn(operation.body, 'body')].flatMap(([at, text]) => referencesIn(text).map((to) => [at, to] as const))].find(
    ([, to]) => to >= index,
  )
  if (later) throw badOperation(index, later[0], `refers to operation ${later[1]}, which does not come before it`)
}

/** The answer of a failed operation as the batch's: its status, its code, its details under `operations[i]`. */
function failureOf({ index, result }: Failed): unknown {
  const body = result.body as { error?: { code?: string; message?: string; details?: { field: string; reason: string }[] } } | null
  const error = body?.error
  const headers = result.headers['retry-after'] ? { 'retry-after': result.headers['retry-after'] } : undefined
  const code = (error?.code ?? 'INTERNAL_ERROR') as ErrorCode
  return within(`operations[${index}]`, new ApiError(code, error?.message, error?.details ?? [], { headers }))
}

export interface BatchOptions {
  /** The whole service: the operations are requests to it. */
  service: FastifyInstance
  db: SharingDatabase
  keys: IdempotencyKeys
  /** The API version's path prefix (`/api/v2`). */
  prefix: string
  maxOperations: number
  /** The most items one array POST creates (BULK_MAX_ITEMS): the most creates sent as one. */
  bulkMaxItems: number
  /** The paths of the top-level collections clients create in (`/products`): their creates may be sent as one array. */
  arrays: ReadonlySet<string>
}

/** Registers `POST /batch` on a version's plugin. */
export function registerBatch(api: FastifyInstance, { service, db, keys, prefix, maxOperations, bulkMaxItems, arrays }: BatchOptions): void {
  /** Makes an operation as a request to the service, as the batch's caller, from the batch's address. */
  async function run(request: FastifyRequest, operation: Operation, answers: readonly Answered[]): Promise<Result> {
    let path: string
    let payload: string | undefined
    try {
      // Its errors are the operation's, as a route's are: the batch names the operation (`operations[2].path`).
      path = resolvePath(operation.path, answers, 'path')
      payload = operation.body === undefined ? undefined : JSON.stringify(resolveBody(operation.body, answers, 'body'))
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      return { status: error.status, headers: {}, body: { error: { code: error.code, message: error.message, details: error.details } } }
    }
    const response = await send(request, operation.method, path, payload, operation.headers ?? {}, 1)
    return { status: response.statusCode, headers: kept(response), body: response.body === '' ? null : response.json() }
  }

  /** A request to the service, as the batch's caller, from the batch's address, for `operations` of its operations. */
  function send(request: FastifyRequest, method: string, path: string, payload: string | undefined, given: Record<string, string>, operations: number) {
    const headers: Record<string, string> = { accept: 'application/json' }
    for (const [name, value] of Object.entries(given)) headers[name.toLowerCase()] = value
    if (payload !== undefined) headers['content-type'] ??= 'application/json'
    // The callback form: the request is made at once, inside the inner context. Without a
    // callback, inject returns a thenable that makes the request when awaited, outside it.
    const options = { method: method as 'POST', url: `${prefix}${path}`, headers, payload, remoteAddress: request.ip }
    return asInner({ caller: request.caller, operations }, () =>
      new Promise<InjectResponse>((resolve, reject) => service.inject(options, (error, answer) => (error ? reject(error) : resolve(answer!)))),
    )
  }

  /**
   * Consecutive creates in one top-level collection (operations `group`), sent as one array: one
   * statement for their rows and events where the collection writes arrays so. Each result is
   * what the create alone answers (its Location, ETag and Last-Modified, from the array's
   * answer); a failure is the item's operation's, its details without the array's index.
   */
  async function runCreates(request: FastifyRequest, operations: readonly Operation[], group: readonly number[], results: readonly Result[]): Promise<Result[]> {
    const path = operations[group[0]!]!.path
    const bodies = group.map((index) => {
      try {
        return resolveBody(operations[index]!.body, results, 'body')
      } catch (error) {
        if (!(error instanceof ApiError)) throw error
        throw new Failed(index, { status: error.status, headers: {}, body: { error: { code: error.code, message: error.message, details: error.details } } })
      }
    })
    const response = await send(request, 'POST', path, JSON.stringify(bodies), {}, group.length)
    const body = response.json() as unknown
    if (response.statusCode >= 400) {
      const error = (body as { error: { code: string; message: string; details: { field: string; reason: string }[] } }).error
      const item = /^\[(\d+)\]/.exec(error.details[0]?.field ?? '')
      const at = item ? Number(item[1]) : 0
      // The first failing item's, as its operation alone would have failed, first.
      const mine = item ? error.details.filter((d) => d.field.startsWith(item[0])) : error.details
      const own = { ...error, message: error.message.replace(/^\[\d+\]: /, ''), details: mine.map((d) => ({ ...d, field: d.field.slice(item?.[0].length ?? 0).replace(/^\./, '') })).filter((d) => d.field !== '') }
      throw new Failed(group[at] ?? group[0]!, { status: response.statusCode, headers: kept(response), body: { error: own } })
    }
    const validators = JSON.parse(String(response.headers[ITEM_VALIDATORS])) as [string, string | null][]
    const link = response.headers.link
    return (body as { id: string }[]).map((item, k) => ({
      status: 201,
      headers: {
        location: `${prefix}${path}/${item.id}`,
        etag: validators[k]![0],
        ...(validators[k]![1] ? { 'last-modified': validators[k]![1] } : {}),
        ...(link ? { link: String(link) } : {}),
      },
      body: item,
    }))
  }

  /** Operation `index` in a transaction: its result, or Failed (which rolls the transaction back). */
  async function runOrFail(request: FastifyRequest, operation: Operation, index: number, results: readonly Result[]): Promise<Result> {
    const result = await run(request, operation, results)
    if (result.status >= 400) throw new Failed(index, result)
    return result
  }

  async function batch(request: FastifyRequest<{ Body: BatchBody }>, reply: FastifyReply) {
    // Whoever may call the operations alone may batch them: a caller, identified once.
    requireCaller(request)
    const operations = (request.body as { operations?: unknown }).operations
    if (Array.isArray(operations) && operations.length > maxOperations) {
      throw new ApiError('PAYLOAD_TOO_LARGE', `A batch has at most ${maxOperations} operations; this one has ${operations.length}. Send them in several batches.`, [
        { field: 'operations', reason: `has ${operations.length} operations; at most ${maxOperations}` },
      ])
    }
    rejectInvalid(request)
    const { atomic = true } = request.body
    request.body.operations.forEach(checkOperation)
    const results: Result[] = []
    const inTransaction = <T>(fn: () => Promise<T>) => db.shared(fn, { announce: EVENTS_TABLE })
    try {
      if (atomic) {
        const { operations } = request.body
        await inTransaction(async () => {
          for (const group of groupsOf(operations, arrays, bulkMaxItems)) {
            if (group.length === 1) results.push(await runOrFail(request, operations[group[0]!]!, group[0]!, results))
            else results.push(...(await runCreates(request, operations, group, results)))
            // No operation starts, and nothing commits, after the batch was answered 503.
            checkInTime(reply)
          }
        })
      } else {
        for (const [index, operation] of request.body.operations.entries()) {
          checkInTime(reply)
          try {
            results.push(await inTransaction(() => runOrFail(request, operation, index, results)))
          } catch (error) {
            if (!(error instanceof Failed)) throw error
            results.push(error.result)
          }
        }
      }
    } catch (error) {
      throw error instanceof Failed ? failureOf(error) : error
    }
    return { results }
  }

  const document = batchDocument(api, maxOperations)
  api.post<{ Body: BatchBody }>(
    '/batch',
    { schema: document.schema, attachValidation: true, preValidation: requireBody, config: { document: document.document } },
    idempotent(batch, keys, async () => {
      // A batch records no item on its key: a key it claimed is completed or released.
      throw new ApiError('IDEMPOTENCY_KEY_IN_USE', undefined, [], { headers: { 'retry-after': '1' } })
    }),
  )
}
