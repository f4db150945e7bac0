/** An item's events, newest first: from the log, and from the history a collection keeps longer. */
import type { Statements } from './client.js'

/** One event of an item, as its history reads it. */
export interface ItemEvent {
  id: number
  type: string
  occurred_at: Date
  actor_id: string | null
  /** The item's row as the event's change wrote it (src/db/events.ts); null in events from before rows were kept. */
  item: Record<string, unknown> | null
  /** What the event adds: a move's `from` and `to`. */
  data: Record<string, unknown>
}

export interface HistoryQuery {
  /** The events' collection (src/resources/collection.ts, eventCollection). */
  collection: string
  itemId: string
  /** Events older than this one (a page's cursor); undefined: from the newest. */
  before: number | undefined
  limit: number
}

/**
 * An event moves from the log to history_events in one statement (src/db/events.ts, PRUNE): it
 * is in exactly one of the two. Each side is an index seek on (item_id, id), merged by id: an
 * item's events are written while its row is locked, so their ids follow the order of its changes.
 */
const HISTORY = `SELECT id::text AS id, type, occurred_at, actor_id, item, data FROM (
    SELECT id, type, occurred_at, actor_id, item, data FROM events
     WHERE item_id = $1::uuid AND collection = $2 AND id < $3::bigint
    UNION ALL
    SELECT id, type, occurred_at, actor_id, item, data FROM history_events
     WHERE item_id = $1::uuid AND collection = $2 AND id < $3::bigint
  ) AS e
  ORDER BY e.id DESC
  LIMIT $4`

/** Past every event id: the first page. */
const NEWEST = '9223372036854775807'

/** The item's events older than `query.before`, newest first, at most `query.limit`; `on`: where the item was read. */
export async function itemEvents(on: Statements, query: HistoryQuery): Promise<ItemEvent[]> {
  const before = query.before === undefined ? NEWEST : String(query.before)
  const rows = await on.query<Omit<ItemEvent, 'id'> & { id: string }>(HISTORY, [query.itemId, query.collection, before, query.limit], 'item_history')
  return rows.map((row) => ({ ...row, id: Number(row.id) }))
}
