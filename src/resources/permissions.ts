/** A collection's field rules resolved per standing at startup: what each caller sees and may write. */
import { permits, STANDINGS, who, type Standing } from '../auth/access.js'
import { ApiError, type ErrorDetail } from '../errors.js'
import type { Collection } from './collection.js'
import type { Representation } from './represent.js'
import { same } from './writes.js'

export interface FieldPermissions {
  /** Fields omitted from every representation this standing gets. */
  readonly hidden: ReadonlySet<string>
  /** Writable fields this standing may not write, with why. */
  readonly locked: ReadonlyMap<string, string>
  /** Names the representation in ETags: '' when nothing is hidden (src/http/conditional.ts). */
  readonly variant: string
}

export type Permissions = Readonly<Record<Standing, FieldPermissions>>

/** Fields some caller may not read: optional in the response schemas. */
export const restrictedReads = (collection: Collection): string[] =>
  Object.entries(collection.options.fieldAccess ?? {})
    .filter(([, access]) => access.read !== undefined && access.read !== 'public')
    .map(([name]) => name)

export function resolvePermissions(collection: Collection): Permissions {
  const rules = Object.entries(collection.options.fieldAccess ?? {})
  const restricted = restrictedReads(collection)
  const resolve = (standing: Standing): FieldPermissions => {
    const hidden = new Set(rules.filter(([, { read }]) => read && !permits(read, standing)).map(([name]) => name))
    const locked = new Map(rules.filter(([, { write }]) => write && !permits(write, standing)).map(([name, { write }]) => [name, `may only be written by ${who(write!)}`]))
    const mask = restricted.reduce((bits, name, i) => (hidden.has(name) ? bits | (1 << i) : bits), 0)
    return { hidden, locked, variant: mask ? mask.toString(36) : '' }
  }
  return Object.fromEntries(STANDINGS.map((standing) => [standing, resolve(standing)])) as unknown as Permissions
}

/**
 * 403 naming every field of the body this caller may not write (mass assignment). A field it may
 * read may come back unchanged (GET, edit, PUT); one it may not read is refused whatever its value,
 * or comparing would tell the caller what it is.
 */
export function checkWritable(permissions: FieldPermissions, body: Record<string, unknown>, current?: Representation): void {
  if (permissions.locked.size === 0) return
  const details: ErrorDetail[] = []
  for (const [name, reason] of permissions.locked) {
    if (!(name in body)) continue
    if (current && !permissions.hidden.has(name) && name in current && same(body[name], current[name])) continue
    details.push({ field: name, reason })
  }
  if (details.length > 0) throw new ApiError('FORBIDDEN', `You may not write ${details.map((d) => d.field).join(', ')}.`, details)
}
