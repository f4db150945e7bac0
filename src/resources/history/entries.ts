/**
 * An item's events as its history shows them to one caller: each entry the event's id, type, time
 * and actor, and for a change the fields that changed, each `from` and `to`, as the caller's API
 * version shows them and only those the caller may read (docs/reference/api.md, "History").
 */
import type { ItemEvent } from '../../db/history.js'
import type { Representation, Row } from '../represent.js'
import { same } from '../writes.js'

/** A changed field's values before and after. */
export interface Change {
  from: unknown
  to: unknown
}

export interface HistoryEntry {
  id: number
  type: string
  occurred_at: string
  actor_id: string | null
  /**
   * On every entry but a creation or a deletion: the fields that changed; null when that cannot
   * be told, the item's event before this one being no longer kept.
   */
  changes?: Record<string, Change> | null
}

/** The item as the caller gets it: its detail representation in their version, their fields only. */
export type ShowItem = (item: Row) => Representation

/** Server fields every change moves or none does: the entry's time says when. */
const UNCOUNTED = new Set(['id', 'created_at', 'updated_at'])

/** The fields the caller may read whose values differ, among `names` (all of them by default). */
function diff(before: Representation, after: Representation, names: Iterable<string> = Object.keys(after)): Record<string, Change> {
  const changes: Record<string, Change> = {}
  for (const name of names) {
    if (UNCOUNTED.has(name) || !(name in after)) continue
    const from = before[name] ?? null
    const to = after[name] ?? null
    if (!same(from, to)) changes[name] = { from, to }
  }
  return changes
}

/**
 * The entries of the first `size` events (newest first); the event after each, one more than the
 * page when there is one, is the state its change started from. `state` is the field of the
 * collection's state machine: a move's event (`status_changed`, beside the `updated` of the same
 * change) has its own `from` and `to` and shows that field only.
 */
export function historyEntries(events: readonly ItemEvent[], size: number, show: ShowItem, state: string | undefined): HistoryEntry[] {
  const shown = new Map<number, Representation>()
  const view = (event: ItemEvent) => {
    let representation = shown.get(event.id)
    if (!representation) shown.set(event.id, (representation = show(event.item!)))
    return representation
  }
  return events.slice(0, size).map((event, i) => {
    const entry: HistoryEntry = { id: event.id, type: event.type, occurred_at: event.occurred_at.toISOString(), actor_id: event.actor_id }
    const action = event.type.slice(event.type.indexOf('.') + 1)
    if (action === 'created' || action === 'deleted') return entry
    // Events from before the log kept rows have no item to show as this caller may see it.
    if (!event.item) return { ...entry, changes: null }
    if (state !== undefined && action === `${state}_changed`) {
      return { ...entry, changes: diff(show({ ...event.item, [state]: event.data.from }), view(event), [state]) }
    }
    const previous = events[i + 1]
    return { ...entry, changes: previous?.item ? diff(view(previous), view(event)) : null }
  })
}
