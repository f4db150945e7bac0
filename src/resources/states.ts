/**
 * State machines a collection declares on one field (DESIGN "States"; the declaration's types are
 * in collection.ts): a create starts in the initial state, and a write's move is one the machine
 * has and the caller may make.
 */
import { ApiError } from '../errors.js'
import type { Mover, StateMachine, Transition } from './collection.js'

/** A move a write makes: from, to, and its declared transition. */
export interface Move {
  from: string
  to: string
  transition: Transition
}

const MOVER_NAMES: Readonly<Record<Mover, string>> = { owner: 'its owner', admin: 'admins' }

/** A create starts in the initial state (422 otherwise). */
export function checkInitial(machine: StateMachine, data: Record<string, unknown>): void {
  const state = data[machine.field]
  if (state !== undefined && state !== machine.initial) {
    throw new ApiError('VALIDATION_ERROR', `A new item starts as "${machine.initial}"; change its ${machine.field} afterwards.`, [
      { field: machine.field, reason: `must be "${machine.initial}" when created` },
    ])
  }
}

const quoted = (states: readonly string[]) => states.map((s) => `"${s}"`).join(', ')

/**
 * The move a write makes, or undefined when it keeps the state: 409 INVALID_TRANSITION naming the
 * allowed next states when the machine has no such move, 403 when this caller may not make it.
 */
export function planMove(machine: StateMachine, from: string, to: unknown, caller: { owner: boolean; admin: boolean }): Move | undefined {
  if (to === undefined || to === from) return undefined
  const next = machine.transitions[from] ?? {}
  const transition = next[to as string]
  if (!transition) {
    const allowed = Object.keys(next)
    const reason = allowed.length ? `can move from "${from}" only to ${quoted(allowed)}` : `"${from}" is final: it does not change`
    throw new ApiError('INVALID_TRANSITION', `The ${machine.field} cannot move from "${from}" to "${String(to)}".`, [{ field: machine.field, reason }])
  }
  if (!transition.by.some((mover) => caller[mover])) {
    const who = transition.by.map((mover) => MOVER_NAMES[mover]).join(' or ')
    throw new ApiError('FORBIDDEN', `Only ${who} may move the ${machine.field} from "${from}" to "${String(to)}".`, [
      { field: machine.field, reason: `may move to "${String(to)}" only by ${who}` },
    ])
  }
  return { from, to: to as string, transition }
}
