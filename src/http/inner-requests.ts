/**
 * Requests the service makes to itself: a batch's operations (src/batch/), each answered by its
 * route as if the caller had sent it. Such a request is its batch's caller's, identified once for
 * the batch: found by its async context (AsyncLocalStorage), which nothing a client sends can set.
 */
import { AsyncLocalStorage } from 'node:async_hooks'

/** What an inner request carries from the request that made it: its caller (src/auth/caller.ts's Caller, or null). */
export interface InnerRequest {
  readonly caller: unknown
  /** How many of the batch's operations it makes (several creates sent as one array): what the rate limit counts. */
  readonly operations: number
}

const storage = new AsyncLocalStorage<InnerRequest>()

/** The batch's request an inner request runs for; undefined for a request from a client. */
export const innerRequest = (): InnerRequest | undefined => storage.getStore()

/** Runs `fn`, whose requests to the service are inner requests of `inner`. */
export const asInner = <T>(inner: InnerRequest, fn: () => T): T => storage.run(inner, fn)

/**
 * A header of an inner request's answer to an array POST: each item's ETag and Last-Modified, as
 * its create alone would send them (JSON), for the batch to answer each operation with. Inner
 * answers reach only the batch, which shows none of it.
 */
export const ITEM_VALIDATORS = 'x-item-validators'
