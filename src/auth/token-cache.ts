/**
 * Bearer tokens looked up once a second per instance, not once a request: the lookup was a round
 * trip on every authenticated request, a write's included (docs/performance.md). A token revoked
 * or expired, or whose user lost a role or was deleted, stops working on every instance within
 * TOKEN_CACHE_MS; on the instance that revoked it, at once (docs/decisions.md).
 */
import type { Accounts } from '../db/accounts.js'

/** How long a token's lookup is used again. */
export const TOKEN_CACHE_MS = 1000
/** Tokens kept at most; past it the cache starts over, so that many callers cannot grow it without bound. */
const MAX_TOKENS = 10_000

type Found = NonNullable<Awaited<ReturnType<Accounts['token']>>>

export interface CachingAccounts extends Accounts {
  /** Forgets every token looked up: a user was changed or deleted here, and their tokens with them. */
  forgetTokens(): void
}

/** `store`, with its token lookups reused for `ttlMs` by the clock `now`. */
export function cachingTokens(store: Accounts, ttlMs = TOKEN_CACHE_MS, now: () => number = Date.now): CachingAccounts {
  const cache = new Map<string, { token: Found; until: number }>()
  return {
    ...store,
    forgetTokens: () => cache.clear(),
    async token(secretHash) {
      const at = now()
      const kept = cache.get(secretHash)
      if (kept && kept.until > at) return kept.token
      const token = await store.token(secretHash)
      // An unknown token is not kept: one created a moment ago on another instance works here at once.
      if (!token) return void cache.delete(secretHash)
      if (cache.size >= MAX_TOKENS) cache.clear()
      cache.set(secretHash, { token, until: at + ttlMs })
      return token
    },
    async deleteToken(userId, id) {
      const deleted = await store.deleteToken(userId, id)
      // Revocations are rare: forgetting every token is simpler than finding this one's secret.
      if (deleted) cache.clear()
      return deleted
    },
    async setRoles(id, roles) {
      await store.setRoles(id, roles)
      cache.clear()
    },
  }
}
