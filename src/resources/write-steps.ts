/** The steps every write takes, in a transaction or in one statement: its body, its secrets, its deadline, its answer. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Standing } from '../auth/access.js'
import { ApiError } from '../errors.js'
import { setValidators } from '../http/conditional.js'
import { preferenceApplied, preferences, varyByPrefer } from '../http/prefer.js'
import { bodyOf, type FieldSelection } from './field-selection.js'
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
export interface Secrets {
  columns: Row
  shown: Representation
}

/**
 * The stored values of the write-only fields `body` sets (a password's hash), computed before
 * the transaction: a password's scrypt takes 0.45 s, which no row lock should wait for. A create
 * generates those it leaves out that the collection generates (a signing secret). `body` is the
 * valid body as the collection takes it (validBody).
 */
export async function writeOnlyColumns({ collection }: HandlerContext, body: Body, operation: 'create' | 'change'): Promise<Secrets> {
  const secrets: Secrets = { columns: {}, shown: {} }
  for (const [name, field] of Object.entries(collection.options.writeOnly ?? {})) {
    const value = body[name] ?? (operation === 'create' ? field.generate?.() : undefined)
    if (value === undefined || value === null) continue
    secrets.columns[field.column] = await field.store(value)
    if (operation === 'create' && field.shownOnCreate) secrets.shown[name] = value
  }
  return secrets
}

/** How a write answers: with the fields asked for (`fields=`), or without a body (`Prefer: return=minimal`). */
export interface Answer {
  selection: FieldSelection | undefined
  /** The `return` preference (RFC 7240 §4.2) when the client stated one this service knows. */
  preference: 'minimal' | 'representation' | undefined
}

/** What a write handler returns: the representation, written out already (`fields=`), or nothing: the answer has no body. */
export type Written = Representation | string | undefined

/** Read before anything is written: a `fields` the collection cannot answer is a 400 that changes nothing. */
export function answerOf({ select }: HandlerContext, request: FastifyRequest): Answer {
  const selection = select((request.query as Record<string, unknown>).fields)
  // Most writes carry no Prefer: they pay for one header lookup.
  const preference = request.headers.prefer === undefined ? undefined : preferences(request).get('return')
  return { selection, preference: preference === 'minimal' || preference === 'representation' ? preference : undefined }
}

/**
 * The answer of a write, with the item's new validators (RFC 9110 §8.8; CACHE-14): its
 * representation with the fields asked for, and `shown`, the write-only values a create shows that
 * once; or, under `Prefer: return=minimal`, no body (201 keeps its Location, a change is 204). A
 * create that shows a secret once answers with it whatever the preference: it cannot be read again.
 */
export function written(views: Views, request: FastifyRequest, reply: FastifyReply, row: Row, standing: Standing, answer: Answer, shown: Representation = {}): Written {
  const minimal = answer.preference === 'minimal' && Object.keys(shown).length === 0
  setValidators(reply, views.validators(row, standing, minimal ? undefined : answer.selection))
  if (answer.preference !== undefined) {
    preferenceApplied(reply, `return=${minimal ? 'minimal' : 'representation'}`)
    varyByPrefer(reply)
  }
  if (minimal) {
    reply.code(reply.statusCode === 201 ? 201 : 204)
    return undefined
  }
  return bodyOf(request, reply, answer.selection !== undefined, { ...views.detail(row, standing, answer.selection), ...shown })
}

/**
 * Throws when the request has already been answered (a 503 for taking longer than
 * REQUEST_TIMEOUT_MS): no write starts, or commits, after the client was told it failed.
 */
export function checkInTime(reply: FastifyReply): void {
  if (reply.sent) throw new ApiError('SERVICE_UNAVAILABLE', 'The request was answered before its write could complete.')
}

