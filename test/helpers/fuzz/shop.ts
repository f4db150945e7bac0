/** The shop as the fuzz generators see it: its route families, list specs, write-body fields, callers, stored rows. */
import fc from 'fast-check'
import { shopCollections } from '../../../src/collections/index.js'
import type { ListSpec } from '../../../src/resources/list-query/plan.js'

export type CallerName = 'anonymous' | 'user' | 'other' | 'reader' | 'session' | 'admin'
export const CALLERS: readonly CallerName[] = ['anonymous', 'user', 'other', 'reader', 'session', 'admin']

/** Stored rows the requests aim at, so that they reach past the 404s. */
export interface Targets {
  products: string[]
  /** [product, review] */
  reviews: [string, string][]
  users: string[]
  orders: string[]
  /** [order, item] */
  items: [string, string][]
  /** The SKUs of stored products: a create with one is a 409. */
  skus: string[]
  /** Products the caller `user` has reviewed: another review of one by them is a 409. */
  reviewedByUser: string[]
}

/** The route families: the collections, and the session and token routes. */
export type Family = 'products' | 'reviews' | 'users' | 'orders' | 'items' | 'tokens' | 'sessions'
export const FAMILIES: readonly Family[] = ['products', 'reviews', 'users', 'orders', 'items', 'tokens', 'sessions']
export const PREFIXES = ['/api/v1', '/api/v2'] as const

const collections = new Map(shopCollections('open').map((c) => [c.name, c]))
/** What each collection's lists take: its sortable and filterable fields, with their kinds. */
export const SPECS: Partial<Record<Family, ListSpec>> = Object.fromEntries([...collections].map(([name, c]) => [name, c.listSpec]))

/** Every field name some write body has: the collections' PUT bodies, sign-in and token issue. */
export const KNOWN_NAMES = [
  ...new Set([
    ...[...collections.values()].flatMap((c) => Object.keys((c.bodies.replace as { properties: object }).properties)),
    'email', 'password', 'name', 'scopes', 'expires_in_days',
  ]),
]

export const pick = <T>(values: readonly T[]) => fc.constantFrom(...values)
/** A deterministic choice from a list by a number (in `map`, where no arbitrary may be drawn). */
export const choose = <T>(values: readonly T[], n: number): T => values[n % values.length]!

/** Builds once per arguments: `chain` asks for arbitraries on every sample, and building them was the cost (15 s for 20,000). */
export function once<A extends unknown[], T>(build: (...args: A) => T): (...args: A) => T {
  const built = new Map<string, T>()
  return (...args) => {
    const key = JSON.stringify(args)
    if (!built.has(key)) built.set(key, build(...args))
    return built.get(key)!
  }
}
