/**
 * What this instance knows of the collections' versions, from the event tail (DESIGN "Reading":
 * revalidation costs no query). Every committed write has its events, and the tail has read
 * every event of the transactions below its horizon. A page read after the tail reached horizon
 * H holds every change of those transactions; it is still current while the tail has read no
 * event of the collections it shows from a transaction at or above H. The tail reads every
 * TAIL_EVERY_MS: another instance's write is seen within that. A write on this one is seen at
 * once: until a read of the tail that began after it has ended, nothing counts as unchanged.
 */
import type { Position } from '../db/events.js'
import type { CollectionVersions, ReadTo } from '../resources/revalidation.js'
import type { Tailer } from './tailer.js'

/** The tail's last catch-ups kept for pages read on a replica that lags: two seconds of them. */
const KEPT = 8

export function collectionVersions(tailer: Tailer, onError: (error: unknown) => void): CollectionVersions {
  /** The newest transaction of each collection's events read since `since`. */
  const newest = new Map<string, bigint>()
  let since: Position | undefined
  /** The last catch-ups, oldest first. */
  let reads: ReadTo[] = []
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
        deliver(event: { position: Position; collection: string }) {
          const last = newest.get(event.collection)
          if (last === undefined || event.position.tx > last) newest.set(event.collection, event.position.tx)
        },
        caughtUp(startedAt: number, horizon: bigint, lsn: bigint) {
          caughtUpAt = startedAt
          if (reads.at(-1)?.horizon !== horizon) reads = [...reads.slice(1 - KEPT), { horizon, lsn }]
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
    readTo(replayed) {
      for (let i = reads.length - 1; i >= 0; i--) if (reads[i]!.lsn <= replayed) return reads[i]
      return undefined
    },
    unchanged(horizon, collections, written) {
      // The tail knows the events after `since`: those of transactions above its own. A write of
      // this instance the tail has not read yet, or the caller's on another instance, is unknown.
      const last = reads.at(-1)
      if (!since || !last || horizon <= since.tx || wroteAt >= caughtUpAt) return false
      if (written !== undefined && written > last.horizon) return false
      return collections.every((collection) => (newest.get(collection) ?? 0n) < horizon)
    },
    wrote() {
      wroteAt = performance.now()
    },
  }
}
