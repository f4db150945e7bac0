/**
 * Bearer JWTs from an external identity provider (OpenID Connect style): verified with jose
 * against the configured issuer, audience and JSON Web Key Set; the user is matched, or created,
 * by the token's subject, with the roles of a configured claim.
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose'
import type { JwtConfig } from '../config.js'
import type { Account, Accounts } from '../db/accounts.js'
import { ApiError, invalidToken } from '../errors.js'
import { ROLES } from './roles.js'

/**
 * Asymmetric algorithms only. With `none` a token would carry no signature; with HMAC a public
 * key would serve as the shared secret, and anyone holding it could sign (the classic confusion).
 */
export const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']

/** Seconds a client waits before retrying when the key set cannot be fetched. */
const JWKS_RETRY_AFTER = 30

/** Three base64url parts: a compact JWS, as opposed to one of this service's own tokens. */
export const looksLikeJwt = (value: string): boolean => /^[\w-]+\.[\w-]+\.[\w-]*$/.test(value)

export type VerifyJwt = (token: string) => Promise<Account>

/** The key set could not be had: the provider's problem, not the caller's (503, not 401). */
function keySetUnavailable(error: unknown): boolean {
  if (!(error instanceof errors.JOSEError)) return true
  return error instanceof errors.JWKSTimeout || error.code === 'ERR_JOSE_GENERIC'
}

/**
 * The roles the configured claim lists, among those the service knows (a provider's others, such
 * as Keycloak's `offline_access`, mean nothing here). A claim named as it is wins (Auth0's
 * `https://shop.example/roles`); otherwise dots reach into objects (Keycloak's `realm_access.roles`).
 */
function rolesOf(payload: JWTPayload, claim: string): string[] {
  const value =
    claim in payload
      ? payload[claim]
      : claim.split('.').reduce<unknown>((at, key) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined), payload)
  return Array.isArray(value) ? ROLES.filter((role) => value.includes(role)) : []
}

/** Two lists of distinct roles with the same members. */
const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((role) => b.includes(role))

export function jwtVerifier(config: JwtConfig, store: Accounts): VerifyJwt {
  const jwks = createRemoteJWKSet(new URL(config.jwksUrl), { cooldownDuration: config.jwksCooldownMs })
  return async (token) => {
    let payload: JWTPayload
    try {
      ;({ payload } = await jwtVerify(token, jwks, { issuer: config.issuer, audience: config.audience, algorithms: JWT_ALGORITHMS, requiredClaims: ['sub', 'exp'] }))
    } catch (error) {
      if (keySetUnavailable(error)) {
        throw new ApiError('SERVICE_UNAVAILABLE', 'The identity provider\'s keys cannot be fetched right now; try again later.', [], {
          cause: error,
          headers: { 'retry-after': String(JWKS_RETRY_AFTER) },
        })
      }
      throw invalidToken(`The bearer token is not valid: ${(error as Error).message}`)
    }
    const subject = payload.sub!
    if (subject.length > 255) throw invalidToken('The bearer token is not valid: its subject is too long.')
    const roles = rolesOf(payload, config.rolesClaim)
    const email = typeof payload.email === 'string' && payload.email_verified !== false ? payload.email.toLowerCase().slice(0, 254) : undefined
    const name = typeof payload.name === 'string' && payload.name.trim() ? payload.name.trim().slice(0, 120) : subject.slice(0, 120)
    const user = await store.ensureExternal({ subject, email, name, roles })
    // The provider decides the roles: its token's, kept on the row for the tokens this user issues.
    if (!same(roles, user.roles)) await store.setRoles(user.id, roles)
    return { ...user, roles }
  }
}
