/**
 * Cookie sessions: `POST /sessions` signs in, `GET /sessions/current` shows the caller,
 * `DELETE /sessions/current` signs out. Sessions live in the database, so any instance can
 * verify or end them.
 */
import type { FastifyInstance } from 'fastify'
import { Type, type Static } from 'typebox'
import type { AuthConfig } from '../config.js'
import type { Account, Accounts } from '../db/accounts.js'
import { ApiError, unauthenticated } from '../errors.js'
import { requireBody } from '../http/body-parser.js'
import { requireCaller, SESSION_COOKIE } from './caller.js'
import { verifyPassword } from './passwords.js'
import type { Counters } from '../http/counters.js'
import { requestPath } from '../http/request-target.js'
import { createThrottle, type Throttle } from './throttle.js'
import { newSecret, secretHash } from './secrets.js'
import { StringEnum } from '../json-schema.js'
import { errors, noBody, success } from '../openapi/responses.js'
import { Id, Timestamp } from '../schema-types.js'
import { ROLES } from './roles.js'

const SignIn = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 254 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
)

/** `$id` of a session, a component of each version's document (`#/components/schemas/Session`). */
const SESSION_SCHEMA_ID = 'Session'

// Roles are those the service knows, each once (the users collection's schema; jwt.ts keeps only those).
const User = Type.Object({
  id: Id(),
  email: Type.String(),
  name: Type.String(),
  roles: Type.Array(StringEnum(ROLES), { uniqueItems: true, maxItems: ROLES.length }),
})
const Session = Type.Object({ id: Id(), user: User, created_at: Timestamp(), expires_at: Timestamp() })

const represent = (id: string, user: Account, createdAt: Date, expiresAt: Date) => ({
  id,
  user,
  created_at: createdAt.toISOString(),
  expires_at: expiresAt.toISOString(),
})

/** Failed sign-ins allowed per account and per address in a window, before 429s. */
const ACCOUNT_FAILURES = 5
const ADDRESS_FAILURES = 20
const FAILURE_WINDOW_MS = 15 * 60_000

export interface SignInThrottles {
  account: Throttle
  address: Throttle
}

/** One pair per service, shared by every API version's /sessions. */
export function signInThrottles(counters: Counters): SignInThrottles {
  return {
    account: createThrottle(counters, 'sign-in-account', ACCOUNT_FAILURES, FAILURE_WINDOW_MS),
    address: createThrottle(counters, 'sign-in-address', ADDRESS_FAILURES, FAILURE_WINDOW_MS),
  }
}

/** The session routes on a version's plugin, which gets the Session schema (one per version). */
export function registerSessions(app: FastifyInstance, store: Accounts, config: AuthConfig, throttles: SignInThrottles): void {
  app.addSchema({ ...Session, $id: SESSION_SCHEMA_ID })
  const maxAgeSeconds = config.sessionMaxDays * 86_400
  // HttpOnly: scripts never see it; SameSite=Lax: other sites' forms and fetches do not send it;
  // Path=/api: sent only to the API.
  const cookie = { path: '/api', httpOnly: true, sameSite: 'lax', secure: config.cookieSecure } as const

  const tags = ['sessions']
  const signIn = {
    tags, operationId: 'signIn', summary: 'Sign in: a session cookie for the account', security: [],
    description: 'Anyone may call this. Failed sign-ins are throttled per account and per address (429 with Retry-After); an unknown email and a wrong password get the same answer.',
    body: SignIn,
    response: { 201: success('Signed in; the cookie is set.', Type.Ref(SESSION_SCHEMA_ID), ['Location', 'Set-Cookie']) },
  }
  const current = {
    tags, operationId: 'getSession', summary: 'The session this request was made with', security: [{ session: [] }],
    description: 'A caller with a session cookie: its user and when it expires. A bearer token has no session (404).',
    response: { 200: success('The session.', Type.Ref(SESSION_SCHEMA_ID)) },
  }
  const signOut = {
    tags, operationId: 'signOut', summary: 'Sign out: end the session this request was made with', security: [{ session: [] }],
    description: 'A caller with a session cookie: the session ends at once and the cookie is cleared.',
    response: { 204: noBody('Signed out; the cookie is cleared.', ['Set-Cookie']) },
  }

  app.post<{ Body: Static<typeof SignIn> }>('/sessions', { preValidation: requireBody, schema: signIn, config: { document: { responses: errors([], { unsafe: true, body: true }) } } }, async (request, reply) => {
    const email = request.body.email.trim().toLowerCase()
    const wait = Math.max(...(await Promise.all([throttles.account.retryAfter(email), throttles.address.retryAfter(request.ip)])))
    if (wait > 0) {
      throw new ApiError('RATE_LIMITED', 'Too many failed sign-ins; wait before trying again.', [], { headers: { 'retry-after': String(wait) } })
    }
    const account = await store.byEmail(email)
    // The same work and the same answer for an unknown email and a wrong password.
    const valid = await verifyPassword(request.body.password, account?.passwordHash)
    if (!account || !valid) {
      await Promise.all([throttles.account.fail(email), throttles.address.fail(request.ip)])
      throw unauthenticated('The email or the password is wrong.')
    }
    await throttles.account.clear(email)
    const secret = newSecret('rf_session_')
    const createdAt = new Date()
    const expiresAt = new Date(createdAt.getTime() + maxAgeSeconds * 1000)
    const id = await store.createSession(account.id, secretHash(secret), createdAt, expiresAt)
    reply.setCookie(SESSION_COOKIE, secret, { ...cookie, maxAge: maxAgeSeconds })
    reply.code(201).header('location', `${requestPath(request)}/current`)
    return represent(id, { id: account.id, email: account.email, name: account.name, roles: account.roles }, createdAt, expiresAt)
  })

  app.get('/sessions/current', { schema: current, config: { document: { responses: errors([404]) } } }, async (request) => {
    const caller = requireCaller(request)
    if (caller.via !== 'session') throw new ApiError('NOT_FOUND', 'This request was not made with a session.')
    return represent(caller.session.id, caller.user, caller.session.createdAt, caller.session.expiresAt)
  })

  app.delete('/sessions/current', { schema: signOut, config: { document: { responses: errors([404], { unsafe: true }) } } }, async (request, reply) => {
    const caller = requireCaller(request)
    if (caller.via !== 'session') throw new ApiError('NOT_FOUND', 'This request was not made with a session.')
    await store.deleteSession(caller.session.id)
    reply.clearCookie(SESSION_COOKIE, cookie)
    return reply.code(204).send()
  })
}
