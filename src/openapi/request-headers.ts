/**
 * The request headers the service reads, as the document's header parameters: conditional
 * requests (http/conditional.ts), Idempotency-Key (http/idempotency.ts), Prefer
 * (http/prefer.ts) and Last-Event-ID (events/feed.ts). Doc-only: the hooks and handlers read the
 * headers themselves.
 */
import { MAX_KEY_LENGTH } from '../http/idempotency.js'

/** An entity tag list as RFC 9110 §8.8.3 writes it: `"abc"`, `W/"abc"`, `"a", "b"`, or `*`. */
const ENTITY_TAGS = { type: 'string', maxLength: 1024 } as const
/** An HTTP-date (RFC 9110 §5.6.7): `Tue, 24 Nov 2026 08:00:00 GMT`. */
const HTTP_DATE = { type: 'string', maxLength: 64 } as const

const header = (schema: object, description: string) => ({ ...schema, description })

export const REQUEST_HEADERS = {
  'If-Match': header(ENTITY_TAGS, 'Change only if the item still has this ETag: otherwise 412, and nothing is written.'),
  'If-None-Match': header(ENTITY_TAGS, 'On a read: 304 without a body when the ETag is still this one.'),
  'If-Modified-Since': header(HTTP_DATE, 'On a read: 304 when the item has not changed since (If-None-Match wins over it).'),
  'If-Unmodified-Since': header(HTTP_DATE, 'Go ahead only if the item has not changed since: otherwise 412.'),
  'Idempotency-Key': header(
    { type: 'string', minLength: 1, maxLength: MAX_KEY_LENGTH, pattern: '^[\\x21-\\x7e]+$' },
    'A key of your choosing (a UUID): a retry with the same key and body gets the first answer again, and nothing is written twice.',
  ),
  Prefer: header(
    { type: 'string', maxLength: 1024 },
    'On a list, `count=exact`: count every match for X-Total-Count, past COUNT_LIMIT too. On a create or change, `return=minimal`: answer without the item (201 with Location, or 204), with its ETag and Last-Modified. On a create with `on_conflict`, `resolution=merge-duplicates` (change the item that holds the value) or `resolution=ignore-duplicates` (leave it): an upsert.',
  ),
  'Last-Event-ID': header(
    { type: 'string', maxLength: 16, pattern: '^[0-9]*$' },
    'On a stream: the id of the last event received, which a reconnecting EventSource sends; it wins over `after`. Empty: as if absent.',
  ),
} as const

type Name = keyof typeof REQUEST_HEADERS

/** The header parameters a route reads, as a route schema's `headers` (`required`: refused without them). */
export function requestHeaders(names: readonly Name[], required: readonly Name[] = []): object {
  return { type: 'object', properties: Object.fromEntries(names.map((name) => [name, REQUEST_HEADERS[name]])), required }
}
