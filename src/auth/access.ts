/**
 * Access rules as collections declare them. Declared now, enforced by the authentication layer:
 * until it exists every caller is treated as permitted.
 */

/** Who may perform an action on a collection or an item. */
export type AccessRule =
  | 'public'
  | 'authenticated'
  | 'admin'
  /** The item's owner (the collection's `owner` field) or an admin. */
  | 'owner-or-admin'

export interface CollectionAccess {
  list: AccessRule
  read: AccessRule
  create: AccessRule
  update: AccessRule
  delete: AccessRule
}

/** Who may read or write one field; a field nobody restricts follows the collection's rules. */
export interface FieldAccess {
  read?: AccessRule
  write?: AccessRule
}
