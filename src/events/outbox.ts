/**
 * What a change writes to the outbox, and how a stored event is shown. An event keeps the row its
 * change wrote (its columns by their names in the database); a reader gets it as the item's detail
 * representation as an admin sees it in the newest API version (DESIGN "Events"), so that a
 * consumer needs no second read. Rendering on read lets a write make its event in SQL, from the row
 * it returns, in the same statement as the change (docs/decisions.md).
 */
import type { RenderEvent } from '../db/events.js'
import { eventCollection, type Collection } from '../resources/collection.js'
import type { EventDrafter } from '../resources/handler-context.js'
import { resolvePermissions } from '../resources/permissions.js'
import { representer, type Representation, type Row } from '../resources/represent.js'
import { collectionVersion } from '../resources/versions.js'

export interface Outbox extends EventDrafter {
  /** A stored event's data (src/db/events.ts). */
  render: RenderEvent
}

/** A collection's rows to and from the JSON an event keeps, and how its events show them. */
interface EventView {
  item(row: Row): Record<string, unknown>
  show(item: Record<string, unknown>): Representation
}

function eventView(collection: Collection, newest: number): EventView {
  const hidden = resolvePermissions(collection).admin.hidden
  const detail = representer(collection.fields.filter((f) => !hidden.has(f.name)), collection.options.computed)
  const version = collectionVersion(collection, newest)
  // Write-only columns (a password's hash) are not among the columns a read selects: never kept.
  // An item in the trash keeps when it went there (src/resources/trash.ts).
  const columns = collection.options.trash ? [...collection.columns, 'deleted_at'] : collection.columns
  // JSON has no timestamps: they are kept as RFC 3339 text and read back as the driver gives them.
  const times = new Set(collection.fields.filter((f) => f.kind === 'datetime').map((f) => f.name))
  return {
    item: (row) => Object.fromEntries(columns.map((column) => [column, row[column]])),
    show(item) {
      const row: Row = {}
      for (const column of columns) {
        const value = item[column]
        row[column] = times.has(column) && typeof value === 'string' ? new Date(value) : value
      }
      const shown = version.toView(detail(row))
      return row.deleted_at ? { ...shown, deleted_at: new Date(row.deleted_at as string).toISOString() } : shown
    },
  }
}

/** Built once at startup: `newest` is the newest API version served. */
export function createOutbox(newest: number, collections: readonly Collection[]): Outbox {
  const views = new Map(collections.map((collection) => [eventCollection(collection), eventView(collection, newest)]))
  const viewOf = (collection: Collection) => {
    const name = eventCollection(collection)
    let view = views.get(name)
    if (!view) views.set(name, (view = eventView(collection, newest)))
    return view
  }
  return {
    draft(collection, action, row, actorId, extra) {
      const name = eventCollection(collection)
      return { type: `${name}.${action}`, collection: name, itemId: row.id as string, actorId, item: viewOf(collection).item(row), data: extra ?? {} }
    },
    render(collection, item, data) {
      const view = views.get(collection)
      // An event without a row has its representation in `data`; one of a collection the service
      // no longer has cannot be shown, and shows nothing of its row.
      return item && view ? { ...view.show(item), ...data } : data
    },
  }
}
