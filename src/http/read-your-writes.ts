/**
 * A caller reads their own writes (DESIGN "Scale"), on every instance. After a write, where the
 * primary stood (src/db/write-positions.ts) is kept for the caller where the rate limits are
 * counted (Redis when set), before the answer leaves. Their reads then go to a replica only once
 * it has replayed that far (Database.readsAfter), and a list's 304 without its query only once
 * this instance's event tail has read that far (src/resources/revalidation.ts). Anyone else's
 * reads are served as before: by any replica, within its lag.
 *
 * Kept only where another server could answer the next read: with replicas, or with several
 * instances (REDIS_URL). One instance on its own knows its writes (CollectionVersions.wrote) and
 * reads the primary.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { NEVER_BEHIND, type Database, type Statements } from '../db/client.js'
import { writePosition, type WritePosition } from '../db/write-positions.js'
import type { Counters } from './counters.js'
import { innerRequest } from './inner-requests.js'
import { SAFE_METHODS } from './methods.js'

/** How long a write position is kept: a replica further behind than this is one to repair, not to wait for. */
const KEPT_MS = 5 * 60_000

export interface ReadYourWrites {
  /** The caller's last write kept, if any; undefined at once when none can be kept for this caller. */
  lastWrite(request: FastifyRequest): Promise<WritePosition | undefined> | undefined
  /** Where the request's reads may run: db.replica, unless the caller's last write is not on it yet. */
  reads(request: FastifyRequest): Statements | Promise<Statements>
  /**
   * Where a list's page is read, and the newest of the points `readTo` knows (how far the event
   * tail had read: src/events/versions.ts) that the place has every change of: on a replica, one
   * it has replayed; on the primary, the newest.
   */
  pageReads<T extends { lsn: bigint }>(request: FastifyRequest, readTo: (replayed: bigint) => T | undefined): Promise<{ on: Statements; at: T | undefined }>
}


const keyOf = (userId: string) => `written:${userId}`
// Compared as strings by Counters.keepGreatest: the log position first, at a fixed width.
const encode = ({ lsn, xmax }: WritePosition) => `${lsn.toString(16).padStart(16, '0')}:${xmax}`
const decode = (text: string): WritePosition => {
  const [lsn, xmax] = text.split(':')
  return { lsn: BigInt(`0x${lsn}`), xmax: BigInt(xmax!) }
}

export function installReadYourWrites(app: FastifyInstance, db: Database, counters: Counters, shared: boolean): ReadYourWrites {
  if (db.kind !== 'postgres' || !(shared || db.replicated)) {
    return {
      lastWrite: () => undefined,
      reads: () => db.replica,
      // No replicas: every read sees what the primary has.
      pageReads: async (_request, readTo) => ({ on: db.replica, at: readTo(NEVER_BEHIND) }),
    }
  }
  app.addHook('onSend', async (request, reply, payload) => {
    const { caller } = request
    // A batch's operations have not committed yet: the batch's own request keeps the position.
    if (caller && !SAFE_METHODS.has(request.method) && reply.statusCode < 400 && !innerRequest()) {
      try {
        await counters.keepGreatest(keyOf(caller.user.id), encode(await writePosition(db)), KEPT_MS)
      } catch (error) {
        // The write has committed: its answer stands. The caller's next reads may lag it.
        request.log.warn({ err: error }, 'could not keep the position of a write for its caller')
      }
    }
    return payload
  })
  // One lookup per request, however many of its steps ask.
  const looked = new WeakMap<FastifyRequest, Promise<WritePosition | undefined>>()
  const lastWrite = (request: FastifyRequest) => {
    const { caller } = request
    if (!caller) return undefined
    let found = looked.get(request)
    if (!found) looked.set(request, (found = counters.kept(keyOf(caller.user.id)).then((kept) => (kept === undefined ? undefined : decode(kept)))))
    return found
  }
  return {
    lastWrite,
    async reads(request) {
      const last = db.replicated ? await lastWrite(request) : undefined
      return last ? db.readsAfter(last.lsn) : db.replica
    },
    async pageReads(request, readTo) {
      if (!db.replicated) return { on: db.replica, at: readTo(NEVER_BEHIND) }
      const last = await lastWrite(request)
      const replayed = db.replayed()
      // The caller's last write is on no replica yet: the primary, which has everything.
      if (last && last.lsn > replayed) return { on: db, at: readTo(NEVER_BEHIND) }
      const at = readTo(replayed)
      const needed = [last?.lsn ?? 0n, at?.lsn ?? 0n].reduce((a, b) => (a > b ? a : b))
      return { on: needed > 0n ? db.readsAfter(needed) : db.replica, at }
    },
  }
}
