/**
 * Requests the service makes to itself: a batch's operations (src/batch/), each answered by its
 * route as if the caller had sent it. Such a request is its batch's caller's, identified once for
 * the batch: found by its async context (AsyncLocalStorage), which nothing a client sends can set.
 */
import { AsyncLocalStorage } from 'node:async_hooks'

/** What an inner request carries from the request that made it: its caller (src/auth/caller.ts's Caller, or null). */
export interface InnerRequest {
  readonly caller: unknown
}

const storage = new AsyncLocalStorage<InnerRequest>()

/** The batch's request an inner request runs for; undefined for a request from a client. */
export const innerRequest = (): InnerRequest | undefined => storage.getStore()

/** Runs `fn`, whose requests to the service are inner requests of `inner`. */
export const asInner = <T>(inner: InnerRequest, fn: () => T): T => storage.run(inner, fn)
