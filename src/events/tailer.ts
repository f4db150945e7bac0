/**
 * One tail of the event log per instance, fanned out to its open streams (DESIGN "Events") and
 * to the collections' versions (src/events/versions.ts). It reads what is new at most every
 * TAIL_EVERY_MS while a stream is open or once something follows it for good, and keeps the last
 * events it read, so that a stream that has caught up from the table joins without a gap: it gets
 * what the tail read after its own position, then every new batch.
 */
import { unshared } from '../db/shared-transaction.js'
import { isAfter, type EventLog, type EventQuery, type Position, type StoredEvent } from '../db/events.js'

/** How often the tail reads the log while a stream is open: an event reaches a stream within this. */
export const TAIL_EVERY_MS = 250
/** Events the tail reads at once. */
const BATCH = 500
/** Recent events kept for streams that join; one that is further behind catches up from the table. */
const KEPT = 2000

export type EventFilter = Pick<EventQuery, 'types' | 'prefixes' | 'collections'>

export interface Subscriber {
  /** The last event it has, moved forward by `deliver`. */
  position: Position
  filter: EventFilter
  deliver(event: StoredEvent): void
  /**
   * Told after each read that reached the end of the log: it began at `startedAt`
   * (performance.now()) and has read every event of the transactions below `read.horizon`
   * (EventLog.horizon: with where the primary's log stood then, and the next transaction id).
   */
  caughtUp?(startedAt: number, read: { horizon: bigint; lsn: bigint; xmax: bigint }): void
}

export const matches = (filter: EventFilter, event: StoredEvent): boolean =>
  (filter.types.length === 0 && filter.prefixes.length === 0 ? true : filter.types.includes(event.type) || filter.prefixes.includes(event.collection)) &&
  (filter.collections.length === 0 || filter.collections.includes(event.collection))

function send(subscriber: Subscriber, event: StoredEvent): void {
  if (!isAfter(event.position, subscriber.position)) return
  subscriber.position = event.position
  if (matches(subscriber.filter, event)) subscriber.deliver(event)
}

export interface Tailer {
  /**
   * Adds a subscriber that has read the table up to its position, with what the tail read since;
   * false when the tail's kept events do not reach back that far (read the table again first).
   */
  join(subscriber: Subscriber): Promise<boolean>
  leave(subscriber: Subscriber): void
  /**
   * Starts the tail if it is not running and delivers it every event from the tail's position
   * on, for as long as the service runs: the tail no longer stops when the last stream leaves.
   * Resolves with the transaction id from which the subscriber gets every event (undefined when
   * the service closed meanwhile).
   */
  follow(subscriber: Subscriber): Promise<bigint | undefined>
  close(): void
  /** The last event the tail has read; undefined while it is not running (no stream open): the metrics' event lag. */
  readonly position: Position | undefined
}

export function createTailer(log: EventLog, onError: (error: unknown) => void): Tailer {
  const subscribers = new Set<Subscriber>()
  /** Where the kept events begin (exclusive) and end. */
  let from: Position | undefined
  let position: Position | undefined
  let kept: StoredEvent[] = []
  let timer: NodeJS.Timeout | undefined
  let starting: Promise<void> | undefined
  let reading = false
  /** Something follows the tail for good (`follow`): it runs without streams. */
  let followed = false
  /** The horizon the tail started at: every event of a transaction at or above it comes after `from`. */
  let startHorizon = 0n
  /** Moves on each stop: a read or a start that resumes after it belongs to a tail that is gone. */
  let generation = 0

  async function read(): Promise<void> {
    if (reading || !position) return
    reading = true
    const current = generation
    const startedAt = performance.now()
    try {
      for (;;) {
        const now = await log.horizon()
        const batch = await log.page({ after: position, types: [], prefixes: [], collections: [], limit: BATCH }, now.horizon)
        if (current !== generation) break
        const read = { ...now, horizon: BigInt(now.horizon) }
        if (batch.length === 0) {
          for (const subscriber of subscribers) subscriber.caughtUp?.(startedAt, read)
          break
        }
        position = batch.at(-1)!.position
        kept.push(...batch)
        if (kept.length > KEPT) {
          from = kept[kept.length - KEPT - 1]!.position
          kept = kept.slice(-KEPT)
        }
        for (const subscriber of subscribers) {
          for (const event of batch) send(subscriber, event)
          if (batch.length < BATCH) subscriber.caughtUp?.(startedAt, read)
        }
        if (batch.length < BATCH) break
      }
    } catch (error) {
      onError(error)
    } finally {
      reading = false
    }
  }

  function stop(): void {
    generation += 1
    clearInterval(timer)
    timer = undefined
    from = position = undefined
    kept = []
  }

  /** Starts the tail at the log's end, once; whoever asks meanwhile waits for it. */
  async function start(): Promise<void> {
    if (position) return
    const current = generation
    // Started by whichever request asks first, maybe an operation of a batch: its reads run
    // outside the batch's transaction, now and on every tick after.
    starting ??= unshared(() =>
      log
        .end()
        .then((end) => {
          if (current !== generation) return
          position = from = end.position
          startHorizon = end.horizon
          timer = setInterval(() => void read(), TAIL_EVERY_MS).unref()
        })
        .finally(() => (starting = undefined)),
    )
    await starting
  }

  return {
    async join(subscriber) {
      // The first stream starts the tail at the log's end.
      await start()
      // Stopped meanwhile (the service is closing): the stream catches up again, or ends.
      if (!position) return false
      if (isAfter(from!, subscriber.position)) return false
      for (const event of kept) send(subscriber, event)
      subscribers.add(subscriber)
      return true
    },
    leave(subscriber) {
      subscribers.delete(subscriber)
      // Nobody listening: no reads, and a later stream starts the tail afresh.
      if (subscribers.size === 0 && !followed) stop()
    },
    async follow(subscriber) {
      followed = true
      await start()
      if (!position) return undefined
      subscriber.position = position
      subscribers.add(subscriber)
      // Events after the position: all of the transactions above its own, and at or above the start's horizon.
      return position.tx + 1n > startHorizon ? position.tx + 1n : startHorizon
    },
    close() {
      subscribers.clear()
      followed = false
      stop()
    },
    get position() {
      return position
    },
  }
}
