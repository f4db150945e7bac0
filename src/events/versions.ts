/**
 * What this instance knows of the collections' versions, from the event tail (DESIGN "Reading":
 * revalidation costs no query). Every committed write has its events, so a list read at log
 * version V (LOG_VERSION) is still current while the tail has read no event of the collections it
 * shows after V. The tail reads every TAIL_EVERY_MS: a write on another instance is seen within
 * that. A write on this one is seen at once: until a read of the tail that began after it has
 * ended, nothing counts as unchanged.
 */
import { isAfter, type Position } from '../db/events.js'
import type { Tailer } from './tailer.js'

export interface CollectionVersions {
  /** Starts following the log (the first list read does); until it has, nothing counts as unchanged. */
  follow(): void
  /**
   * Whether, as far as this instance knows, no event of these collections came after `version`;
   * `written`: the xmax after the caller's last write (src/http/read-your-writes.ts), which the
   * tail must have read past.
   */
  unchanged(version: Position, collections: readonly string[], written?: bigint): boolean
  /** A write of this instance has committed (its answer is being sent). */
  wrote(): void
}

export function collectionVersions(tailer: Tailer, onError: (error: unknown) => void): CollectionVersions {
  /** The newest event read of each collection, since `since`. */
  const newest = new Map<string, Position>()
  let since: Position | undefined
  let horizon = 0n
  let caughtUpAt = -Infinity
  let wroteAt = -Infinity
  let following = false
  return {
    follow() {
      if (following) return
      following = true
      const subscriber = {
        position: { tx: 0n, id: 0 },
        filter: { types: [], prefixes: [], collections: [] },
        deliver: (event: { position: Position; collection: string }) => void newest.set(event.collection, event.position),
        caughtUp(startedAt: number, readTo: bigint) {
          caughtUpAt = startedAt
          horizon = readTo
        },
      }
      tailer.follow(subscriber).then(
        () => (since = subscriber.position),
        (error: unknown) => {
          following = false
          onError(error)
        },
      )
    },
    unchanged(version, collections, written) {
      // Events before the tail began are unknown here; so is a write of this instance not read
      // yet, and one of the caller's on another instance.
      if (!since || isAfter(since, version) || wroteAt >= caughtUpAt || (written !== undefined && written > horizon)) return false
      return collections.every((collection) => {
        const last = newest.get(collection)
        return last === undefined || !isAfter(last, version)
      })
    },
    wrote() {
      wroteAt = performance.now()
    },
  }
}
