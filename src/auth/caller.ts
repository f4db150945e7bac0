/**
 * Who is calling: resolved once per request, before any route runs, from a bearer token or else
 * the session cookie (RFC 6750 for the bearer's errors).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { AuthConfig } from '../config.js'
import type { Account, Accounts } from '../db/accounts.js'
import { ApiError, invalidToken, unauthenticated } from '../errors.js'
import { isProbe } from '../http/health.js'
import { innerRequest } from '../http/inner-requests.js'
import { SAFE_METHODS } from '../http/methods.js'
import { checkSameSite } from './csrf.js'
import { jwtVerifier, looksLikeJwt } from './jwt.js'
import { secretHash } from './secrets.js'

export const SESSION_COOKIE = 'session'
/** A session's last use is written at most this often: not one write per request. */
const TOUCH_EVERY_MS = 60_000

export type Caller =
  | { user: Account; via: 'session'; session: { id: string; createdAt: Date; expiresAt: Date } }
  | { user: Account; via: 'token'; tokenId: string; scopes: readonly string[] }
  /** A bearer JWT of the configured identity provider. */
  | { user: Account; via: 'jwt' }

/** Token scopes: `read` for safe methods, `write` for the others. */
export const SCOPES = ['read', 'write'] as const

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller, or null for an anonymous request. */
    caller: Caller | null
    /** Why the credentials sent cannot be used; answered by `rejectUnusableCredentials`. */
    credentialsError: Error | null
  }
}

/** An onRequest hook after the rate limit: credentials that were sent and cannot be used are a 401 (or 403, 503). */
export function rejectUnusableCredentials(request: FastifyRequest, _reply: unknown, done: (error?: Error) => void): void {
  done(request.credentialsError ?? undefined)
}

export function requireCaller(request: FastifyRequest): Caller {
  if (!request.caller) throw unauthenticated()
  return request.caller
}

/**
 * A session is valid until its absolute expiry, and while it was used within the idle lifetime.
 * An expired or unknown session cookie makes the request anonymous; an action that needs a
 * caller then answers 401.
 */
export function installCaller(app: FastifyInstance, store: Accounts, config: AuthConfig, corsOrigins: readonly string[]): void {
  const allowedOrigins = new Set(corsOrigins)
  const idleMs = config.sessionIdleMinutes * 60_000
  const verifyJwt = config.jwt && jwtVerifier(config.jwt, store)
  app.decorateRequest('caller', null)
  app.decorateRequest('credentialsError', null)
  // Anonymous requests, most of them, pass without a promise or a lookup. A failure is kept for
  // later: the rate limit counts the request (by address) before its 401 is answered.
  app.addHook('onRequest', (request, _reply, done) => {
    // A batch's operation is its batch's caller's, who was identified for the batch.
    const inner = innerRequest()
    if (inner) {
      request.caller = inner.caller as Caller | null
      return done()
    }
    if (request.headers.authorization === undefined && request.headers.cookie === undefined) return done()
    // A metrics scrape's bearer is METRICS_TOKEN (src/observability/metrics.ts), not an API token.
    if (isProbe(request.url)) return done()
    resolve(request).then(
      () => done(),
      (error: Error) => {
        request.credentialsError = error
        done()
      },
    )
  })

  async function resolve(request: FastifyRequest): Promise<void> {
    const authorization = request.headers.authorization
    if (authorization !== undefined) {
      request.caller = await bearer(authorization, request.method)
      return
    }
    const secret = request.cookies[SESSION_COOKIE]
    if (!secret) return
    const session = await store.session(secretHash(secret))
    const now = Date.now()
    if (!session || session.expiresAt.getTime() <= now || session.lastSeenAt.getTime() + idleMs <= now) return
    checkSameSite(request, allowedOrigins)
    if (now - session.lastSeenAt.getTime() >= TOUCH_EVERY_MS) await store.touchSession(session.id, new Date(now))
    request.caller = { user: session.user, via: 'session', session: { id: session.id, createdAt: session.createdAt, expiresAt: session.expiresAt } }
  }

  /** The caller a bearer token names; a bad, expired or revoked one is a 401 whatever the route. */
  async function bearer(authorization: string, method: string): Promise<Caller> {
    const [scheme, value, extra] = authorization.trim().split(/\s+/)
    if (scheme?.toLowerCase() !== 'bearer' || !value || extra !== undefined) throw unauthenticated('Send credentials as Authorization: Bearer <token>.')
    if (verifyJwt && looksLikeJwt(value)) return { user: await verifyJwt(value), via: 'jwt' }
    const token = await store.token(secretHash(value))
    const now = Date.now()
    if (!token || token.expiresAt.getTime() <= now) throw invalidToken('The bearer token is not valid: unknown, revoked or expired.')
    if (!SAFE_METHODS.has(method) && !token.scopes.includes('write')) {
      throw new ApiError('FORBIDDEN', 'This token may only read: its scopes lack write.', [], {
        headers: { 'www-authenticate': 'Bearer realm="api", error="insufficient_scope", scope="write"' },
      })
    }
    if (!token.lastUsedAt || now - token.lastUsedAt.getTime() >= TOUCH_EVERY_MS) {
      token.lastUsedAt = new Date(now)
      // The token a lookup is reused from is marked too: the next requests of the second need no write.
      await store.touchToken(token.id, token.lastUsedAt)
    }
    return { user: token.user, via: 'token', tokenId: token.id, scopes: token.scopes }
  }
}
