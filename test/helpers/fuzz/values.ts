/**
 * The bad values the fuzz generators draw from: JSON texts JSON.stringify never writes, odd
 * numbers and strings, garbage header values, path ids, percent-encoding.
 */
import fc from 'fast-check'
import { pick } from './shop.js'

/** A JSON value built by hand: objects as entries (keys may repeat), `raw` as written (`1e400`, `-0`). */
export type Json = string | number | boolean | null | Json[] | { obj: [string, Json][] } | { raw: string }

export const raw = (text: string): Json => ({ raw: text })
export const obj = (...entries: [string, Json][]): Json => ({ obj: entries })

/** The text of a JSON value. Strings go through JSON.stringify, which escapes NUL and lone surrogates. */
export function jsonText(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`
  if (value !== null && typeof value === 'object') {
    if ('raw' in value) return value.raw
    return `{${value.obj.map(([key, item]) => `${JSON.stringify(key)}:${jsonText(item)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

/** Objects nested `depth` deep: `{"a":{"a":...}}`. */
export const nested = (depth: number, leaf: Json = 1): Json => (depth <= 1 ? obj(['a', leaf]) : obj(['a', nested(depth - 1, leaf)]))

/** Numbers at the edges of what JSON, doubles, PostgreSQL and the schemas hold. */
export const ODD_NUMBERS: readonly Json[] = [
  raw('1e400'), raw('-1e400'), raw('-0'), raw('9007199254740993'), raw('0.1e-400'), raw('1E+2'), raw('4.9999999999999999'),
  raw('123456789012345678901234567890.123456789'), raw('0.000000000000000000001'), raw('1.0'), raw('2147483648'),
  raw('-2147483649'), raw('9999999999.995'), raw('10000000000'), 0, -1, 1.5, 2 ** 31 - 1, Number.MAX_VALUE, Number.MIN_VALUE,
]

/** Text that looks like a number but is no JSON number: a body that has one is malformed. */
export const NAN_LIKE = ['NaN', 'Infinity', '-Infinity', '+1', '01', '.5', '1.', '0x10', '1_000', '1e', '--1', 'undefined'] as const

/** Strings a field might choke on. Lone surrogates and NUL are written as escapes by jsonText. */
export const ODD_STRINGS: readonly string[] = [
  '', ' ', '\t\n', 'a'.repeat(121), 'x'.repeat(10_001), '\u0000', 'a\u0000b', '\ud800', 'a\udc00', '\ud83d\ude00', '\u202eevil',
  '\u200b', '\ufeff', 'e\u0301', "' OR 1=1 --", "Robert'); DROP TABLE products;--", '1; SELECT pg_sleep(10)', '${7*7}',
  '{{7*7}}', '<script>alert(1)</script>', '../../etc/passwd', '%00', '\\u0000', 'NaN', 'null', 'true', '0', '-0',
  '2026-02-30T00:00:00Z', '0001-01-01T00:00:00+23:59', 'SKU-ÄÖ', 'ADMIN', 'admin ', 'a@b', '@', 'a'.repeat(300) + '@x.io',
]

const stringArb = fc.oneof(
  fc.constantFrom(...ODD_STRINGS),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 20 }),
)

/** Any value at all: the noise around a body's guaranteed-bad field. */
export const anyJson: fc.Arbitrary<Json> = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    stringArb,
    fc.constantFrom(...ODD_NUMBERS),
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.array(fc.tuple(fc.oneof(stringArb, fc.constantFrom('__proto__', 'constructor', 'prototype')), tie('value')), { maxLength: 4 }).map((entries) => ({ obj: entries })),
  ),
})).value

/** If-Match values that can never match: never `*` alone, never one of this service's tags (`"v1.…"`, base64url hashes). */
export const BAD_IF_MATCH = [
  '"nope"', 'W/"nope"', 'nope', '""', '"', '" "', '"*"', '*, "x"', '"x", *', ',', ' , ', 'W/', 'W/"', '"a"b"', '"\\"x"',
  'W/"v"', '"v"', '"v1"', '"v.1"', '"x", "y", "z"', '"' + 'z'.repeat(5000) + '"', 'null', '0', '-1', '"\u00ff"',
] as const

const IF_NONE_MATCH = ['*', '"nope"', 'W/"x"', '', '"', ',,,', '"a", *', '*x', 'W/"' + 'q'.repeat(3000) + '"'] as const

/** Dates that are not IMF-fixdate, or name no day, or one beyond what Date and PostgreSQL hold. */
const BAD_DATES = [
  'yesterday', '0', '-1', '2024', '2024-01-01T00:00:00Z', 'Mon, 32 Jan 2024 25:61:61 GMT', 'Tue, 31 Feb 275760 00:00:00 GMT',
  'Sat, 01 Jan 0000 00:00:00 GMT', 'Fri, 31 Dec 9999 23:59:59 GMT', 'Thu, 01 Jan 1970 00:00:00 GMT', 'Sunday, 06-Nov-94 08:49:37 GMT',
  'Sun Nov  6 08:49:37 1994', 'Mon, 01 Jan 2024 00:00:00 PST', 'Mon, 01 Jan 2024 00:00:00', '', 'x'.repeat(4000),
] as const

const BAD_ACCEPT = [
  '', 'text/html', 'application/xml', '*/*;q=abc', 'application/json;q=0', 'application/json;q=0, */*;q=0',
  'application/vnd.resourceful.v999999999999999999999+json', 'application/vnd.resourceful.v0+json',
  'application/vnd.resourceful.v1+json', 'application/vnd.resourceful.v2+json;q=0.5, application/json;q=0.5', 'a/b/c', ',,,,', '*',
  'application/*+json', 'application/json;q=1.5', 'application/json;q=-1', 'application/json;charset=latin1', ';;;q=0.1',
  Array.from({ length: 300 }, (_, i) => `type${i}/sub;q=0.${i % 10}`).join(', '), 'APPLICATION/JSON', 'application/json ;q= 0.0001',
] as const

const BAD_CONTENT_TYPE = [
  '', 'text/plain', 'application/json; charset=latin1', 'application/json; charset=utf-16', 'application/json;charset="utf-8"',
  'APPLICATION/JSON', 'application/json ; charset = utf-8', 'application/merge-patch+json', 'application/vnd.resourceful.v1+json',
  'application/vnd.resourceful.v2+json', 'application/vnd.resourceful.v99+json', 'application/vnd.resourceful.v99999999999999999999+json',
  'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'application/jsonx', 'json', ';', '*/*', 'application/*',
  'application/json; charset=utf-8; charset=latin1', 'application/json; charset=', 'application/json;;;', 'application/json; x="\\"',
] as const

/** Credentials that name no caller: other schemes, broken bearers, tokens that were never issued. */
const BAD_AUTHORIZATION = [
  '', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Bearer a b', 'Bearer rf_token_nope', 'bearer rf_token_nope', 'Token abc',
  'Digest username="a"', 'Bearer ' + 'x'.repeat(8000), 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.', 'Bearer \ta',
  'Bearer eyJhbGciOiJIUzI1NiJ9.e30.ZRrHA1JJJW8opsbCGfG_HACGpVUMN_a9IV7pAx_Zmeo', 'Bearer %00', 'Bearer ../../', 'Negotiate YII=',
  'Bearer rf_session_x', 'Bearer null', 'Bearer undefined', 'Bearer ' + '\u00ff'.repeat(10),
] as const

const BAD_COOKIE = [
  'session=', 'session=garbage', 'session=%E0%A4%A', 'session=a; session=b', '=;=;', 'session="quoted"', 'session=' + 'a'.repeat(6000),
  '__proto__=x', 'constructor=1; session=x', 'session=%00', 'session=rf_token_x', ';;;', 'session', 'session=\u00ff',
] as const

/** The origin the fuzzed service lists in CORS_ORIGINS: its preflights and cookie-signed writes are allowed. */
export const TRUSTED_ORIGIN = 'https://shop.example'

/** Origins a cookie-signed write must not come from (CSRF). */
export const FOREIGN_ORIGINS = ['https://evil.example', 'null', 'garbage', 'http://127.0.0.1.evil.example', 'file://', ''] as const

const OTHER_HEADERS: readonly [string, readonly string[]][] = [
  ['origin', [...FOREIGN_ORIGINS, TRUSTED_ORIGIN, TRUSTED_ORIGIN]],
  ['referer', ['https://evil.example/x', 'not a url', '']],
  ['x-http-method-override', ['DELETE', 'PUT']],
  ['x-forwarded-for', ['1.2.3.4, garbage', '::::']],
  ['x-request-id', ['', 'x'.repeat(2000), '../../', '\u00ff']],
  ['range', ['bytes=0-1', 'items=0-10', 'garbage']],
  ['content-encoding', ['gzip', 'br', 'identity, gzip', 'garbage']],
  ['idempotency-key', ['', 'x'.repeat(1000), '\u00ff', 'a b c']],
  ['accept-encoding', ['garbage;q=x', '*;q=0', 'gzip;q=1.5']],
  ['accept-language', ['*;q=x', 'x'.repeat(3000)]],
  ['access-control-request-method', ['DELETE', 'garbage', 'PATCH', '']],
  ['access-control-request-headers', ['authorization, if-match', 'x'.repeat(500), ',,,']],
  ['prefer', ['return=minimal', 'handling=lenient', 'x'.repeat(500)]],
]

/** One garbage header, by the headers the service reads and a few it should ignore. */
export const badHeader: fc.Arbitrary<[string, string]> = fc.oneof(
  pick(BAD_IF_MATCH).map((v): [string, string] => ['if-match', v]),
  pick(IF_NONE_MATCH).map((v): [string, string] => ['if-none-match', v]),
  fc.tuple(pick(['if-modified-since', 'if-unmodified-since']), pick(BAD_DATES)),
  pick(BAD_ACCEPT).map((v): [string, string] => ['accept', v]),
  pick(BAD_CONTENT_TYPE).map((v): [string, string] => ['content-type', v]),
  pick(BAD_AUTHORIZATION).map((v): [string, string] => ['authorization', v]),
  pick(BAD_COOKIE).map((v): [string, string] => ['cookie', v]),
  fc.oneof(...OTHER_HEADERS.map(([name, values]) => pick(values).map((v): [string, string] => [name, v]))),
)

/** A value fetch() cannot put in a header: beyond Latin-1, or with a line break or NUL. */
export const unsendableByFetch = (value: string) => /[^\t\x20-\xff]/.test(value)

/** Path segments where an id goes that name no item, or name one in a way the router must not accept. */
export function badIds(realId: string): fc.Arbitrary<string> {
  return fc.oneof(
    pick([
      '', 'x', '0', '-1', '1e3', 'null', 'undefined', '%00', '%2e%2e', '..', '.', '%2F', '%252F', '%ZZ', '%', '%E0%A4%A', '%ED%A0%80',
      '%C0%AF', '%u0041', '%F0%9F%98%80', '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '*', '~',
      '$', '(', ';jsessionid=1', '%27%3B%20DROP%20TABLE%20products%3B--', 'caf%C3%A9', '__proto__', 'constructor',
    ]),
    pick([
      realId.toUpperCase(), `${realId}%00`, `%20${realId}`, `${realId}%20`, `%7B${realId}%7D`, `urn:uuid:${realId}`, realId.replace(/-/g, ''),
      `${realId}/..`, `..%2F${realId}`, `${realId};x=1`, realId.slice(0, -1), `${realId}0`, encodeURIComponent(realId).replace(/0/g, '%30'),
    ]),
    fc.integer({ min: 200, max: 9000 }).map((n) => 'x'.repeat(n)),
    fc.uuid().map((id) => id),
    fc.string({ maxLength: 30 }).map(percentEncode),
  )
}

/** encodeURIComponent, except that a lone surrogate becomes the bytes UTF-8 would give it (%ED%A0%80), not an error. */
export function percentEncode(text: string): string {
  let out = ''
  for (const char of text) {
    const code = char.charCodeAt(0)
    out += char.length === 1 && code >= 0xd800 && code <= 0xdfff
      ? [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('')
      : encodeURIComponent(char)
  }
  return out
}

/** Percent-encodes a query key or value, or leaves it as written (fetch encodes what a URL may not hold). */
export const queryText = (text: string, encode: boolean) => (encode ? percentEncode(text) : text)
