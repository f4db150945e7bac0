/** Every collection the API serves, in registration order (a parent before its children). */
import type { Collection } from '../resources/collection.js'
import { products } from './products/index.js'
import { reviews } from './reviews/index.js'

export const collections: readonly Collection[] = [products, reviews]
