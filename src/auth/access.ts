/**
 * Access rules as collections declare them, and what they mean for one caller. A caller's
 * standing towards an item (anonymous, signed-in user, the item's owner, admin) decides every
 * rule, so the collection factory resolves its rules per standing once, at startup.
 */
import { ApiError, unauthenticated } from '../errors.js'
import type { Caller } from './caller.js'
import { ADMIN_ROLE } from './roles.js'

/** Who may perform an action on a collection or an item, or read or write a field. */
export type AccessRule =
  | 'public'
  | 'authenticated'
  | 'admin'
  /** The item's owner (the collection's `owner` field, or its parent's) or an admin. */
  | 'owner-or-admin'
  /** Nobody: the action is switched off (registration closed). */
  | 'nobody'

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

export type Standing = 'anonymous' | 'user' | 'owner' | 'admin'
export const STANDINGS: readonly Standing[] = ['anonymous', 'user', 'owner', 'admin']

export const isAdmin = (caller: Caller | null): boolean => caller?.user.roles.includes(ADMIN_ROLE) ?? false

/** The caller's standing towards an item owned by `ownerId` (undefined: nobody owns items here). */
export function standingOf(caller: Caller | null, ownerId?: unknown): Standing {
  if (!caller) return 'anonymous'
  if (isAdmin(caller)) return 'admin'
  return ownerId !== undefined && ownerId === caller.user.id ? 'owner' : 'user'
}

const ALLOWED: Readonly<Record<AccessRule, ReadonlySet<Standing>>> = {
  public: new Set(STANDINGS),
  authenticated: new Set(['user', 'owner', 'admin']),
  admin: new Set(['admin']),
  'owner-or-admin': new Set(['owner', 'admin']),
  nobody: new Set(),
}

export const permits = (rule: AccessRule, standing: Standing): boolean => ALLOWED[rule].has(standing)

const WHO: Readonly<Record<AccessRule, string>> = {
  public: 'anyone',
  authenticated: 'signed-in callers',
  admin: 'admins',
  'owner-or-admin': 'the owner or admins',
  nobody: 'nobody',
}

/** How a refusal names who may do it: "may only be written by admins". */
export const who = (rule: AccessRule): string => WHO[rule]

/**
 * The collection-level check, before any item is looked at: 401 when the rule needs a caller and
 * there is none, 403 when no caller of this one's kind could be permitted. An owner rule is
 * settled later, against the item.
 */
export function authorize(rule: AccessRule, caller: Caller | null, action: string): void {
  if (rule === 'public') return
  if (rule === 'nobody') throw new ApiError('FORBIDDEN', `Nobody may ${action} here.`)
  if (!caller) throw unauthenticated()
  if (rule === 'admin' && !isAdmin(caller)) throw new ApiError('FORBIDDEN', `Only admins may ${action} here.`)
}

/** The item-level check of an owner rule: 403 for a caller who neither owns the item nor is an admin. */
export function authorizeItem(rule: AccessRule, standing: Standing, action: string): void {
  if (!permits(rule, standing)) throw new ApiError('FORBIDDEN', `Only ${who(rule)} may ${action} this item.`)
}
