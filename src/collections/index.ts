/** Every collection the API serves, in registration order (a parent before its children), and its versions. */
import type { Registration } from '../config.js'
import type { ApiVersion } from '../http/versioning.js'
import type { Collection } from '../resources/collection.js'
import { orderItems } from './order-items/index.js'
import { orders } from './orders/index.js'
import { products } from './products/index.js'
import { reviews } from './reviews/index.js'
import { usersCollection } from './users/index.js'

/** The shop's collections; who may register depends on the configuration. */
export const shopCollections = (registration: Registration): readonly Collection[] => [
  usersCollection(registration),
  products,
  reviews,
  orders,
  orderItems,
]

/**
 * v2 shows amounts as `{ amount, currency }` (products declare the view); v1 keeps plain numbers,
 * is deprecated from the day v2 shipped, and is served until its sunset.
 */
export const apiVersions: readonly ApiVersion[] = [
  { version: 1, deprecation: new Date('2026-11-21T00:00:00Z'), sunset: new Date('2027-11-21T00:00:00Z') },
  { version: 2 },
]
