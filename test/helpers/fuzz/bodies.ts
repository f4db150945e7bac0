/**
 * Bad bodies: JSON objects with a field no route accepts among noise (poisoned), broken as text,
 * bytes or structure; huge ones; plausible ones for writes a failing If-Match stops.
 */
import fc from 'fast-check'
import { choose, KNOWN_NAMES, once, pick, type CallerName, type Family, type Targets } from './shop.js'
import { anyJson, jsonText, NAN_LIKE, nested, obj, ODD_NUMBERS, ODD_STRINGS, raw, type Json } from './values.js'

/**
 * A body, by what makes it bad. `poisoned`: a JSON object with at least one field no route
 * accepts (see FIELD_POISONS), maybe also broken as text or bytes. `plausible`: may be valid; only
 * sent by PUT and PATCH, which `guard` gives an If-Match that cannot hold. `huge`: a poisoned
 * object padded to this many bytes. `taken`: see below.
 */
export type Body =
  | { kind: 'poisoned'; bytes: Buffer }
  | { kind: 'plausible'; bytes: Buffer }
  | { kind: 'huge'; size: number; unit: string }
  /** A create with a unique value already stored, from the caller for whom it is taken (409). */
  | { kind: 'taken'; bytes: Buffer; caller: CallerName }

/** Names no write body has: every body schema is closed (additionalProperties: false), so each is a 422. */
const UNKNOWN_NAMES = [
  'nope', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'isAdmin', 'password_hash', 'passwordHash',
  'secret_hash', '$where', "name' OR '1'='1", 'id; DROP TABLE products', '', ' ', 'a.b', 'tags[0]', 'price[gt]', 'é', 'rating_total',
  'external_subject', 'NAME', 'Price',
]

/**
 * Values no field of any write body takes, in any version: no body field is a boolean, and none
 * is an arbitrary object (v2 amounts need `amount` and nothing unknown).
 */
const WRONG_EVERYWHERE: readonly Json[] = [true, false, obj(), obj(['$gt', '']), obj(['__proto__', obj(['admin', true])]), nested(40)]

/** Values wrong for a field wherever it appears (each name has one meaning across bodies and versions). */
const FIELD_POISONS: readonly [string, readonly Json[]][] = [
  ['rating', [0, 6, 2.5, '5', -1, raw('1e400'), raw('-0.5')]],
  ['quantity', [0, 1001, -1, 1.5, raw('9007199254740993'), '1', raw('1e400')]],
  ['expires_in_days', [0, 366, 1.5, '30', raw('1e400'), -1]],
  ['scopes', [[], ['admin'], ['read', 'read'], 'read', [1], [null]]],
  ['roles', [['root'], ['admin', 'admin'], 'admin', [null], [1]]],
  ['sku', ['lower', 'AB', 'X'.repeat(33), 123, 'SKU 1', '\u0000AAA']],
  ['stock', [-1, 1.5, raw('2147483648'), raw('1e400'), '5']],
  ['price', [-1, '12', raw('1e400'), 12.345, raw('-0.001'), [1]]],
  ['cost', [-1, '1', raw('1e400'), 0.001]],
  ['email', [12, [], null, '']],
  ['password', [12, [], null, '']],
  ['name', [12, null, '', 'n'.repeat(121), raw('-0')]],
  ['note', [12, 'n'.repeat(501), []]],
  ['title', [12, 't'.repeat(121)]],
  ['body', [12, []]],
  ['description', [12, 'd'.repeat(10_001)]],
  ['tags', ['a', [''], ['x', 'x'], [1], Array.from({ length: 21 }, (_, i) => `t${i}`)]],
  ['status', ['sold', 12, '']],
  ['product_id', ['not-a-uuid', 12, '']],
  ['id', ['not-a-uuid', 12]],
  ['created_at', ['yesterday', 12]],
]

const poisonEntry: fc.Arbitrary<[string, Json]> = fc.oneof(
  fc.tuple(pick(UNKNOWN_NAMES), anyJson),
  fc.tuple(pick(KNOWN_NAMES), pick(WRONG_EVERYWHERE)),
  fc.oneof(...FIELD_POISONS.map(([name, values]) => pick(values).map((value): [string, Json] => [name, value]))),
)

const noiseEntry: fc.Arbitrary<[string, Json]> = fc.tuple(pick(KNOWN_NAMES), fc.oneof(anyJson, pick(ODD_NUMBERS), pick(ODD_STRINGS)))

/** A JSON object with at least one poison entry among noise, at any position. */
export const poisonedObject: fc.Arbitrary<Json> = fc
  .tuple(fc.array(noiseEntry, { maxLength: 6 }), fc.array(poisonEntry, { minLength: 1, maxLength: 2 }), fc.nat())
  .map(([noise, poisons, at]) => {
    const entries = [...noise]
    for (const poison of poisons) entries.splice(at % (entries.length + 1), 0, poison)
    return { obj: entries }
  })

export const utf8 = (text: string) => Buffer.from(text, 'utf8')

/** Bytes no UTF-8 decoder accepts, or JSON.parse refuses inside a string. */
const BAD_BYTES = [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x00], [0xf5, 0x80, 0x80, 0x80], [0xe2, 0x82], [0x80], [0x0a], [0x1f]]

/** Strings PostgreSQL cannot store or that are not Unicode text; jsonText writes them as escapes. */
const ESCAPED = ['\u0000', '\ud800', '\udfff', 'x\u0000', '\ud83d'] as const

/** How a poisoned object's text is broken, if it is: the variants of `breakBody`, the plain text most often. */
const BREAKS = ['plain', 'prefix', 'deep', 'deep-arrays', 'duplicate', 'escape', 'bytes', 'not-an-object', 'near-json', 'encoding', 'bom'] as const
type Break = (typeof BREAKS)[number]
const breakArb = fc.oneof({ weight: 5, arbitrary: fc.constant<Break>('plain') }, { weight: 10, arbitrary: pick(BREAKS) })

/** A poisoned object's text, broken as `how` says; each variant keeps the poison. `n` and `depth` choose within a variant. */
function breakBody(object: Json, how: Break, n: number, depth: number): Buffer {
  const text = jsonText(object)
  const entries = (object as { obj: [string, Json][] }).obj
  switch (how) {
    case 'prefix': // a proper prefix of an object's text is never a whole object
      return utf8(text.slice(0, n % text.length))
    case 'deep': // deeper than 64
      return utf8(`${text.slice(0, -1)},"deep":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`)
    case 'deep-arrays':
      return utf8(`{"a":${'['.repeat(depth)}${']'.repeat(depth)},${text.slice(1)}`)
    case 'duplicate': { // a key twice, maybe once escaped
      const key = choose(['rating', 'name', '__proto__', 'a'], n)
      return utf8(`{"${key}":1,${text.slice(1, -1)},"${key.replace('a', '\\u0061')}":2}`)
    }
    case 'escape': // NUL or a lone surrogate, as JSON escapes, in a value or a key
      return utf8(jsonText({ obj: [...entries, n % 2 ? ['title', choose(ESCAPED, n)] : [choose(ESCAPED, n), 1]] }))
    case 'bytes': { // raw bytes that are not UTF-8, or are control characters inside a string
      const inside = text.indexOf('"') + 1
      return Buffer.concat([utf8(text.slice(0, inside)), Buffer.from(choose(BAD_BYTES, n)), utf8(text.slice(inside))])
    }
    case 'not-an-object':
      return utf8(choose([`[${text}]`, `"${text.replace(/"/g, "'")}"`, '1', 'null', 'true', '[]', '""', '   ', ''], n))
    case 'near-json': // JSON.parse's neighbours: trailing text, comments, single quotes, NaN-like numbers
      return utf8(choose([`${text}x`, `${text}${text}`, `/*c*/${text}`, text.replace(/"/g, "'"), '{"a":1,}', '{a:1}', `{"price":${choose(NAN_LIKE, n)},${text.slice(1)}`], n))
    case 'encoding':
      return Buffer.from(`${text.slice(0, -1)},"x":"é\u00ff"}`, choose(['utf16le', 'latin1'] as const, n))
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8(text)])
    case 'plain':
      return utf8(text)
  }
}

/** A poisoned object, then maybe broken: as text, as bytes, by structure. */
export const poisonedBody: fc.Arbitrary<Body> = fc
  .tuple(poisonedObject, breakArb, fc.nat(), fc.integer({ min: 65, max: 3000 }))
  .map(([object, how, n, depth]): Body => ({ kind: 'poisoned', bytes: breakBody(object, how, n, depth) }))

/** Bodies from 1 MiB minus a little to a few MiB: a poisoned object padded out (multi-byte padding too). */
export const hugeBody: fc.Arbitrary<Body> = fc.record({
  size: pick([1024 * 1024 - 64, 1024 * 1024, 1024 * 1024 + 1, 1024 * 1024 + 4096, 1536 * 1024, 2 * 1024 * 1024]),
  unit: pick(['x', 'é', '\\u0000', '[']),
}).map(({ size, unit }): Body => ({ kind: 'huge', size, unit }))

/** The bytes of a huge body: `{"rating":true,"description":"…"}` of exactly `size` bytes (a multi-byte unit may end one short). */
export function hugeBytes({ size, unit }: { size: number; unit: string }): Buffer {
  const head = '{"rating":true,"description":"'
  const tail = '"}'
  const room = size - head.length - tail.length
  const unitBytes = Buffer.byteLength(unit)
  return utf8(head + unit.repeat(Math.floor(room / unitBytes)) + 'x'.repeat(room % unitBytes) + tail)
}

/** Bodies that may well be valid for a PUT or PATCH of `family`, with odd but allowed values. */
export const plausibleBody = once((family: Family, v2: boolean, targets: Targets): fc.Arbitrary<Body> => {
  const money = (amount: fc.Arbitrary<Json>) => (v2 ? amount.map((a) => obj(['amount', a])) : amount)
  const amount = money(fc.oneof(pick([0, 0.01, 9999999999.99, raw('-0'), raw('1.10'), raw('5e1')]), fc.integer({ min: 0, max: 1000 })))
  const text = (max: number) => fc.oneof(fc.string({ minLength: 1, maxLength: max }), pick(ODD_STRINGS.filter((s) => s.length > 0 && s.length <= max)))
  const fields: Record<Family, Record<string, fc.Arbitrary<Json>>> = {
    products: {
      name: text(120), sku: fc.stringMatching(/^[A-Z0-9-]{3,32}$/), price: amount, cost: fc.oneof(amount, fc.constant(null)),
      stock: pick([0, 2147483647, raw('-0'), 1, null]), status: pick(['draft', 'active', 'archived', null]),
      description: fc.oneof(text(10_000), fc.constant(null)), tags: fc.uniqueArray(text(40), { maxLength: 20 }),
    },
    reviews: { rating: fc.integer({ min: 1, max: 5 }), title: fc.oneof(text(120), fc.constant(null)), body: fc.oneof(text(300), fc.constant(null)) },
    users: {
      email: pick(['a@b.co', 'A@B.CO', 'x@' + 'y'.repeat(60) + '.com', 'user1.1@shop.test']), name: text(120),
      password: fc.string({ minLength: 12, maxLength: 64 }), roles: pick([[], ['admin']]),
    },
    orders: { note: fc.oneof(text(500), fc.constant(null)) },
    items: { product_id: fc.oneof(pick(targets.products), fc.uuid()), quantity: fc.integer({ min: 1, max: 1000 }) },
    tokens: { name: text(120) },
    sessions: { email: text(254), password: text(64) },
  }
  return fc.record(fields[family], { requiredKeys: [] }).map((record) => ({ kind: 'plausible', bytes: utf8(jsonText({ obj: Object.entries(record) as [string, Json][] })) }))
})

