/**
 * What a change writes to the outbox: its event drafts, each carrying the item's detail
 * representation as an admin sees it in the newest API version (DESIGN "Events"), so that a
 * consumer needs no second read.
 */
import type { EventDraft } from '../db/events.js'
import type { Collection } from '../resources/collection.js'
import { resolvePermissions } from '../resources/permissions.js'
import { representer, type Representation, type Row } from '../resources/represent.js'
import { collectionVersion } from '../resources/versions.js'

/** What happened to an item (`status_changed`: a state machine's move); the event's type is `<collection>.<action>`. */
export type EventAction = 'created' | 'updated' | 'deleted' | `${string}_changed`

export interface Outbox {
  /** The draft of one event about `row` of `collection`; `extra` joins the data (a transition's from and to). */
  draft(collection: Collection, action: EventAction, row: Row, actorId: string | null, extra?: Representation): EventDraft
}

/** The name events give a collection: its table's, so that nested ones stay unambiguous (`order_items`). */
export const eventCollection = (collection: Collection): string => collection.options.table ?? collection.name

/** Built once at startup: `newest` is the newest API version served. */
export function createOutbox(newest: number): Outbox {
  const views = new WeakMap<Collection, (row: Row) => Representation>()
  const viewOf = (collection: Collection) => {
    let view = views.get(collection)
    if (!view) {
      const hidden = resolvePermissions(collection).admin.hidden
      const detail = representer(collection.fields.filter((f) => !hidden.has(f.name)), collection.options.computed)
      const version = collectionVersion(collection, newest)
      view = (row) => version.toView(detail(row))
      views.set(collection, view)
    }
    return view
  }
  return {
    draft(collection, action, row, actorId, extra) {
      const name = eventCollection(collection)
      return { type: `${name}.${action}`, collection: name, itemId: row.id as string, actorId, data: { ...viewOf(collection)(row), ...extra } }
    },
  }
}
