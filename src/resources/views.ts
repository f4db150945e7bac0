/** How one API version shows a collection's items to each standing: the representations and their validators. */
import { STANDINGS, type Standing } from '../auth/access.js'
import { itemTag, type Validators } from '../http/conditional.js'
import type { Collection } from './collection.js'
import type { FieldSelection } from './field-selection.js'
import { resolvePermissions, type Permissions } from './permissions.js'
import { representer, type Representation, type Row } from './represent.js'
import { collectionVersion, type CollectionVersion } from './versions.js'

export interface Views {
  /** The API version these views serve, with its view of the collection. */
  version: CollectionVersion
  /** What each standing may read and write. */
  permissions: Permissions
  /** The item with every field, as hooks and write checks see it. */
  stored(row: Row): Representation
  /** The list representation as this version shows it to this standing; with `fields=`, those fields instead. */
  summary(row: Row, standing: Standing, selection?: FieldSelection): Representation
  /** The detail representation as this version shows it to this standing; with `fields=`, those fields instead. */
  detail(row: Row, standing: Standing, selection?: FieldSelection): Representation
  /** The validators of an item as this version shows it to this standing, with the fields asked for. */
  validators(row: Row, standing: Standing, selection?: FieldSelection): Validators
}

/** Representations of asked-for fields kept per collection and version; past this many, made for each request. */
const MAX_SELECTED = 512

/** Built once per collection and API version at startup. */
export function collectionViews(collection: Collection, versionNumber: number): Views {
  const { computed } = collection.options
  const version = collectionVersion(collection, versionNumber)
  const permissions = resolvePermissions(collection)
  const views = Object.fromEntries(
    STANDINGS.map((standing) => {
      const visible = collection.fields.filter((f) => !permissions[standing].hidden.has(f.name))
      const summaryFields = collection.summaryFields.filter((f) => !permissions[standing].hidden.has(f.name))
      return [standing, { summary: representer(summaryFields, computed), detail: representer(visible, computed) }]
    }),
  ) as Record<Standing, { summary(row: Row): Representation; detail(row: Row): Representation }>
  const selected = new Map<string, (row: Row) => Representation>()
  /** The asked-for fields this standing may read. */
  const partial = (selection: FieldSelection, standing: Standing) => {
    const key = `${standing}|${selection.tag}`
    let represent = selected.get(key)
    if (!represent) {
      represent = representer(selection.fields.filter((f) => !permissions[standing].hidden.has(f.name)), computed)
      if (selected.size < MAX_SELECTED) selected.set(key, represent)
    }
    return represent
  }
  // An item in the trash says since when (src/resources/trash.ts); a live one has no such field.
  // A row's time is a Date; an event's stored item (JSON) holds it as text.
  const shown = (representation: Representation, row: Row) =>
    row.deleted_at ? { ...representation, deleted_at: new Date(row.deleted_at as Date | string).toISOString() } : representation
  return {
    version,
    permissions,
    // Every field, whoever may read it: a rule may hide a field even from admins.
    stored: representer(collection.fields, computed),
    summary: (row, standing, selection) => shown(version.toView((selection ? partial(selection, standing) : views[standing].summary)(row)), row),
    detail: (row, standing, selection) => shown(version.toView((selection ? partial(selection, standing) : views[standing].detail)(row)), row),
    validators: (row, standing, selection) => ({
      etag: itemTag(versionNumber, row.updated_at as Date, permissions[standing].variant, selection?.tag),
      lastModified: row.updated_at as Date,
    }),
  }
}
