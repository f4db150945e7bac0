/**
 * The change feed, `GET /events` (admins): every committed change in the order transactions
 * ended, resumable with `after=<the last id you saw>`, filtered by `type` (exact, or
 * `<collection>.*`) and `collection`, paged by `size`. Events older than EVENTS_RETENTION_DAYS are
 * deleted; an `after` older than every kept event is 410 EVENTS_EXPIRED, so a client knows to read
 * the items again.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { authorize } from '../auth/access.js'
import { START, type EventLog, type EventQuery, type Position } from '../db/events.js'
import { EVENT_STREAM, type EventStreams } from './stream.js'
import { ApiError, type ErrorDetail } from '../errors.js'
import { requestPath } from '../http/request-target.js'
import { appendHeader } from '../http/response-headers.js'
import { linkPrefix } from '../resources/list-query/links.js'
import type { RawQuery } from '../resources/list-query/parse.js'
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../resources/list-query/plan.js'
import { MAX_FILTER_LENGTH } from '../resources/list-query/values.js'
import { EventId, Id, Int32, MAX_EVENT_ID, Nullable, Timestamp } from '../schema-types.js'
import { REQUIRED_AUTH } from '../openapi/document.js'
import { requestHeaders } from '../openapi/request-headers.js'
import { errors, success } from '../openapi/responses.js'

const PARAMETERS = new Set(['after', 'type', 'collection', 'size'])
/** `products.created`, or `orders.*` for every type of a collection. */
const TYPE = /^([a-z][a-z0-9_]*)\.(\*|[a-z][a-z0-9_]*)$/
const COLLECTION = /^[a-z][a-z0-9_]*$/

/** A comma-separated list of what `one` matches, as a pattern for the document. */
const listOf = (one: RegExp) => `^${one.source.slice(1, -1)}(,${one.source.slice(1, -1)})*$`

/** `$id` of an event, a component of each version's document (`#/components/schemas/Event`). */
const EVENT_SCHEMA_ID = 'Event'

const Event = Type.Object({
  id: EventId({ description: 'Increases within a transaction; use the last one you saw as `after`.' }),
  type: Type.String(),
  collection: Type.String(),
  item_id: Id(),
  occurred_at: Timestamp(),
  actor_id: Nullable(Id(), { description: 'The user who made the change; null when nobody was signed in (an open registration).' }),
  data: Type.Object({}, { additionalProperties: true }),
})

/**
 * What the stream carries, for the document: text, where the page is a JSON array. Documentation
 * only: the stream is written as it goes (stream.ts), never serialized.
 */
const STREAM_BODY = {
  type: 'string',
  description: 'Server-sent events (HTML Living Standard §9.2): a `retry:` line, then per event `id:` (its id, for `after` or Last-Event-ID), `event:` (its type) and `data:` (the event as JSON, as in a page); `:` comment lines keep the connection open.',
}

/** What a feed request asks for: after which event, which ones, how many. */
interface FeedRequest {
  afterId: number
  filter: Pick<EventQuery, 'types' | 'prefixes' | 'collections'>
  limit: number
}

/** The query of a feed request; 400 naming every parameter that is not one. */
function parseFeedQuery(query: RawQuery): FeedRequest {
  const problems: ErrorDetail[] = []
  for (const name of Object.keys(query)) if (!PARAMETERS.has(name)) problems.push({ field: name, reason: 'is not a parameter of the event feed' })
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = query[name]
    if (raw === undefined) return fallback
    if (typeof raw !== 'string' || !/^\d{1,16}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push({ field: name, reason: `must be a whole number from ${min} to ${max}` })
      return fallback
    }
    return Number(raw)
  }
  // Every value of a list: repeated, or comma-separated; each parameter at most MAX_FILTER_LENGTH long.
  const values = (name: string): string[] => {
    const raws = [query[name] ?? []].flat()
    if (raws.every((raw) => raw.length <= MAX_FILTER_LENGTH)) return raws.flatMap((raw) => raw.split(','))
    problems.push({ field: name, reason: `must be at most ${MAX_FILTER_LENGTH} characters; repeat ${name}= for more` })
    return []
  }
  const afterId = integer('after', 0, 0, MAX_EVENT_ID)
  const limit = integer('size', DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE)
  const types: string[] = []
  const prefixes: string[] = []
  for (const type of values('type')) {
    const match = TYPE.exec(type)
    if (!match) problems.push({ field: 'type', reason: `"${type}" is not an event type such as products.created or orders.*` })
    else if (match[2] === '*') prefixes.push(match[1]!)
    else types.push(type)
  }
  const collections = values('collection')
  for (const name of collections) if (!COLLECTION.test(name)) problems.push({ field: 'collection', reason: `"${name}" is not a collection name` })
  if (problems.length > 0) throw new ApiError('INVALID_PARAMETER', `Invalid query parameters: ${problems.map((p) => p.field).join(', ')}.`, problems)
  return { afterId, filter: { types, prefixes, collections }, limit }
}

/** Where event `after` stands: 410 when it is no longer kept, 400 when it names none at all. */
async function positionOf(log: EventLog, after: number, field: string): Promise<Position> {
  if (after === 0) return START
  const where = await log.locate(after)
  if (where === 'pruned') throw new ApiError('EVENTS_EXPIRED', `Event ${after} is older than every event still kept; read the items again, then follow the feed from its end.`)
  if (where === 'unknown') throw new ApiError('INVALID_PARAMETER', undefined, [{ field, reason: `names no event: use the id of an event you read` }])
  return where
}

/** `Last-Event-ID`, which a reconnecting EventSource sends: an event id, else a 400. */
function lastEventId(request: FastifyRequest): number | undefined {
  const header = request.headers['last-event-id']
  if (header === undefined || header === '') return undefined
  if (typeof header !== 'string' || !/^\d{1,16}$/.test(header)) throw new ApiError('BAD_REQUEST', 'Last-Event-ID must be the id of an event.', [{ field: 'Last-Event-ID', reason: 'is not an event id' }])
  return Number(header)
}

/** `GET /events` on a version's plugin, which gets the Event schema (one per version: its document's component). */
export function registerEventFeed(app: FastifyInstance, log: EventLog, streams: EventStreams): void {
  app.addSchema({ ...Event, $id: EVENT_SCHEMA_ID })
  const page = Type.Array(Type.Ref(EVENT_SCHEMA_ID), { maxItems: MAX_PAGE_SIZE })
  // Link only on a page: a stream resumes by its events' ids.
  const answer = success('Events after `after`, oldest first; on a page, Link rel="next" resumes after the last.', page, ['Link?'])
  const schema = {
    tags: ['events'], operationId: 'listEvents', summary: 'The change feed: a page of events, or a stream (Accept: text/event-stream)', security: REQUIRED_AUTH,
    description: 'Admins only. Events after `after` (an id, or Last-Event-ID on a stream), oldest first, filtered by type and collection; 410 when `after` is older than the retention.',
    produces: ['application/json', EVENT_STREAM],
    response: { 200: answer },
  }
  // The document's 200 has a schema per media type. The route keeps one: Fastify picks a `content`
  // serializer by the reply's type, and would find none for the version's vendor type.
  const { description, headers } = answer as unknown as { description: string; headers: object }
  const documented = { description, headers, content: { 'application/json': { schema: page }, [EVENT_STREAM]: { schema: STREAM_BODY } } }
  const query = Type.Object({
    after: Type.Optional(EventId({ minimum: 0, description: 'The id of the last event you saw; 0 or absent: from the oldest kept.' })),
    type: Type.Optional(Type.String({
      pattern: listOf(TYPE),
      maxLength: MAX_FILTER_LENGTH,
      description: 'Event types, comma-separated: `products.created`, or `orders.*` for every type of a collection.',
    })),
    collection: Type.Optional(Type.String({ pattern: listOf(COLLECTION), maxLength: MAX_FILTER_LENGTH, description: 'Collections, comma-separated.' })),
    size: Type.Optional(Int32({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: 'Events per page.' })),
  })
  const document = { querystring: query, headers: requestHeaders(['Last-Event-ID']), responses: { ...errors([403, 410]), 200: documented } }
  app.get('/events', { config: { mediaTypes: [EVENT_STREAM], document }, schema }, async (request: FastifyRequest, reply) => {
    authorize('admin', request.caller, 'read the events')
    const raw = request.query as RawQuery
    const query = parseFeedQuery(raw)
    if (request.responseType === EVENT_STREAM) {
      // A reconnecting client's Last-Event-ID wins over the after= of the URL it first opened.
      const resumed = lastEventId(request)
      const start = await positionOf(log, resumed ?? query.afterId, resumed === undefined ? 'after' : 'Last-Event-ID')
      return streams.open(request, reply, start, query.filter)
    }
    const after = await positionOf(log, query.afterId, 'after')
    const events = await log.page({ after, ...query.filter, limit: query.limit })
    // The feed has no end: `next` resumes after this page, or where it stands when the page is empty.
    const next = events.at(-1)?.id ?? query.afterId
    appendHeader(reply, 'link', `<${linkPrefix(requestPath(request), raw, 'after')}after=${next}>; rel="next"`)
    return events
  })
}
