/** Bad query strings for lists: unknown, repeated and SQL-laden parameters, edge values, forged cursors. */
import fc from 'fast-check'
import type { FieldKind } from '../../../src/resources/fields.js'
import { choose, once, pick, SPECS, type Family } from './shop.js'
import { anyJson, jsonText, obj, ODD_STRINGS, queryText, type Json } from './values.js'

/** Values at the edges of what a filter of this kind reads: some valid, some one step beyond. */
const EDGE_VALUES: Record<FieldKind, readonly string[]> = {
  integer: ['0', '-1', '2147483647', '-2147483648', '2147483648', '-0', '007', '1e3', '999999999999999', '-999999999999999', '1.5', '5'],
  number: ['0', '-0', '0.00', '9999999999.99', '9999999999.995', '999999999999999.999999999999999', '0.000000000000001', '-1', '1e5', '.5', '5.', '10.5'],
  datetime: [
    '0001-01-01T00:00:00+23:59', '0001-01-01T00:00:00+14:00', '0001-01-01', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59-23:59', '9999-12-31',
    '2024-02-29', '2023-02-29', '2024-01-01T24:00:00Z', '2024-01-01T23:59:60Z', '2024-01-01T00:00:00.999999Z', '1970-01-01T00:00:00Z',
    '2024-01-01t00:00:00z', '2024-01-01 00:00:00Z', '2026-01-01T00:00:00+00:00',
  ],
  uuid: ['00000000-0000-0000-0000-000000000000', 'not-a-uuid', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', '01890000-0000-7000-8000-000000000000'],
  enum: ['draft', 'active', 'archived', 'pending', 'paid', 'admin', 'nope', '', 'DRAFT'],
  string: ['\\', '%', '_', '\u0000', 'x'.repeat(1000), 'x'.repeat(1001), 'é', "'", '\ud83d\ude00', '%_\\', 'a'],
  boolean: ['true', 'false', 'TRUE', '1', ''],
  'string[]': ['a', '', '\\', 'x'.repeat(41), 'admin'],
}

/** Wrong values for a cursor's sort key of this kind. */
const CURSOR_VALUES: Record<FieldKind, readonly Json[]> = {
  integer: ['5', 1.5, 2 ** 53 + 1, -2147483649, 1e308, null, obj(), [], true],
  number: [5, '1e5', '99999999999999999', 'NaN', '12.345', '9999999999.999'],
  datetime: [0, 'now', '275760-09-13T00:00:00Z', '2024-02-30', null],
  uuid: ['not-a-uuid', 123, ''],
  enum: ['nope', 1, ''],
  string: [5, null, ['a']],
  boolean: ['true', 1],
  'string[]': [[], 'x'],
}

/** A cursor value of this kind: an edge value of the type a cursor holds (mostly), or a wrong one. */
const cursorValue = once((kind: FieldKind, ids: readonly string[]): fc.Arbitrary<Json> => {
  const typed = (text: string): Json => (kind === 'integer' && /^-?\d+$/.test(text) ? Number(text) : kind === 'boolean' ? text === 'true' : text)
  return fc.oneof(
    { weight: 4, arbitrary: kind === 'uuid' ? fc.oneof(pick(ids), pick(ids).map((id) => id.toUpperCase()), pick(EDGE_VALUES.uuid)) : pick(EDGE_VALUES[kind]).map(typed) },
    { weight: 1, arbitrary: pick(CURSOR_VALUES[kind]) },
    { weight: 1, arbitrary: anyJson },
  )
})

/** A forged cursor: base64url JSON of the right or a wrong shape, with wrong values for each sort key. */
const forgedCursor = once((family: Family, ids: readonly string[]): fc.Arbitrary<[string, string][]> => {
  const spec = SPECS[family]!
  const sortable = [...spec.sortable.keys()]
  // A value for every sortable field (and the id), of which those of the chosen keys are used.
  const values: fc.Arbitrary<Record<string, Json>> = fc.record(
    Object.fromEntries([...sortable.map((name) => [name, cursorValue(spec.sortable.get(name)!.kind, ids)]), ['id', cursorValue('uuid', ids)]]),
  )
  return fc
    .record({
      keys: fc.subarray(sortable, { maxLength: 2 }),
      direction: pick(['asc', 'desc'] as const),
      shape: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.integer({ min: 0, max: 9 }) }),
      backward: pick([undefined, 1, '1', true, 2]),
      garbage: pick(['!!!', '====', 'x'.repeat(3000), '%00', 'eyJ', '+/+/', Buffer.from([0xff, 0xfe, 0x00]).toString('base64url'), 'null', 'W10']),
      values,
    })
    .map(({ keys, direction, shape, backward, garbage, values: all }) => {
      const sortKeys = [...keys.map((name) => `${name}:${direction}`), ...(keys.includes('id') ? [] : [`id:${keys.length ? 'asc' : direction}`])]
      const chosen = [...keys, 'id'].map((name) => all[name]!)
      const signature = sortKeys.join(',')
      const payloads: Json[] = [
        obj(['s', signature], ['v', chosen]),
        obj(['s', signature], ['v', chosen], ['b', backward ?? null]),
        obj(['s', signature], ['v', chosen.slice(1)]),
        obj(['s', signature], ['v', [...chosen, 1]]),
        obj(['s', 'name:asc'], ['v', chosen]),
        obj(['v', chosen]),
        obj(['s', signature], ['v', obj(['0', 1])]),
        null,
        [signature, chosen],
      ]
      const text = shape < payloads.length ? Buffer.from(jsonText(payloads[shape]!)).toString('base64url') : garbage
      const params: [string, string][] = [['cursor', text]]
      if (keys.length) params.push(['sort', keys.join(',')])
      if (keys.length || direction === 'desc') params.push(['order', direction])
      return params
    })
})

const SQL = ["' OR 1=1 --", "1; DROP TABLE products", "'; DROP TABLE users; --", 'name;DROP TABLE products', '" OR ""="', '1)) OR ((1=1']
const OPERATORS = ['$gt', 'gt', 'gte', 'lt', 'lte', 'ne', 'in', 'contains', 'null', 'between', 'regex', 'like', 'eq', 'GT', '', 'gt][lt', '0', '__proto__']
const FILTER_VALUES = [
  ...ODD_STRINGS.filter((s) => s.length < 200), '0001-01-01T00:00:00+23:59', '0001-01-01T00:00:00+14:00', '9999-12-31T23:59:59-23:59',
  '2026-13-01', '99999999999999.99', '1e400', '-0', '2147483648', '-2147483649', '1.0000000000000001', 'true,false', ',,,', 'a,b,c',
  '00000000-0000-0000-0000-000000000000', 'x'.repeat(1001), '%', '%ED%A0%80', '%C0%AF', '%00', '%FF', '+', ' ',
]

/** One parameter that is nearly right: a filter of a known field with a valid operator and an edge value, a sort, a page. */
function nearQuery(family: Family, ids: readonly string[]): fc.Arbitrary<[string, string][]> {
  const spec = SPECS[family]!
  const fields = [...spec.filterable.values()]
  return fc.oneof(
    ...fields.map((field) => {
      const operators = pick(['', ...OPERATORS_BY_KIND[field.kind], ...(field.nullable ? ['null'] : [])])
      const value = field.kind === 'uuid' ? fc.oneof(pick(ids), pick(EDGE_VALUES.uuid)) : pick(EDGE_VALUES[field.kind])
      return fc.tuple(operators, fc.array(value, { minLength: 1, maxLength: 3 })).map(([op, values]): [string, string][] => {
        const key = op ? `${field.name}[${op}]` : field.name
        if (op === 'null') return [[key, choose(['true', 'false', 'TRUE'], values.length)]]
        if (op === 'in') return [[key, values.join(',')]]
        return op === '' ? values.map((v) => [key, v]) : [[key, values[0]!]]
      })
    }),
    fc.tuple(fc.subarray([...spec.sortable.keys()], { minLength: 1, maxLength: 3 }), pick(['asc', 'desc', 'desc,asc', 'asc,asc,asc'])).map(([names, order]): [string, string][] => [['sort', names.join(',')], ['order', order]]),
    fc.tuple(pick(['1', '2', '2147483647', '1073741824', '21474837']), pick(['1', '2', '100', '20'])).map(([page, size]): [string, string][] => [['page', page], ['size', size]]),
    forgedCursor(family, ids),
  )
}

const OPERATORS_BY_KIND: Record<FieldKind, readonly string[]> = {
  string: ['eq', 'ne', 'in', 'contains'],
  integer: ['ne', 'in', 'gt', 'gte', 'lt', 'lte'],
  number: ['ne', 'in', 'gt', 'gte', 'lt', 'lte'],
  datetime: ['ne', 'in', 'gt', 'gte', 'lt', 'lte'],
  uuid: ['ne', 'in'],
  enum: ['ne', 'in'],
  boolean: ['ne'],
  'string[]': ['in'],
}

/** Query parameters for a list of this spec (or for a path that takes none): one nearly right, or one to four bad ones. */
export const badQuery = once((family: Family, ids: readonly string[]): fc.Arbitrary<string> => {
  const spec = SPECS[family]
  const filterable = spec ? [...spec.filterable.keys()] : ['name']
  const sortable = spec ? [...spec.sortable.keys()] : ['name']
  const value = fc.oneof(pick(FILTER_VALUES), pick(SQL), fc.string({ maxLength: 20 }))
  const param: fc.Arbitrary<[string, string][]> = fc.oneof(
    fc.tuple(pick(['foo', '__proto__', 'constructor', 'prototype', 'password_hash', 'cost', 'limit', 'offset', 'q', 'fields', 'include', ...SQL]), value).map((p) => [p]),
    fc.tuple(pick(['page', 'size', 'sort', 'order', 'cursor']), value, value).map(([name, a, b]): [string, string][] => [[name, a], [name, b]]),
    fc.tuple(pick(['page', 'size']), pick(['0', '-1', '2147483648', '99999999999', '1e3', '0x10', ' 1', '1.0', '', '100', '101', '2147483647', '-0', '１'])).map((p) => [p]),
    fc.tuple(fc.array(fc.oneof(pick(sortable), pick(['', 'id', 'password_hash', 'cost', 'rating_total', ...SQL])), { maxLength: 3 }), pick(['asc', 'up', 'asc,desc,asc', 'DESC', '', 'asc;--']))
      .map(([names, order]): [string, string][] => [['sort', names.join(',')], ['order', order]]),
    fc.tuple(fc.oneof(pick(filterable), pick(['price', 'status', 'x'])), pick(OPERATORS), value).map(([field, op, v]): [string, string][] => [[`${field}[${op}]`, v]]),
    fc.tuple(pick(filterable), value).map((p) => [p]),
    spec ? forgedCursor(family, ids) : fc.constant<[string, string][]>([['cursor', 'x']]),
  )
  const params = spec
    ? fc.oneof({ weight: 1, arbitrary: nearQuery(family, ids).map((p) => [p]) }, { weight: 1, arbitrary: fc.array(param, { minLength: 1, maxLength: 4 }) })
    : fc.array(param, { minLength: 1, maxLength: 4 })
  return fc
    .tuple(params, fc.boolean(), pick(['', '', '', '&', '&&', '=&']))
    .map(([chosen, encode, tail]) => chosen.flat().map(([k, v]) => `${queryText(k, encode)}=${queryText(v, encode)}`).join('&') + tail)
})

