/**
 * Conditional requests (RFC 9110 §13): the validators of a representation and the evaluation of
 * If-Match, If-Unmodified-Since, If-None-Match and If-Modified-Since against them.
 */
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'
import { appendHeader } from './response-headers.js'

export interface Validators {
  /** A strong entity tag, quoted. */
  etag: string
  /** When the item last changed; lists have none. */
  lastModified?: Date
}

/**
 * A list page's strong entity tag: a hash of exactly what the caller receives (its items, total
 * and links). The same on every instance and after a restart, as nothing else goes into it.
 * The media type is left out: `application/json` and the vendor type carry the same bytes, and
 * a tag read under one must work in If-Match under the other.
 */
export function entityTag(representation: unknown): string {
  return `"${createHash('sha256').update(JSON.stringify(representation)).digest('base64url').slice(0, 27)}"`
}

/**
 * An item's strong entity tag, from what its representation depends on: the API version that
 * shows it and its `updated_at`, which moves forward (by at least a millisecond) on every change
 * to the item or its related data, the variant of the fields this caller may see (a field
 * omitted for one caller is another representation), and after `~` the fields asked for with
 * `fields=` (another set is another representation). Hashing the representation instead cost a
 * third of a product read's throughput (docs/decisions.md).
 */
export function itemTag(version: number, updatedAt: Date, variant = '', selection?: string): string {
  return `"v${version}.${updatedAt.getTime().toString(36)}${variant && `.${variant}`}${selection === undefined ? '' : `~${selection}`}"`
}

/**
 * An item tag whose representation embeds related items (`include=`): the tag of the item's own
 * part with a hash of the embedded ones after `+`, so that it changes when they do.
 */
export function withEmbedded(etag: string, embedded: unknown): string {
  const hash = createHash('sha256').update(JSON.stringify(embedded)).digest('base64url').slice(0, 16)
  return `${etag.slice(0, -1)}${etag.includes('~') ? '' : '~'}+${hash}"`
}

const ITEM_TAG = /^"v(\d+)\.([0-9a-z]+)(?:\.([0-9a-z]+))?(?:~[0-9a-z]*(?:\+[\w-]+)?)?"$/
/**
 * The part of an item tag after `~`, the fields asked for and the items embedded: If-Match asks
 * whether the item is the version the client read, whatever it read of it and with it.
 */
const SELECTION = /~[0-9a-z]*(?:\+[\w-]+)?"$/
const versionOf = (tag: string) => tag.replace(SELECTION, '"')

/**
 * A list tag's page, without what it says about when it was read (`@<log version>.<request>`,
 * src/resources/revalidation.ts): the same page read at another version is the same representation.
 */
const pageOf = (tag: string) => tag.replace(/@[\w.-]*"$/, '"')

/**
 * When a write's only precondition is If-Match: the `updated_at` values of the item tags it names
 * for this version and variant (itemTag's inverse), so that the write can require one of them of
 * the row as it writes. Undefined when the request has no precondition; null when the row must be
 * read to evaluate it (`*`, If-Unmodified-Since, If-None-Match, or no tag that could match).
 */
export function ifMatchVersions(request: FastifyRequest, version: number, variant: string): Date[] | undefined | null {
  const { headers } = request
  if (headers['if-none-match'] !== undefined) return null
  const ifMatch = headers['if-match']
  if (ifMatch === undefined) return headers['if-unmodified-since'] === undefined ? undefined : null
  const versions: Date[] = []
  for (const tag of tagList(ifMatch)) {
    const match = ITEM_TAG.exec(tag)
    if (match && Number(match[1]) === version && (match[3] ?? '') === variant) versions.push(new Date(parseInt(match[2]!, 36)))
  }
  return versions.length > 0 ? versions : null
}

/** Last-Modified has whole seconds (RFC 9110 §8.8.2), so dates are compared in seconds. */
const seconds = (date: Date) => Math.floor(date.getTime() / 1000)

/** RFC 9110 §5.6.7: IMF-fixdate, and the obsolete RFC 850 and asctime forms recipients must read. */
const HTTP_DATE = [
  /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/,
  /^[A-Z][a-z]{5,8}, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT$/,
  /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/,
]

/** An HTTP date in seconds; anything else (`0`, `2024`, ISO 8601) is not one and is ignored. */
function httpDate(value: string | undefined): number | undefined {
  if (value === undefined || !HTTP_DATE.some((form) => form.test(value))) return undefined
  const time = Date.parse(value.endsWith('GMT') ? value : `${value} GMT`)
  return Number.isNaN(time) ? undefined : Math.floor(time / 1000)
}

/** The entity tags of an If-Match or If-None-Match list, `*` as itself; weak ones keep their `W/`. */
function tagList(value: string): string[] {
  if (value.trim() === '*') return ['*']
  return value.match(/(?:W\/)?"[^"]*"/g) ?? []
}

/**
 * Strong comparison: both strong and equal (RFC 9110 §8.8.3.2), an item's fields aside: a client
 * that read some fields of this version may change it (If-Match is about the version).
 */
const strongMatch = (tags: string[], etag: string) => tags.some((tag) => tag === '*' || pageOf(tag) === pageOf(etag) || versionOf(tag) === versionOf(etag))
/**
 * Weak comparison: equal once any `W/` is dropped. On a write, as for If-Match, an item's version
 * is compared whatever its fields: If-None-Match asks whether the client has this version.
 */
const weakMatch = (tags: string[], etag: string, write: boolean) =>
  tags.some((tag) => {
    const weak = tag.replace(/^W\//, '')
    return tag === '*' || pageOf(weak) === pageOf(etag) || (write && versionOf(weak) === versionOf(etag))
  })

export type Outcome = 'proceed' | 'not-modified'

/**
 * RFC 9110 §13.2.2, in its order: If-Match, else If-Unmodified-Since; then If-None-Match, else
 * If-Modified-Since (GET and HEAD only). `current` is undefined when there is no current
 * representation (an item that does not exist yet). Throws 412 when a precondition fails.
 */
export function evaluate(request: FastifyRequest, current: Validators | undefined): Outcome {
  const { headers } = request
  const safe = request.method === 'GET' || request.method === 'HEAD'
  const ifMatch = headers['if-match']
  if (ifMatch !== undefined) {
    if (!current || !strongMatch(tagList(ifMatch), current.etag)) throw preconditionFailed('If-Match')
  } else {
    const since = httpDate(headers['if-unmodified-since'])
    if (since !== undefined && current?.lastModified && seconds(current.lastModified) > since) throw preconditionFailed('If-Unmodified-Since')
  }
  const ifNoneMatch = headers['if-none-match']
  if (ifNoneMatch !== undefined) {
    if (current && weakMatch(tagList(ifNoneMatch), current.etag, !safe)) {
      if (safe) return 'not-modified'
      throw preconditionFailed('If-None-Match')
    }
  } else if (safe) {
    const since = httpDate(headers['if-modified-since'])
    if (since !== undefined && current?.lastModified && seconds(current.lastModified) <= since) return 'not-modified'
  }
  return 'proceed'
}

/** Whether a write carries a precondition (If-Modified-Since only applies to reads). */
export const hasPrecondition = ({ headers }: FastifyRequest) =>
  headers['if-match'] !== undefined || headers['if-unmodified-since'] !== undefined || headers['if-none-match'] !== undefined

function preconditionFailed(header: string): ApiError {
  return new ApiError('PRECONDITION_FAILED', `The ${header} precondition failed: the item has changed since you read it. Read it again and retry.`)
}

/** ETag and, for items, Last-Modified (IMF-fixdate, whole seconds). */
export function setValidators(reply: FastifyReply, validators: Validators): void {
  reply.header('etag', validators.etag)
  if (validators.lastModified) reply.header('last-modified', validators.lastModified.toUTCString())
}

/**
 * The caching of a collection read. What a caller may see depends on their credentials, so the
 * response varies on them. It is `public, max-age` when the collection allows caching and the
 * request carries no credentials (RFC 9111 §3.5: a shared cache may otherwise serve it to an
 * authenticated caller); everything else keeps the `no-store` every response starts with.
 */
export function allowCaching(request: FastifyRequest, reply: FastifyReply, maxAge: number | undefined): void {
  appendHeader(reply, 'vary', 'Authorization, Cookie')
  if (maxAge === undefined || request.headers.authorization !== undefined || request.headers.cookie !== undefined) return
  reply.header('cache-control', `public, max-age=${maxAge}`)
}
