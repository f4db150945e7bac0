/**
 * Rate limits per caller (DESIGN "Limits and faults"): requests per minute, by user when signed
 * in and by address otherwise, counted in src/http/counters.ts (Redis when configured, so the
 * limit is the service's, not an instance's). Every answer says where the caller stands with the
 * IETF draft's fields (draft-ietf-httpapi-ratelimit-headers-10 §3-4): `RateLimit-Policy` and
 * `RateLimit`; beyond the quota, 429 with Retry-After (RFC 6585 §4).
 */
import { innerRequest } from './inner-requests.js'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { LimitsConfig } from '../config.js'
import { ApiError } from '../errors.js'
import { addressMatcher } from './address-list.js'
import type { Count, Counters } from './counters.js'
import { isProbe } from './health.js'

/** The window every quota is counted in. */
export const RATE_WINDOW_SECONDS = 60
const WINDOW_MS = RATE_WINDOW_SECONDS * 1000

interface Policy {
  quota: number
  /** The RateLimit-Policy field, computed once. */
  header: string
}

const policyOf = (quota: number): Policy => ({ quota, header: `"default";q=${quota};w=${RATE_WINDOW_SECONDS}` })

/** Sets the fields and refuses the request when the count is past the quota; `t` never rounds to 0. */
function settle(policy: Policy, { count, resetMs }: Count, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const reset = Math.max(1, Math.ceil(resetMs / 1000))
  reply.header('ratelimit-policy', policy.header)
  reply.header('ratelimit', `"default";r=${Math.max(0, policy.quota - count)};t=${reset}`)
  if (count <= policy.quota) return done()
  // RL §6: Retry-After is never earlier than the reset the RateLimit field gives.
  done(new ApiError('RATE_LIMITED', `Too many requests: ${policy.quota} a minute are allowed; try again in ${reset} s.`, [], { headers: { 'retry-after': String(reset) } }))
}

/**
 * An onRequest hook after the caller is known (src/auth/caller.ts) and before anything else
 * looks at the request: a 429 comes before a 401 or a 404 (the order of checks), and a guesser
 * of tokens is counted by address.
 */
export function installRateLimit(app: FastifyInstance, limits: LimitsConfig['rateLimit'], counters: Counters): void {
  const anonymous = policyOf(limits.anonymous)
  const authenticated = policyOf(limits.authenticated)
  const exempt = addressMatcher(limits.exempt)
  app.addHook('onRequest', (request: FastifyRequest, reply, done) => {
    const policy = request.caller ? authenticated : anonymous
    // Health probes come every few seconds from the orchestrator; they are not the API's traffic.
    // No quota applies to an exempt address, so its answers carry no RateLimit fields either.
    if (policy.quota === 0 || isProbe(request.url) || exempt(request.ip)) return done()
    const key = request.caller ? `rate:user:${request.caller.user.id}` : `rate:address:${request.ip}`
    // A batch's operations count one each, also when several are sent as one request.
    const counted = counters.hit(key, WINDOW_MS, innerRequest()?.operations ?? 1)
    if (counted instanceof Promise) counted.then((count) => settle(policy, count, reply, done), done)
    else settle(policy, counted, reply, done)
  })
}
