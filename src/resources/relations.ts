/**
 * A collection's relations, by name, for `include=` (DESIGN "Reading"): its parent (a review's
 * `product`, from `product_id`), the items its rows reference (an order item's `product`, a
 * review's `author`: declared once as `references`), and its child collections (a product's
 * `reviews`). Found once at startup from the declarations of every collection served.
 */
import type { Collection } from './collection.js'

export interface Relation {
  readonly name: string
  /** `one`: the row holds the other item's id in `column`; `many`: the other items hold this row's id in `column`. */
  readonly kind: 'one' | 'many'
  readonly target: Collection
  readonly column: string
}

/** `product_id` → `product`: a parent relation is named for its field. */
const relationName = (field: string) => field.replace(/_id$/, '')

/** The relations of each collection of `all`, by collection, then by name. */
export function relationsOf(all: readonly Collection[]): ReadonlyMap<Collection, ReadonlyMap<string, Relation>> {
  const byName = new Map(all.filter((collection) => !collection.options.parent).map((collection) => [collection.name, collection]))
  const relations = new Map<Collection, Map<string, Relation>>(all.map((collection) => [collection, new Map()]))
  const add = (of: Collection, relation: Relation) => {
    const known = relations.get(of)!
    // Embedding or filtering through it would tell what the column holds.
    const holder = relation.kind === 'one' ? of : relation.target
    if (holder.options.fieldAccess?.[relation.column]?.read) {
      throw new TypeError(`collection ${holder.name}: "${relation.column}" has a read rule, so relation "${relation.name}" would reveal it`)
    }
    if (known.has(relation.name) || of.field.has(relation.name)) {
      throw new TypeError(`collection ${of.name}: relation "${relation.name}" is named like another relation or a field`)
    }
    known.set(relation.name, relation)
  }
  for (const collection of all) {
    const { parent, references = {} } = collection.options
    if (parent && relations.has(parent.collection)) {
      add(collection, { name: relationName(parent.field), kind: 'one', target: parent.collection, column: parent.field })
      add(parent.collection, { name: collection.name, kind: 'many', target: collection, column: parent.field })
    }
    // A reference to a collection this service does not serve (one built with some of the
    // collections only) is no relation here: `include` names it as unknown.
    for (const [name, { field, collection: targetName }] of Object.entries(references)) {
      const target = byName.get(targetName)
      if (target) add(collection, { name, kind: 'one', target, column: field })
    }
  }
  return relations
}
