/** Generated bad requests over every route and method of the shop (fast-check), for test/limits/fuzz.test.ts. */
import fc from 'fast-check'
import { hugeBody, plausibleBody, poisonedBody, poisonedObject, utf8, type Body } from './bodies.js'
import { badQuery } from './queries.js'
import { CALLERS, choose, FAMILIES, once, pick, PREFIXES, type CallerName, type Family, type Targets } from './shop.js'
import { BAD_IF_MATCH, badHeader, badIds, jsonText, obj, ODD_STRINGS, percentEncode, raw, unsendableByFetch, type Json } from './values.js'

/** Answers below Fastify's routing the fuzz test tolerates in their old form (see knownDeviation there). */
export type Known = 'expect' | 'no-host' | 'connect'

export interface BadRequest {
  /** The family of bad input, for the summary. */
  kind: string
  caller: CallerName
  method: string
  path: string
  headers: [string, string][]
  body?: Body
  /** `raw`: over a bare socket, for what fetch refuses or rewrites. */
  transport: 'fetch' | 'raw'
  /** A whole request written as is (protocol garbage, always anonymous); method and path describe it. */
  wire?: { bytes: Buffer; known?: Known }
  /** How the request is kept from changing data; set by `guard`. */
  guarantee?: string
}

/** A route of the shop: its path, and whether it names an item or a collection. */
interface Route {
  family: Family
  prefix: string
  path: string
  item: boolean
}

const itemId = once((family: Family, targets: Targets): fc.Arbitrary<[string | undefined, string]> => {
  const pairWith = (parents: readonly string[], id: fc.Arbitrary<string>) => fc.tuple(pick(parents), id)
  const real: Record<Family, fc.Arbitrary<[string | undefined, string]>> = {
    products: pick(targets.products).map((id): [undefined, string] => [undefined, id]),
    users: pick(targets.users).map((id): [undefined, string] => [undefined, id]),
    orders: pick(targets.orders).map((id): [undefined, string] => [undefined, id]),
    // Under its own parent, or under another one.
    reviews: fc.oneof(pick(targets.reviews), pairWith(targets.products, pick(targets.reviews.map(([, id]) => id)))),
    items: fc.oneof(pick(targets.items), pairWith(targets.orders, pick(targets.items.map(([, id]) => id)))),
    // Never a stored token: a DELETE of one would revoke it (it has no precondition).
    tokens: fc.uuid().map((id): [undefined, string] => [undefined, id]),
    sessions: pick(['current', 'Current', 'current%00', 'me', 'current.json']).map((id): [undefined, string] => [undefined, id]),
  }
  const parents = family === 'reviews' ? targets.products : family === 'items' ? targets.orders : [undefined]
  const bad = badIdOf(targets)
  return fc.oneof(
    { weight: 4, arbitrary: real[family] },
    { weight: 1, arbitrary: fc.tuple(pick(parents), fc.uuid()) },
    { weight: 2, arbitrary: fc.tuple(pick(parents), bad) },
    { weight: 1, arbitrary: fc.tuple(bad.map((p) => (parents[0] === undefined ? undefined : p)), fc.uuid()) },
  )
})

/** A bad id made from any stored one (upper-cased, padded, encoded...), or from nothing. */
const badIdOf = once((targets: Targets) => fc.oneof(...[...targets.products, ...targets.users, ...targets.orders].map(badIds)))

const parentPath = (family: Family, parent: string | undefined) =>
  family === 'reviews' ? `/products/${parent}/reviews` : family === 'items' ? `/orders/${parent}/items` : `/${family}`

/** A route of one family, or of any; an item or a collection, or either. */
const route = once((targets: Targets, item?: boolean, only?: Family): fc.Arbitrary<Route> =>
  fc.oneof(
    ...(only ? [only] : FAMILIES).map((family) =>
      fc.tuple(pick(PREFIXES), item === undefined ? fc.boolean() : fc.constant(item), itemId(family, targets)).map(([prefix, isItem, [parent, id]]) => ({
        family,
        prefix,
        item: isItem,
        path: prefix + parentPath(family, parent) + (isItem ? `/${id}` : ''),
      })),
    ),
  ),
)

const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'application/merge-patch+json', 'application/vnd.resourceful.v2+json'] as const

/** A request's credentials are its caller's; generated headers may replace them with garbage. */
const callerArb = fc.oneof(
  { weight: 2, arbitrary: fc.constant<CallerName>('anonymous') },
  { weight: 3, arbitrary: fc.constant<CallerName>('user') },
  { weight: 3, arbitrary: fc.constant<CallerName>('admin') },
  { weight: 1, arbitrary: pick(CALLERS) },
)

const maybeHeaders = once((max: number): fc.Arbitrary<[string, string][]> =>
  fc.oneof({ weight: 3, arbitrary: fc.constant<[string, string][]>([]) }, { weight: 2, arbitrary: fc.array(badHeader, { maxLength: max }) }),
)

interface Draft {
  kind: string
  /** Who sends it, when it must be one caller. */
  caller?: CallerName
  method: string
  path: string
  headers?: [string, string][]
  body?: Body
  raw?: boolean
}

/** Bodies of every kind to writes on every route; always poisoned (POST) or plausible under a bad If-Match (PUT, PATCH). */
function bodyRequests(targets: Targets): fc.Arbitrary<Draft> {
  const writes = (['POST', 'PUT', 'PATCH'] as const).flatMap((method) =>
    FAMILIES.map((family) => {
      const plausible = fc.oneof(plausibleBody(family, false, targets), plausibleBody(family, true, targets))
      // About one body in 200 is huge: a 1 MiB body costs what a thousand small ones do.
      const body = fc.oneof({ weight: 1, arbitrary: hugeBody }, { weight: 199, arbitrary: method === 'POST' ? poisonedBody : fc.oneof(poisonedBody, plausible) })
      return fc.tuple(route(targets, method !== 'POST', family), body, pick(CONTENT_TYPES), maybeHeaders(2), fc.boolean()).map(([r, chosen, type, headers, rawTransport]): Draft => ({
        kind: `body:${chosen.kind}`,
        method,
        path: r.path,
        headers: [['content-type', type], ...headers],
        body: chosen,
        raw: rawTransport && chosen.kind !== 'huge',
      }))
    }),
  )
  return fc.oneof(...writes)
}

function queryRequests(targets: Targets): fc.Arbitrary<Draft> {
  const ids = [...targets.products, ...targets.users, ...targets.orders]
  return fc.oneof(
    ...FAMILIES.map((family) =>
      fc.tuple(route(targets, false, family), pick(['GET', 'GET', 'GET', 'HEAD']), maybeHeaders(1), fc.boolean(), badQuery(family, ids)).map(
        ([r, method, headers, rawTransport, query]): Draft => ({ kind: 'query', method, path: `${r.path}?${query}`, headers, raw: rawTransport }),
      ),
    ),
  )
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
const ODD_METHODS = ['TRACE', 'TRACK', 'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'SEARCH', 'PURGE', 'REPORT', 'MERGE', 'NOTIFY', 'SUBSCRIBE', 'LINK', 'QUERY', 'get', 'Delete', 'patch', 'FOO', 'GETS']

/** Paths with bad or tricky ids and segments, every method; writes carry poisoned bodies. */
function pathRequests(targets: Targets): fc.Arbitrary<Draft> {
  const mangle = fc.oneof(
    route(targets).map((r) => r.path),
    fc.tuple(route(targets), pick(['/', '//', '/.', '/..', '/%2e%2e', '/../users', '/./', ';x', '%00', '%2F', '/x/y/z', '.json', '~'])).map(([r, s]) => r.path + s),
    route(targets).map((r) => r.path.replace('/api/v', choose(['/api/v0', '/api/v3', '/api/v99999999999999999999', '/API/v', '/api/V', '/api//v'], r.path.length))),
    route(targets).map((r) => r.path.replace('/api/v1', '/api').replace('/api/v2', '/api')),
    route(targets).map((r) => r.path.replace(/\/(products|orders|users|tokens|sessions)/, (m) => m.toUpperCase())),
    badIdOf(targets).map((id) => `/api/v1/${id}`),
    fc.string({ unit: 'binary', maxLength: 30 }).map((s) => `/api/v2/${percentEncode(s)}`),
    pick(['/', '', '*', '/api', '/api/', '/api/v1', '/api/v2/', '/favicon.ico', '/.env', '/api/v1/../../etc/passwd', '/%2e%2e/%2e%2e/', `/api/v1/products/${'x/'.repeat(500)}`]),
    // Unencoded bytes: Latin-1, UTF-8 as Latin-1 characters, in an id and before a trailing slash (a redirect's Location).
    pick(['/api/v1/products/caf\u00e9', '/api/v1/products/\u00ff/', '/api/v2/orders/\u00c3\u00a9/items', '/api/v1/users/\u0080', '/api/\u00e9/']),
  )
  return fc.tuple(mangle, fc.oneof(pick(METHODS), pick(ODD_METHODS)), poisonedBody, maybeHeaders(1), fc.boolean()).map(([path, method, body, headers, rawTransport]) => {
    const writes = ['POST', 'PUT', 'PATCH'].includes(method.toUpperCase())
    // fetch upper-cases some methods and warns about a lower-case `patch`: odd cases go as written.
    const raw = rawTransport || method !== method.toUpperCase() || !path.startsWith('/') || unsendableByFetch(path) || /[\x80-\xff]/.test(path)
    return { kind: 'path', method, path: path.startsWith('/') || path === '*' ? path : `/${path}`, headers: writes ? [['content-type', 'application/json'], ...headers] : headers, body: writes ? body : undefined, raw }
  })
}


/** Garbage headers on every route and method; writes are poisoned or under a bad If-Match. */
function headerRequests(targets: Targets): fc.Arbitrary<Draft> {
  const byMethod = [...METHODS, 'PROPFIND', 'QUERY'].map((method) => {
    const writes = ['POST', 'PUT', 'PATCH'].includes(method)
    const target = method === 'POST' ? route(targets, false) : ['PUT', 'PATCH', 'DELETE'].includes(method) ? route(targets, true) : route(targets)
    return fc.tuple(target, fc.array(badHeader, { minLength: 1, maxLength: 4 }), poisonedBody).map(([r, headers, body]): Draft => ({
      kind: `header:${headers[0]![0]}`,
      method,
      path: r.path,
      headers: writes ? [['content-type', 'application/json'], ...headers] : headers,
      body: writes ? body : undefined,
      raw: headers.some(([, v]) => unsendableByFetch(v)),
    }))
  })
  return fc.oneof(...byMethod)
}

/** Methods Fastify routes nowhere, fetch refuses, or HTTP does not know; writes poisoned. */
function methodRequests(targets: Targets): fc.Arbitrary<Draft> {
  return fc.tuple(route(targets), pick(ODD_METHODS), fc.boolean(), poisonedBody).map(([r, method, withBody, body]) => ({
    kind: 'method',
    method,
    path: r.path,
    headers: withBody ? [['content-type', 'application/json']] : [],
    body: withBody ? body : undefined,
    raw: true,
  }))
}

/** Plausible PUT and PATCH bodies and DELETEs on stored items: `guard` adds an If-Match that cannot hold. */
function preconditionRequests(targets: Targets): fc.Arbitrary<Draft> {
  const requests = (['PUT', 'PATCH', 'DELETE'] as const).flatMap((method) =>
    FAMILIES.map((family) => {
      const body = method === 'DELETE' ? fc.constant(undefined) : fc.oneof(plausibleBody(family, false, targets), plausibleBody(family, true, targets))
      return fc.tuple(route(targets, true, family), body, maybeHeaders(2), pick(BAD_IF_MATCH)).map(([r, chosen, headers, ifMatch]): Draft => ({
        kind: 'precondition',
        method,
        path: r.path,
        headers: [['if-match', ifMatch], ...(chosen ? [['content-type', choose(CONTENT_TYPES, ifMatch.length)] as [string, string]] : []), ...headers],
        body: chosen,
        raw: unsendableByFetch(ifMatch),
      }))
    }),
  )
  return fc.oneof(...requests)
}

/**
 * Creates that reach the insert and fail there: a product with a stored SKU (as the admin), a
 * second review of a product by its author. The unique row is never changed or deleted (every
 * other write fails), so each is a 409, or a 422 when another field is wrong.
 */
function takenRequests(targets: Targets): fc.Arbitrary<Draft> {
  const text = (max: number) => fc.oneof(fc.string({ minLength: 1, maxLength: max }), pick(ODD_STRINGS.filter((s) => s.length > 0 && s.length <= max)))
  const entries = (record: Record<string, Json>) => utf8(jsonText({ obj: Object.entries(record) }))
  const product = fc.tuple(
    fc.record({ name: text(120), sku: pick(targets.skus), price: pick<Json>([0, 9999999999.99, raw('-0'), 12.5]) }),
    fc.record({ cost: pick<Json>([null, 0.01]), stock: pick<Json>([0, 2147483647]), status: pick(['draft', 'active']), description: text(10_000), tags: fc.uniqueArray(text(40), { maxLength: 20 }) }, { requiredKeys: [] }),
    pick(PREFIXES),
  ).map(([required, optional, prefix]): Draft => {
    const v2 = prefix === '/api/v2'
    const body = { ...required, ...optional, ...(v2 ? { price: obj(['amount', required.price]) } : {}) } as Record<string, Json>
    if (v2 && typeof optional.cost === 'number') body.cost = obj(['amount', optional.cost])
    return { kind: 'taken', method: 'POST', path: `${prefix}/products`, headers: [['content-type', 'application/json']], body: { kind: 'taken', bytes: entries(body), caller: 'admin' }, caller: 'admin' }
  })
  const review = fc.tuple(
    fc.record({ rating: fc.integer({ min: 1, max: 5 }) }),
    fc.record({ title: fc.oneof(text(120), fc.constant(null)), body: fc.oneof(text(10_000), fc.constant(null)) }, { requiredKeys: [] }),
    pick(PREFIXES),
    pick(targets.reviewedByUser),
  ).map(([required, optional, prefix, productId]): Draft => ({
    kind: 'taken',
    method: 'POST',
    path: `${prefix}/products/${productId}/reviews`,
    headers: [['content-type', 'application/json']],
    body: { kind: 'taken', bytes: entries({ ...required, ...optional }), caller: 'user' },
    caller: 'user',
  }))
  return fc.tuple(fc.oneof(product, review), maybeHeaders(1)).map(([draft, headers]) => ({ ...draft, headers: [...draft.headers!, ...headers] }))
}

const wire = (text: string, known?: Known) => ({ bytes: Buffer.from(text, 'latin1'), known })

/**
 * Protocol garbage written as is, anonymous, never naming a stored item: request lines, versions,
 * header syntax, framing. Writes carry poisoned bodies.
 */
function wireRequests(): fc.Arbitrary<Draft & { wire: NonNullable<BadRequest['wire']> }> {
  const H = 'Host: 127.0.0.1\r\n'
  const C = 'Connection: close\r\n'
  return fc.tuple(poisonedObject, pick(['/api/v1/products', '/api/v2/orders', '/api/v1/users?x=1', '/api/v2/products/00000000-0000-7000-8000-000000000000']), fc.oneof({ weight: 199, arbitrary: fc.integer({ min: 0, max: 22 }) }, { weight: 1, arbitrary: fc.constant(23) }))
    .map(([object, target, variant]) => {
      // ASCII only (escaped), so that the latin1 bytes written are the lengths declared.
      const body = jsonText(object).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
      const len = body.length
      const post = (headers: string) => `POST ${target} HTTP/1.1\r\n${H}${C}${headers}\r\n`
      const json = 'Content-Type: application/json\r\n'
      const texts: [string, string, Known?][] = [
        ['request line: version', `GET ${target} ${choose(['HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'http/1.1', 'HTTP/1.1x', 'HTTP/1.12', 'HTTP/ 1.1', ''], len)}\r\n${H}${C}\r\n`],
        ['request line: absolute form', `GET http://127.0.0.1${target} HTTP/1.1\r\n${H}${C}\r\n`],
        ['request line: foreign absolute form', `DELETE http://evil.example${target} HTTP/1.1\r\n${H}${C}\r\n`],
        ['request line: asterisk', `${choose(['OPTIONS', 'GET', 'DELETE'], len)} * HTTP/1.1\r\n${H}${C}\r\n`],
        ['request line: relative', `GET ${target.slice(1)} HTTP/1.1\r\n${H}${C}\r\n`],
        ['request line: bytes', `GET ${target}\xff\x01 HTTP/1.1\r\n${H}${C}\r\n`],
        ['request line: spaces', `GET  ${target}  HTTP/1.1\r\n${H}${C}\r\n`],
        ['request line: lowercase method', `${choose(['get', 'post', 'delete'], len)} ${target} HTTP/1.1\r\n${H}${C}\r\n`],
        ['header syntax', `GET ${target} HTTP/1.1\r\n${H}${C}${choose(['NoColon', ' Leading: x', 'Bad Name: x', 'X: a\x00b', 'X: a\rb', 'X: a\r\n  folded', ': empty', 'X:\x7f'], len)}\r\n\r\n`],
        ['bare LF', `GET ${target} HTTP/1.1\n${H.trim()}\n${C.trim()}\n\n`],
        ['content-length: garbage', post(`${json}Content-Length: ${choose(['abc', '-1', '1e3', ' ', '0x10', '99999999999999999999'], len)}\r\n`) + body],
        ['content-length: twice', post(`${json}Content-Length: ${len}\r\nContent-Length: ${len + 1}\r\n`) + body],
        ['content-length and chunked', post(`${json}Content-Length: ${len}\r\nTransfer-Encoding: chunked\r\n`) + body],
        ['chunked: bad sizes', post(`${json}Transfer-Encoding: chunked\r\n`) + `${choose(['zz', '-1', 'x1', '1;x=\x00'], len)}\r\n${body}\r\n0\r\n\r\n`],
        ['chunked: other coding', post(`${json}Transfer-Encoding: ${choose(['xchunked', 'chunked, identity', 'gzip', 'identity'], len)}\r\n`) + body],
        ['chunked: poisoned', post(`${json}Transfer-Encoding: chunked\r\n`) + `${len.toString(16)}\r\n${body}\r\n0\r\n\r\n`],
        ['expect: 100-continue', post(`${json}Expect: 100-continue\r\nContent-Length: ${len}\r\n`) + body],
        ['expect: garbage', `GET ${target} HTTP/1.1\r\n${H}${C}Expect: ${choose(['nonsense', '100-continue-x', '200-ok', ''], len)}\r\n\r\n`, 'expect'],
        ['no host', `GET ${target} HTTP/1.1\r\n${C}\r\n`, 'no-host'],
        ['host twice', `GET ${target} HTTP/1.1\r\n${H}Host: evil.example\r\n${C}\r\n`],
        ['connect', `CONNECT 127.0.0.1:5432 HTTP/1.1\r\n${H}${C}\r\n`, 'connect'],
        ['many headers', `GET ${target} HTTP/1.1\r\n${H}${C}${Array.from({ length: 500 }, (_, i) => `X-${i}: ${i}\r\n`).join('')}\r\n`],
        ['long header', `GET ${target} HTTP/1.1\r\n${H}${C}X-Long: ${'a'.repeat(choose([8000, 17_000, 70_000], len))}\r\n\r\n`],
        // Last, and rare: a megabyte each.
        ['chunked: over 1 MiB', post(`${json}Transfer-Encoding: chunked\r\n`) + `${(1024 * 1024 + 16).toString(16)}\r\n${body}${' '.repeat(1024 * 1024 + 16 - len)}\r\n0\r\n\r\n`],
      ]
      const [kind, text, known] = texts[variant]!
      return { kind: `wire:${kind}`, method: text.split(' ', 1)[0]!, path: target, wire: wire(text, known) }
    })
}

/** Every kind of bad request, with its caller; `guard` is applied by the caller of this. */
export function badRequest(targets: Targets): fc.Arbitrary<BadRequest> {
  const draft: fc.Arbitrary<Draft & { wire?: BadRequest['wire'] }> = fc.oneof(
    { weight: 28, arbitrary: bodyRequests(targets) },
    { weight: 22, arbitrary: queryRequests(targets) },
    { weight: 8, arbitrary: preconditionRequests(targets) },
    { weight: 12, arbitrary: pathRequests(targets) },
    { weight: 18, arbitrary: headerRequests(targets) },
    { weight: 4, arbitrary: methodRequests(targets) },
    { weight: 6, arbitrary: wireRequests() },
    { weight: 3, arbitrary: takenRequests(targets) },
  )
  return fc.tuple(draft, callerArb).map(([d, caller]) => ({
    kind: d.kind,
    caller: d.wire ? 'anonymous' : (d.caller ?? caller),
    method: d.method,
    path: d.path,
    headers: d.headers ?? [],
    body: d.body,
    transport: d.raw || d.wire ? 'raw' : 'fetch',
    wire: d.wire,
  }))
}

