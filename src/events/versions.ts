/**
 * What this instance knows of the collections' versions, from the event tail (DESIGN "Reading":
 * revalidation costs no query). Every committed write has its events, and the tail has read
 * every event of the transactions below its horizon. A page read after the tail reached horizon
 * H holds every change of those transactions; it is still current while the tail has read no
 * event of the collections it shows from a transaction at or above H. The tail reads every
 * TAIL_EVERY_MS: another instance's write is seen within that. A write on this one is seen at
 * once: nothing counts as unchanged until the tail has read past it.
 */
import type { Position } from '../db/events.js'
import type { CollectionVersions, ReadTo } from '../resources/revalidation.js'
import type { Tailer } from './tailer.js'

/** The tail's last catch-ups kept for pages read on a replica that lags: two seconds of them. */
const KEPT = 8
/** A tail that has not caught up for this long (its reads fail, or hang) is not trusted. */
const STALE_AFTER_MS = 2000

export function collectionVersions(tailer: Tailer, onError: (error: unknown) => void): CollectionVersions {
  /** The newest transaction of each collection's events read since the tail was followed. */
  const newest = new Map<string, bigint>()
  /** The tail delivers every event of a transaction from this one on; undefined until it is followed. */
  let knownFrom: bigint | undefined
  /** The last catch-ups, oldest first. */
  let reads: ReadTo[] = []
  let caughtUpAt = -Infinity
  /** A write of this instance the tail has not been asked about yet, and the horizon that holds every one so far. */
  let wroteAt: number | undefined
  let writesBelow = 0n
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
        caughtUp(startedAt: number, read: { horizon: bigint; lsn: bigint; xmax: bigint }) {
          caughtUpAt = startedAt
          // A read that began after this instance's last write: that write's transaction is below
          // the read's xmax, and read once the horizon has passed it (an older transaction still
          // open can hold the horizon back).
          if (wroteAt !== undefined && startedAt > wroteAt) {
            wroteAt = undefined
            if (read.xmax > writesBelow) writesBelow = read.xmax
          }
          if (reads.at(-1)?.horizon !== read.horizon) reads = [...reads.slice(1 - KEPT), { horizon: read.horizon, lsn: read.lsn }]
        },
      }
      tailer.follow(subscriber).then(
        (from) => (knownFrom = from),
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
      const last = reads.at(-1)
      // The tail knows the events from `knownFrom` on, as of its last read, if that is recent. A
      // write of this instance it has not read yet, or the caller's on another instance, is unknown.
      if (knownFrom === undefined || !last || horizon < knownFrom || performance.now() - caughtUpAt > STALE_AFTER_MS) return false
      if (wroteAt !== undefined || last.horizon < writesBelow || (written !== undefined && written > last.horizon)) return false
      return collections.every((collection) => (newest.get(collection) ?? 0n) < horizon)
    },
    wrote() {
      wroteAt = performance.now()
    },
  }
}
