/** Where a statement reaches in a collection with a trash: the live items, the trashed, or both. */

/**
 * Which items of a collection with a trash a statement reaches (DESIGN "Data over time"):
 * `only` the trashed ones, `include` both; absent, the live ones. A symbol, so that the
 * column conditions (Object.keys) and the rows built from a scope never see it.
 */
export const TRASHED = Symbol('trashed')
export type Shelf = 'only' | 'include'

/** Conditions a row must meet: its id, and the parent of a nested collection; in a collection with a trash, which shelf. */
export type Scope = Record<string, unknown> & { [TRASHED]?: Shelf }

/** The condition on `deleted_at` of a statement in `scope` (on the row `alias`); empty without a trash or for both shelves. */
export function shelfCondition(trash: boolean, scope: Scope, alias?: string): string {
  if (!trash || scope[TRASHED] === 'include') return ''
  return `${alias ? `${alias}.` : ''}"deleted_at" IS ${scope[TRASHED] === 'only' ? 'NOT ' : ''}NULL`
}
