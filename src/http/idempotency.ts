/**
 * Idempotency-Key on POST (draft-ietf-httpapi-idempotency-key-header-06, as Stripe has it): a
 * client that retries a create with the same key gets the first answer again, with
 * `Idempotent-Replayed: true`, and nothing is written twice. Keys belong to the caller (the user,
 * or the address of an anonymous caller) and are kept 24 h in the database, so a retry that lands
 * on another instance is answered the same. The same key with another request is 422; while the
 * first is still running, 409.
 */
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { IdempotencyKeys, KeyClaim, StoredResponse } from '../db/idempotency.js'
import { ApiError } from '../errors.js'
import { errorBody, toApiError } from './error-handler.js'
import { preferences } from './prefer.js'

/** Longest key (DESIGN; Stripe's too). */
export const MAX_KEY_LENGTH = 255
/** Draft §2: a structured-field string, quoted; a bare token is taken too, as most clients send one. */
const KEY = /^"?([\x21\x23-\x7e]{1,255})"?$/

/** Headers of a response that the handler set and a replay repeats; the hooks set the others anew. */
const KEPT_HEADERS = ['location', 'etag', 'last-modified', 'content-location', 'content-type', 'allow', 'accept-patch', 'www-authenticate', 'retry-after', 'preference-applied', 'vary']

/** The key of a request that has one; a malformed key is a 400. */
function keyOf(request: FastifyRequest): string {
  const raw = request.headers['idempotency-key']
  const match = typeof raw === 'string' ? KEY.exec(raw.trim()) : null
  if (!match) {
    throw new ApiError('BAD_REQUEST', `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters, such as a UUID.`, [
      { field: 'Idempotency-Key', reason: 'is not a valid key' },
    ])
  }
  return match[1]!
}

/**
 * The request a key stands for: the method, the path with its query, the answer it asks for
 * (Prefer: return=minimal answers without a body), and the body as read.
 */
function fingerprintOf(request: FastifyRequest): string {
  // Written only when given, so that a request without it keeps the fingerprint it always had.
  const answer = request.headers.prefer === undefined ? undefined : preferences(request).get('return')
  return createHash('sha256').update(`${request.method} ${request.url}${answer ? ` return=${answer}` : ''}\n${JSON.stringify(request.body ?? null)}`).digest('hex')
}

const callerOf = (request: FastifyRequest) => (request.caller ? `user:${request.caller.user.id}` : `address:${request.ip}`)

function kept(headers: Record<string, unknown>): Record<string, string> {
  const picked: Record<string, string> = {}
  for (const name of KEPT_HEADERS) if (headers[name] !== undefined) picked[name] = String(headers[name])
  return picked
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The Idempotency-Key this request holds: a create records its item on it, in its own write. */
    idempotencyKey: KeyClaim | null
  }
}

type Handler<R extends FastifyRequest> = (request: R, reply: FastifyReply) => Promise<unknown>
/** The answer to a request whose create was written and never answered: the item `itemId`, as the create answers. */
type Written<R extends FastifyRequest> = (request: R, reply: FastifyReply, itemId: string) => Promise<unknown>

/** Every request starts without a key; `idempotent` sets the one it claims. */
export function installIdempotency(app: FastifyInstance): void {
  app.decorateRequest('idempotencyKey', null)
}

function replay(reply: FastifyReply, response: StoredResponse): FastifyReply {
  reply.code(response.status).headers(response.headers).header('idempotent-replayed', 'true')
  // A create answered without a body (Prefer: return=minimal) is replayed without one.
  return response.body === '' ? reply.send() : reply.send(response.body)
}

/**
 * Wraps a create handler. The outcome is recorded when the handler settles, even after the
 * request was answered 503 for taking too long (src/http/time-limit.ts): the retry then gets what
 * really happened, never a second write. A server-side failure (5xx) gives the key back. The
 * create records its item on the key in its own write, so that a process that dies between the
 * write and the answer leaves the key written: the retry is answered with the item (`written`).
 */
export function idempotent<R extends FastifyRequest>(handler: Handler<R>, keys: IdempotencyKeys, written: Written<R>): Handler<R> {
  const keyed: Handler<R> = async (request, reply) => {
    const key = keyOf(request)
    const caller = callerOf(request)
    const claim = await keys.claim(caller, key, fingerprintOf(request))
    if (claim.kind === 'done') return replay(reply, claim.response)
    if (claim.kind === 'reused') throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used for another request; use a new key for a new request.')
    if (claim.kind === 'in-flight') throw new ApiError('IDEMPOTENCY_KEY_IN_USE', undefined, [], { headers: { 'retry-after': '1' } })
    request.idempotencyKey = { caller, key }
    let payload: unknown
    try {
      payload = claim.kind === 'written' ? await written(request, reply.header('idempotent-replayed', 'true'), claim.itemId) : await handler(request, reply)
    } catch (error) {
      const apiError = toApiError(error, request)
      if (apiError.status >= 500) await keys.release(caller, key)
      else await keys.complete(caller, key, { status: apiError.status, headers: { 'content-type': 'application/json; charset=utf-8', ...apiError.headers }, body: JSON.stringify(errorBody(apiError)) })
      throw error
    }
    // Serialized here, with the route's schema for its status (or the fields asked for), so that
    // the stored body is the sent one; none when the answer has none (Prefer: return=minimal).
    const body = payload === undefined ? '' : typeof payload === 'string' ? payload : (reply.serialize(payload) as string)
    if (body !== '') reply.type(request.responseType)
    await keys.complete(caller, key, { status: reply.statusCode, headers: kept(reply.getHeaders()), body })
    return body === '' ? reply.send() : reply.send(body)
  }
  // Most creates carry no key: they pay for one header lookup, not for another async layer.
  return (request, reply) => (request.headers['idempotency-key'] === undefined ? handler(request, reply) : keyed(request, reply))
}
