/**
 * Throttling failed sign-ins (OWASP Authentication: "Login Throttling"): after `limit` failures
 * for one key (an account, an address) within a window, further attempts for that key are
 * refused until the window ends, right password or not. Counted where the rate limits are: in
 * Redis when REDIS_URL is set, so a guesser gets `limit` tries in all, not `limit` per instance.
 */
import type { Counters } from '../http/counters.js'

export interface Throttle {
  /** Seconds until `key` may try again; 0 when it may now. */
  retryAfter(key: string): Promise<number>
  fail(key: string): Promise<void>
  clear(key: string): Promise<void>
}

/** `name` keeps this throttle's keys apart from other counters'. */
export function createThrottle(counters: Counters, name: string, limit: number, windowMs: number): Throttle {
  const keyOf = (key: string) => `throttle:${name}:${key}`
  return {
    async retryAfter(key) {
      const count = await counters.peek(keyOf(key))
      return count && count.count >= limit ? Math.ceil(count.resetMs / 1000) : 0
    },
    async fail(key) {
      await counters.hit(keyOf(key), windowMs)
    },
    clear: (key) => counters.reset(keyOf(key)),
  }
}
