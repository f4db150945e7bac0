/**
 * Counters in fixed windows, for rate limits and sign-in throttling: in memory for one instance,
 * or in Redis (REDIS_URL) so that every instance counts against the same numbers. A window starts
 * with its key's first hit and lasts `windowMs`; the count and the time left come back together.
 */
import { Redis } from 'ioredis'

export interface Count {
  /** Hits in the current window, this one included. */
  count: number
  /** Milliseconds until the window ends and the count starts again. */
  resetMs: number
}

export interface Counters {
  /** Counts `hits` (one by default) on `key`; in memory the answer is immediate, in Redis it is a promise. */
  hit(key: string, windowMs: number, hits?: number): Count | Promise<Count>
  /** The current window of `key` without counting, if it has one. */
  peek(key: string): Promise<Count | undefined>
  /** Forgets `key` (a successful sign-in clears its failures). */
  reset(key: string): Promise<void>
  /**
   * Keeps `value` under `key` for `ttlMs` unless a greater one (compared as strings) is kept:
   * the newest of a caller's write positions (src/http/read-your-writes.ts), whatever order its
   * writes end in.
   */
  keepGreatest(key: string, value: string, ttlMs: number): Promise<void>
  /** The value keepGreatest keeps under `key`, if any. */
  kept(key: string): Promise<string | undefined>
  /** Settles once the store has connected or failed to (Redis); the service starts after it. */
  connected?(): Promise<void>
  close(): Promise<void>
}

/** Entries kept before expired ones are swept, so a spray of keys cannot grow memory without bound. */
const SWEEP_AT = 10_000
/** At most one sweep a second: with more live keys than SWEEP_AT, a sweep per new key would be quadratic. */
const SWEEP_EVERY_MS = 1000

export function memoryCounters(now: () => number = Date.now): Counters {
  const windows = new Map<string, { count: number; endsAt: number }>()
  const values = new Map<string, { value: string; endsAt: number }>()
  let sweptAt = 0
  let valuesSweptAt = 0
  const live = (key: string, at: number) => {
    const window = windows.get(key)
    if (window && window.endsAt <= at) {
      windows.delete(key)
      return undefined
    }
    return window
  }
  return {
    hit(key, windowMs, hits = 1) {
      const at = now()
      let window = live(key, at)
      if (window) window.count += hits
      else {
        if (windows.size >= SWEEP_AT && at - sweptAt >= SWEEP_EVERY_MS) {
          sweptAt = at
          for (const [k, w] of windows) if (w.endsAt <= at) windows.delete(k)
        }
        window = { count: hits, endsAt: at + windowMs }
        windows.set(key, window)
      }
      return { count: window.count, resetMs: window.endsAt - at }
    },
    async peek(key) {
      const at = now()
      const window = live(key, at)
      return window && { count: window.count, resetMs: window.endsAt - at }
    },
    async reset(key) {
      windows.delete(key)
    },
    async keepGreatest(key, value, ttlMs) {
      const at = now()
      const kept = values.get(key)
      if (kept && kept.endsAt > at && kept.value >= value) return
      if (values.size >= SWEEP_AT && at - valuesSweptAt >= SWEEP_EVERY_MS) {
        valuesSweptAt = at
        for (const [k, v] of values) if (v.endsAt <= at) values.delete(k)
      }
      values.set(key, { value, endsAt: at + ttlMs })
    },
    async kept(key) {
      const kept = values.get(key)
      return kept && kept.endsAt > now() ? kept.value : undefined
    },
    async close() {
      windows.clear()
      values.clear()
    },
  }
}

/** INCRBY and, on a window's first hit, its expiry; then the time left. One round trip, atomic. */
const HIT_SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}`

/** SET with an expiry unless the value kept is greater (compared as strings). One round trip, atomic. */
const KEEP_GREATEST_SCRIPT = `
local kept = redis.call('GET', KEYS[1])
if (not kept) or kept < ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 1`

/** Longest wait for Redis before a hit is counted in memory instead. */
const REDIS_TIMEOUT_MS = 500

export interface RedisCountersOptions {
  url: string
  /** Prepended to every key, so that services sharing a Redis keep apart (REDIS_KEY_PREFIX). */
  prefix: string
  /** Told when Redis goes away (true) and comes back (false). */
  onFallback(active: boolean, error?: unknown): void
}

type HitCommand = (key: string, windowMs: number, hits: number) => Promise<[number, number]>
type KeepCommand = (key: string, value: string, ttlMs: number) => Promise<number>

/**
 * Counters in Redis. When Redis cannot be reached, hits are counted in this instance's memory
 * until it answers again: the service keeps serving, with limits that hold per instance meanwhile.
 * Commands fail at once while disconnected (no offline queue) rather than wait for a reconnect.
 */
export function redisCounters({ url, prefix, onFallback }: RedisCountersOptions): Counters {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_TIMEOUT_MS,
    connectTimeout: REDIS_TIMEOUT_MS * 4,
    keyPrefix: prefix,
  })
  redis.defineCommand('rfHit', { numberOfKeys: 1, lua: HIT_SCRIPT })
  redis.defineCommand('rfKeepGreatest', { numberOfKeys: 1, lua: KEEP_GREATEST_SCRIPT })
  const hitCommand = (redis as unknown as { rfHit: HitCommand }).rfHit.bind(redis)
  const keepCommand = (redis as unknown as { rfKeepGreatest: KeepCommand }).rfKeepGreatest.bind(redis)
  const memory = memoryCounters()
  let fallback = false
  const fellBack = (error: unknown) => {
    if (!fallback) onFallback((fallback = true), error)
  }
  // ioredis reconnects by itself; an 'error' event without a listener would end the process.
  redis.on('error', fellBack)
  redis.on('ready', () => {
    if (fallback) onFallback((fallback = false))
  })
  // Commands fail at once until the first connection is up: a service counting its first
  // requests in memory, then in Redis, would count them twice.
  const connected = new Promise<void>((resolve) => {
    redis.once('ready', resolve)
    redis.once('error', () => resolve())
  })
  return {
    connected: () => connected,
    async hit(key, windowMs, hits = 1) {
      try {
        const [count, resetMs] = await hitCommand(key, windowMs, hits)
        return { count, resetMs }
      } catch (error) {
        fellBack(error)
        return memory.hit(key, windowMs, hits)
      }
    },
    async peek(key) {
      try {
        const [count, ttl] = await Promise.all([redis.get(key), redis.pttl(key)])
        return count === null || ttl < 0 ? undefined : { count: Number(count), resetMs: ttl }
      } catch (error) {
        fellBack(error)
        return memory.peek(key)
      }
    },
    async reset(key) {
      await Promise.all([redis.del(key).catch(fellBack), memory.reset(key)])
    },
    async keepGreatest(key, value, ttlMs) {
      // Kept in memory too: while Redis is away, this instance still reads what it was told.
      await Promise.all([keepCommand(key, value, ttlMs).catch(fellBack), memory.keepGreatest(key, value, ttlMs)])
    },
    async kept(key) {
      try {
        const [shared, own] = [await redis.get(key), await memory.kept(key)]
        return shared === null || (own !== undefined && own > shared) ? own : shared
      } catch (error) {
        fellBack(error)
        return memory.kept(key)
      }
    },
    async close() {
      redis.disconnect()
    },
  }
}
