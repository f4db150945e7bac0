/** The events table: appended in a change's transaction, read by the change feed, pruned by age. */
import { lsnOf, type Database, type Statements, type Transaction } from './client.js'

/** The table every write announces itself on (TransactionOptions.announce). */
export const EVENTS_TABLE = 'events'

/** An event about to be written with its change. */
export interface EventDraft {
  /** `<collection>.<action>`: `products.created`, `orders.status_changed`. */
  type: string
  collection: string
  itemId: string
  /** The user who made the change; null when nobody was signed in (a registration). */
  actorId: string | null
  /** The item's row as written: its columns by their names in the database, as JSON. */
  item: Record<string, unknown>
  /** What the event adds to the item: a move's `from` and `to`. */
  data: Record<string, unknown>
}

/**
 * An event's data as a reader gets it: the stored row of `collection` rendered as the service
 * shows it now, with the event's own data over it. An event stored without a row (written before
 * rows were kept) has its representation in `data`, returned as it is.
 */
export type RenderEvent = (collection: string, item: Record<string, unknown> | null, data: Record<string, unknown>) => Record<string, unknown>

/** Where an event stands in the feed: its transaction, then its id (see PAGE). */
export interface Position {
  tx: bigint
  id: number
}

/** The position before every event. */
export const START: Position = { tx: 0n, id: 0 }

export const isAfter = (a: Position, b: Position): boolean => a.tx > b.tx || (a.tx === b.tx && a.id > b.id)

export interface StoredEvent {
  /** The event's position; not part of its representation. */
  position: Position
  id: number
  type: string
  collection: string
  item_id: string
  occurred_at: string
  actor_id: string | null
  data: Record<string, unknown>
}

export interface EventQuery {
  /** Events after this position. */
  after: Position
  /** Exact types, and prefixes of `<collection>.*`; empty: every type. */
  types: readonly string[]
  prefixes: readonly string[]
  collections: readonly string[]
  limit: number
}

/**
 * One statement for any number of drafts: they arrive as one JSON array. `tx` and `occurred_at`
 * are the transaction's, from their column defaults.
 */
const APPEND = `INSERT INTO events (type, collection, item_id, actor_id, item, data)
  SELECT e.type, e.collection, e.item_id, e.actor_id, e.item, e.data
    FROM jsonb_to_recordset($1::jsonb) AS e(type text, collection text, item_id uuid, actor_id uuid, item jsonb, data jsonb)`

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`

/**
 * The parameter `$remaining` of eventsOf: the milliseconds left until `deadline` (epoch ms), taken
 * when the statement is sent rather than when it is queued. node-postgres reads it (`toPostgres`)
 * once the statement has a connection, PGlite (`toString`) once it has the database, so a wait for
 * a pooled connection or for PGlite's one connection counts against the request's time. Taken
 * earlier, a statement that waited for a connection, then for a lock, could commit after its
 * request was answered 503 (found by test/limits/database-faults.test.ts under load).
 */
export function timeLeft(deadline: number): unknown {
  const left = () => String(deadline - Date.now())
  return { toPostgres: left, toString: left }
}

/**
 * The INSERT of the events of a change made in the same statement: one per row of the CTE
 * `source`, which returns the changed rows with their columns' names; the actor is parameter
 * `$actor`, and `$remaining` the milliseconds the statement has before the request's time runs
 * out (`in_time`, the migration "one_statement_writes"): checked once the change has its rows, after
 * any wait for their locks. Within one statement the lock on the events table is taken before it
 * writes anything, so before its transaction has an id: the horizon (below) sees it as it sees an
 * announced transaction.
 */
export function eventsOf(source: string, header: { type: string; collection: string }, actor: number, remaining: number): string {
  return `INSERT INTO events (type, collection, item_id, actor_id, item)
    SELECT ${literal(header.type)}, ${literal(header.collection)}, ${source}.id, $${actor}::uuid, to_jsonb(${source}) FROM ${source} WHERE in_time($${remaining})`
}

/**
 * The feed's visibility horizon, read before the page's snapshot is taken (a statement of its
 * own): below it, every transaction that wrote events has ended. The trap of every PostgreSQL
 * feed: ids are taken at insert but seen at commit, so `id > after` skips the event of a slower
 * transaction. Here events are read in the order of their transactions' ids, (tx, id), and only
 * below the smallest id of a transaction still writing events, which every write announces by
 * locking the table as it begins (src/resources/write-handlers.ts); a transaction that begins
 * later gets an id above this snapshot's xmax. A writer's id is read from pg_stat_activity, which
 * has it as soon as the snapshot does (its transaction lock may not be in pg_locks yet). So a
 * reader resuming after its last event never skips one, and a long transaction elsewhere in the
 * cluster (another database) holds nothing up.
 */
const HORIZON = `SELECT least(
    pg_snapshot_xmax(pg_current_snapshot()),
    (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
      WHERE x::xid IN (SELECT a.backend_xid FROM pg_locks e JOIN pg_stat_activity a USING (pid)
                        WHERE e.locktype = 'relation' AND e.relation = 'events'::regclass AND e.granted
                          AND e.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                          AND a.backend_xid IS NOT NULL))
  )::text AS horizon`

// ORDER BY names the table's columns: a bare `tx, id` would sort the text of the output columns (10 before 9).
const PAGE = `SELECT tx::text AS tx, id::text AS id, type, collection, item_id, occurred_at, actor_id, item, data
    FROM events
   WHERE tx < $6::xid8
     AND (tx, id) > ($1::text::xid8, $7::bigint)
     AND (cardinality($2::text[]) = 0 AND cardinality($3::text[]) = 0 OR type = ANY($2::text[]) OR split_part(type, '.', 1) = ANY($3::text[]))
     AND (cardinality($4::text[]) = 0 OR collection = ANY($4::text[]))
   ORDER BY events.tx, events.id
   LIMIT $5`

/**
 * The log's retention, in one statement: the expired events leave the log (and their webhook
 * deliveries with them) and those of collections that keep a longer history ($2, $3: names and
 * days) move to history_events. The feed never sees them again: its 410 and its oldest event are
 * the log's, as they were before any collection kept its history.
 */
const PRUNE = `WITH expired AS (
    DELETE FROM events WHERE occurred_at < now() - make_interval(days => $1)
    RETURNING id, type, collection, item_id, occurred_at, actor_id, item, data
  ), moved AS (
    INSERT INTO history_events (id, type, collection, item_id, occurred_at, actor_id, item, data)
    SELECT e.id, e.type, e.collection, e.item_id, e.occurred_at, e.actor_id, e.item, e.data
      FROM expired AS e JOIN unnest($2::text[], $3::int[]) AS k(collection, days) ON k.collection = e.collection
     WHERE e.occurred_at >= now() - make_interval(days => k.days)
    ON CONFLICT (id) DO NOTHING
  )
  SELECT count(*)::int AS pruned FROM expired`

/**
 * A kept event leaves the history after its collection's days. $3, the fewest days any collection
 * keeps (0 when none does), bounds the index scan on occurred_at to the events some collection
 * may have to let go, so an hourly run does not read the whole table; the events of a collection
 * that keeps none now go once they are that old (at once when no collection keeps any).
 */
const PRUNE_HISTORY = `DELETE FROM history_events AS h
   WHERE h.occurred_at < now() - make_interval(days => $3)
     AND h.occurred_at < now() - make_interval(days => coalesce(
       (SELECT k.days FROM unnest($1::text[], $2::int[]) AS k(collection, days) WHERE k.collection = h.collection), 0))`

/** The feed's visibility horizon now (HORIZON): events of transactions below it are all there is to read. */
export async function horizonOf(statements: Statements): Promise<string> {
  const [{ horizon }] = (await statements.query<{ horizon: string }>(HORIZON, [], 'events_horizon')) as [{ horizon: string }]
  return horizon
}

export function eventLog(db: Database, render: RenderEvent) {
  return {
    /** Writes the drafts as the last statement of the change's transaction `tx`, sent with its COMMIT. */
    append(tx: Transaction, drafts: readonly EventDraft[]): void {
      if (drafts.length === 0) return
      const rows = drafts.map((d) => ({ type: d.type, collection: d.collection, item_id: d.itemId, actor_id: d.actorId, item: d.item, data: d.data }))
      tx.beforeCommit(APPEND, [JSON.stringify(rows)])
    },

    /**
     * The visibility horizon now (HORIZON), where the primary's log stood then, and the next
     * transaction id: a reader that pages below the horizon to its end has read every event of
     * the transactions below it, a replica that has replayed to `lsn` has their changes (they had
     * ended before it was read), and every transaction that had ended is below `xmax`.
     */
    async horizon(): Promise<{ horizon: string; lsn: bigint; xmax: bigint }> {
      const [row] = await db.query<{ horizon: string; lsn: string; xmax: string }>(
        `${HORIZON}, pg_current_wal_insert_lsn()::text AS lsn, pg_snapshot_xmax(pg_current_snapshot())::text AS xmax`,
        [],
        'events_horizon_lsn',
      )
      return { horizon: row!.horizon, lsn: lsnOf(row!.lsn), xmax: BigInt(row!.xmax) }
    },

    /** Events after `query.after` below `horizon`, by default the horizon now. */
    async page(query: EventQuery, horizon?: string): Promise<StoredEvent[]> {
      horizon ??= await horizonOf(db)
      const rows = await db.query<Omit<StoredEvent, 'position'> & { tx: string; id: string; occurred_at: Date; item: Record<string, unknown> | null }>(
        PAGE,
        [String(query.after.tx), query.types, query.prefixes, query.collections, query.limit, horizon, query.after.id],
        'events_page',
      )
      return rows.map(({ tx, item, ...row }) => ({
        ...row,
        position: { tx: BigInt(tx), id: Number(row.id) },
        id: Number(row.id),
        occurred_at: row.occurred_at.toISOString(),
        data: render(row.collection, item, row.data),
      }))
    },

    /**
     * Where event `id` stands; when it is no longer kept, whether it is older than every kept one
     * (pruned) or names no event at all.
     */
    async locate(id: number): Promise<Position | 'pruned' | 'unknown'> {
      const rows = await db.query<{ tx: string | null; oldest: string | null }>(
        'SELECT (SELECT tx::text FROM events WHERE id = $1) AS tx, (SELECT min(id) FROM events)::text AS oldest',
        [id],
        'events_locate',
      )
      const { tx, oldest } = rows[0]!
      if (tx !== null) return { tx: BigInt(tx), id }
      return oldest === null || id < Number(oldest) ? 'pruned' : 'unknown'
    },

    /**
     * The position of the newest event below the horizon, where a tail starts, and that horizon:
     * every event of a transaction at or above it comes after the position.
     */
    async end(): Promise<{ position: Position; horizon: bigint }> {
      const horizon = await horizonOf(db)
      const rows = await db.query<{ tx: string; id: string }>(
        'SELECT tx::text AS tx, id::text AS id FROM events WHERE tx < $1::xid8 ORDER BY events.tx DESC, events.id DESC LIMIT 1',
        [horizon],
        'events_end',
      )
      return { position: rows[0] ? { tx: BigInt(rows[0].tx), id: Number(rows[0].id) } : START, horizon: BigInt(horizon) }
    },

    /**
     * Deletes events older than `days` from the log; those of a collection in `kept` (its days of
     * history) move to the history's table while they are younger than that, and leave it after.
     * The number of events the log no longer has.
     */
    async prune(days: number, kept: ReadonlyMap<string, number> = new Map()): Promise<number> {
      const collections = [...kept.keys()]
      const keptDays = [...kept.values()]
      const [row] = await db.query<{ pruned: number }>(PRUNE, [days, collections, keptDays], 'events_prune')
      const fewest = keptDays.length === 0 ? 0 : Math.min(...keptDays)
      await db.query(PRUNE_HISTORY, [collections, keptDays, fewest], 'history_events_prune')
      return row!.pruned
    },
  }
}

export type EventLog = ReturnType<typeof eventLog>
