/**
 * State machines a collection declares on one field (DESIGN "States"): the initial state, and per
 * state the states it may move to, who may make each move, and the guard and effect that run in
 * the write's transaction.
 */
import type { Caller } from '../auth/caller.js'
import type { Statements } from '../db/client.js'
import { ApiError } from '../errors.js'
import type { Collection } from './collection.js'
import type { Representation, Row } from './represent.js'

/** Who may make a move: the item's owner, an admin. */
export type Mover = 'owner' | 'admin'

/** What a guard or an effect sees; it writes only through `tx`. */
export interface TransitionContext {
  tx: Statements
  /** The item before the move, every field. */
  item: Representation
  from: string
  to: string
  caller: Caller | null
  /** Records that the effect changed `row` of `collection` (an event in the same transaction). */
  changed(collection: Collection, row: Row): void
}

export interface Transition {
  by: readonly Mover[]
  /** Throws an ApiError (409 STATE_CONFLICT) when the move cannot be made now; nothing is written. */
  guard?(context: TransitionContext): Promise<void>
  /** Runs after the item's change, in its transaction: what the move does elsewhere. */
  effect?(context: TransitionContext): Promise<void>
}

export interface StateMachine {
  /** The field that holds the state: an enum of the item schema. */
  field: string
  initial: string
  /** Per state, the states it may move to; a state with none is final. */
  transitions: Readonly<Record<string, Readonly<Record<string, Transition>>>>
}

/** A move a write makes: from, to, and its declared transition. */
export interface Move {
  from: string
  to: string
  transition: Transition
}

const MOVER_NAMES: Readonly<Record<Mover, string>> = { owner: 'its owner', admin: 'admins' }

/** Checks the declaration once, at startup: every state is one the field can hold. */
export function checkStateMachine(name: string, machine: StateMachine, states: readonly unknown[] | undefined): void {
  const known = new Set(states)
  const named = [machine.initial, ...Object.keys(machine.transitions), ...Object.values(machine.transitions).flatMap((to) => Object.keys(to))]
  for (const state of named) {
    if (!known.has(state)) throw new TypeError(`collection ${name}: state "${state}" is not a value of ${machine.field}`)
  }
}

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
