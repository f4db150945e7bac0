/**
 * Who is calling: resolved once per request from the session cookie (bearer tokens and external
 * identity providers join here), before any route runs.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { AuthConfig } from '../config.js'
import type { Account, Accounts } from '../db/accounts.js'
import { ApiError } from '../errors.js'
import { secretHash } from './secrets.js'

export const SESSION_COOKIE = 'session'
/** A session's last use is written at most this often: not one write per request. */
const TOUCH_EVERY_MS = 60_000

export interface Caller {
  user: Account
  via: 'session'
  /** The session's id, to end it. */
  sessionId: string
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller, or null for an anonymous request. */
    caller: Caller | null
  }
}

export function isAdmin(caller: Caller | null): boolean {
  return caller?.user.roles.includes('admin') ?? false
}

/** 401 for an action that needs credentials (RFC 9110 §11.6.1: with a challenge). */
export function unauthenticated(message = 'Sign in to do this.'): ApiError {
  return new ApiError('UNAUTHENTICATED', message, [], { headers: { 'www-authenticate': 'Bearer realm="api"' } })
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
export function installCaller(app: FastifyInstance, store: Accounts, config: AuthConfig): void {
  const idleMs = config.sessionIdleMinutes * 60_000
  app.decorateRequest('caller', null)
  app.addHook('onRequest', async (request) => {
    const secret = request.cookies[SESSION_COOKIE]
    if (!secret) return
    const session = await store.session(secretHash(secret))
    const now = Date.now()
    if (!session || session.expiresAt.getTime() <= now || session.lastSeenAt.getTime() + idleMs <= now) return
    if (now - session.lastSeenAt.getTime() >= TOUCH_EVERY_MS) await store.touchSession(session.id, new Date(now))
    request.caller = { user: session.user, via: 'session', sessionId: session.id }
  })
}
