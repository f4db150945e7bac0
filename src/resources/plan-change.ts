/**
 * What a PUT or PATCH will do to an item, decided from the item as it is and without I/O: every
 * check the change makes, in the order of checks (DESIGN, docs/errors.md), and nothing else. The
 * transaction that runs the plan (write-handlers.ts) only adds what needs the database: the lock
 * before, the hook, the guard, the write, the effect and the events after.
 */
import type { Collection, WriteData } from './collection.js'
import { checkWritable, type FieldPermissions } from './permissions.js'
import type { Representation } from './represent.js'
import { planMove, type Move } from './states.js'
import { checkReadOnly, writeData } from './writes.js'

/** The change a request asks for, and what its caller may do to this item. */
export interface ChangeRequest {
  operation: 'replace' | 'patch'
  /** The valid body, as the collection takes it (the version's view undone). */
  body: Record<string, unknown>
  /** What the caller may read and write of this item. */
  access: FieldPermissions
  /** Who the caller is to the item, for a state move. */
  mover: { owner: boolean; admin: boolean }
  /** The request's preconditions against the item as it is: throws 428 or 412 (reads only the request's headers). */
  preconditions(): void
}

export interface ChangePlan {
  /** Values to store, by field name: the whole content for a replace, the named fields for a patch. */
  data: WriteData
  /** The state move the change makes, allowed for this caller; undefined when the state stays. */
  move: Move | undefined
}

/**
 * 403 for a field the caller may not write, 422 for a replace that changes the item's identity,
 * 428 / 412 for the preconditions, then 409 (or 403) for a state move the machine or the caller
 * cannot make. A state move is the machine's alone: hooks see `data` after the plan and do not
 * move the state.
 */
export function planChange(collection: Collection, request: ChangeRequest, current: Representation): ChangePlan {
  const { operation, body, access } = request
  const states = collection.options.states
  checkWritable(access, body, current)
  const data = writeData(collection, operation, body, access.locked)
  if (operation === 'replace') {
    checkReadOnly(collection, body, current)
    // A replace is not a move: a state field it leaves out keeps its state.
    if (states && body[states.field] === undefined) data[states.field] = current[states.field]
  }
  request.preconditions()
  const move = states && planMove(states, current[states.field] as string, data[states.field], request.mover)
  return { data, move }
}
