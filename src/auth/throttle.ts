/**
 * Throttling failed sign-ins (OWASP Authentication: "Login Throttling"): after `limit` failures
 * for one key (an account, an address) within a window, further attempts for that key are
 * refused until the window ends, right password or not. Kept in memory: each instance counts its
 * own attempts, which bounds a guesser to `limit` per instance per window.
 */
export interface Throttle {
  /** Seconds until `key` may try again; 0 when it may now. */
  retryAfter(key: string): number
  fail(key: string): void
  clear(key: string): void
}

/** Entries kept before expired ones are swept, so a spray of keys cannot grow memory without bound. */
const SWEEP_AT = 10_000

export function createThrottle(limit: number, windowMs: number, now: () => number = Date.now): Throttle {
  const failures = new Map<string, { count: number; until: number }>()
  const live = (key: string) => {
    const entry = failures.get(key)
    if (entry && entry.until <= now()) {
      failures.delete(key)
      return undefined
    }
    return entry
  }
  return {
    retryAfter(key) {
      const entry = live(key)
      return entry && entry.count >= limit ? Math.ceil((entry.until - now()) / 1000) : 0
    },
    fail(key) {
      const entry = live(key)
      if (entry) entry.count += 1
      else failures.set(key, { count: 1, until: now() + windowMs })
      if (failures.size > SWEEP_AT) for (const [k, e] of failures) if (e.until <= now()) failures.delete(k)
    },
    clear(key) {
      failures.delete(key)
    },
  }
}
