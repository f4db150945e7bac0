/** The steps every write takes, in a transaction or in one statement: its body, its secrets, its deadline, its answer. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Standing } from '../auth/access.js'
import { ApiError } from '../errors.js'
import { setValidators } from '../http/conditional.js'
import type { Params } from './caller-access.js'
import { rejectInvalid, type Body, type HandlerContext } from './handler-context.js'
import type { Views } from './views.js'
import type { Representation, Row } from './represent.js'

export type WriteRequest = FastifyRequest<{ Params: Params; Body: Body }>

/** The body as the collection takes it, once it is known to be valid for this version. */
export function validBody({ version }: Views, request: WriteRequest): Body {
  rejectInvalid(request)
  return version.fromView(request.body)
}

/** The write-only fields a write sets: their stored values, and the values its response shows. */
interface Secrets {
  columns: Row
  shown: Representation
}

/**
 * The stored values of the write-only fields the body sets (a password's hash), computed before
 * the transaction: a password's scrypt takes 0.45 s, which no row lock should wait for. A create
 * generates those it leaves out that the collection generates (a signing secret).
 */
export async function writeOnlyColumns({ collection, version }: HandlerContext, request: WriteRequest, operation: 'create' | 'change'): Promise<Secrets> {
  const secrets: Secrets = { columns: {}, shown: {} }
  if (request.validationError) return secrets
  const body = version.fromView(request.body)
  for (const [name, field] of Object.entries(collection.options.writeOnly ?? {})) {
    const value = body[name] ?? (operation === 'create' ? field.generate?.() : undefined)
    if (value === undefined || value === null) continue
    secrets.columns[field.column] = await field.store(value)
    if (operation === 'create' && field.shownOnCreate) secrets.shown[name] = value
  }
  return secrets
}

/** The representation a write answers with, with its new validators (RFC 9110 §8.8; CACHE-14). */
export function written(views: Views, reply: FastifyReply, row: Row, standing: Standing): Representation {
  setValidators(reply, views.validators(row, standing))
  return views.detail(row, standing)
}

/**
 * Throws when the request has already been answered (a 503 for taking longer than
 * REQUEST_TIMEOUT_MS): no write starts, or commits, after the client was told it failed.
 */
export function checkInTime(reply: FastifyReply): void {
  if (reply.sent) throw new ApiError('SERVICE_UNAVAILABLE', 'The request was answered before its write could complete.')
}

