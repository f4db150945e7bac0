/**
 * A list's revalidation without its query (DESIGN "Reading"). A page's ETag is the hash of what
 * the caller received (src/http/conditional.ts, entityTag) followed by `@<horizon>.<request>`:
 * how far the instance's event tail had read before the page was (src/events/versions.ts), and a
 * hash of what chose the page (the URL, the caller, their roles, Prefer). A request with the same
 * URL and caller that sends the tag back gets its 304 without the page being read while, as far
 * as this instance knows, no event of the collections the page shows (the collection and those it
 * relates to) came since. Otherwise the page is read, and its tag compared by its hash:
 * the same page read at a later version is still a 304, under the tag of now. A caller's own write
 * on another instance counts once this one's tail has read it (src/http/read-your-writes.ts).
 */
import { createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { ReadYourWrites } from '../http/read-your-writes.js'

/** How far the tail had read: every event of a transaction below `horizon`, all ended when the primary's log was at `lsn`. */
export interface ReadTo {
  horizon: bigint
  lsn: bigint
}

/** What the event tail knows of the collections' versions (src/events/versions.ts). */
export interface CollectionVersions {
  /** Starts following the log (the first list read does); until it has, nothing counts as unchanged. */
  follow(): void
  /**
   * How far the tail had read, the newest such point whose changes a replica that has replayed
   * to `replayed` has too (the primary has them all); undefined while the tail has not caught up.
   */
  readTo(replayed: bigint): ReadTo | undefined
  /**
   * Whether, as far as this instance knows, a page read once the tail had read to `horizon` is
   * current: no event of these collections since. `written`: the xmax after the caller's last
   * write (src/http/read-your-writes.ts), which the tail must have read past.
   */
  unchanged(horizon: bigint, collections: readonly string[], written?: bigint): boolean
  /** A write of this instance has committed (its answer is being sent). */
  wrote(): void
}

const REVALIDATION = /^(?:W\/)?("[\w-]+)@(\d+)\.([\w-]+)"$/

/**
 * What a collection's pages are made from besides the data, fixed at startup: its schemas and
 * how far lists count. An instance of another build (a rolling deploy) that shows the items
 * otherwise does not take a tag of this one's for its own.
 */
export const representationOf = (schemas: unknown, countLimit: number): string =>
  createHash('sha256').update(JSON.stringify([schemas, countLimit])).digest('base64url').slice(0, 12)

/** What chose the page besides the data: the same key, the same page while nothing changed. */
function requestKey(request: FastifyRequest, representation: string): string {
  const user = request.caller?.user
  const chosen = `${representation}\n${request.url}\n${user ? `${user.id} ${user.roles.join(',')}` : ''}\n${request.headers.prefer ?? ''}`
  return createHash('sha256').update(chosen).digest('base64url').slice(0, 12)
}

/** A page's tag: its hash (a quoted entityTag), how far the tail had read before it was read (0: not known), and for what. */
export const listTag = (request: FastifyRequest, representation: string, pageTag: string, horizon = 0n): string =>
  `${pageTag.slice(0, -1)}@${horizon}.${requestKey(request, representation)}"`

/**
 * The tag of If-None-Match that is still current without reading the page, if there is one.
 * `collections` are the event collections the page shows. Only for a plain revalidation: with
 * If-Match, the page is read to be compared.
 */
export async function currentTag(
  request: FastifyRequest,
  representation: string,
  versions: CollectionVersions,
  collections: readonly string[] | undefined,
  lastWrite: ReadYourWrites['lastWrite'],
): Promise<string | undefined> {
  const { headers } = request
  const ifNoneMatch = headers['if-none-match']
  if (ifNoneMatch === undefined || headers['if-match'] !== undefined || !collections) return undefined
  const written = (await lastWrite(request))?.xmax
  let key: string | undefined
  for (const tag of ifNoneMatch.split(',')) {
    const match = REVALIDATION.exec(tag.trim())
    if (!match) continue
    key ??= requestKey(request, representation)
    if (match[3] === key && versions.unchanged(BigInt(match[2]!), collections, written)) return `${match[1]}@${match[2]}.${match[3]}"`
  }
  return undefined
}
