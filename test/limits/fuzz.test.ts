// Fuzzing: at least 20,000 generated bad requests over every route and method, as anonymous, a
// plain user, another user, a read-only token, a session cookie and the admin: no answer is a
// 5xx, every 4xx has the uniform JSON error body, and no stored row changes (DESIGN "Limits and
// faults"; ERR-01, SEC-*). Every generated write is bad by construction; helpers/fuzz/guard.ts
// says how. Seeded: FUZZ_SEED=<n> repeats a run; FUZZ_COUNT=<n> changes its size.
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { secretHash, newSecret } from '../../src/auth/secrets.js'
import { accounts } from '../../src/db/accounts.js'
import type { Database } from '../../src/db/client.js'
import { startApi, V1, type Api } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'
import { guard } from '../helpers/fuzz/guard.js'
import { badRequest, type BadRequest } from '../helpers/fuzz/requests.js'
import { bodyBytes, send, type Credentials, type Outcome } from '../helpers/fuzz/send.js'
import type { Targets } from '../helpers/fuzz/shop.js'
import { TRUSTED_ORIGIN } from '../helpers/fuzz/values.js'

/** The seed of the default run; a failure prints the seed it ran with. */
const DEFAULT_SEED = 20_261_123
const SEED = Number(process.env.FUZZ_SEED ?? DEFAULT_SEED)
/**
 * Requests generated, and every one is sent: the same seed sends the same requests on any machine.
 * 20,000 take 24-33 s on a quiet 2-core machine.
 */
const COUNT = Number(process.env.FUZZ_COUNT ?? 20_000)
// Every request is sent however long it takes; a machine at twice the load takes twice as long.
t.setTimeout(300_000)

/** Requests in flight at once. */
const CONCURRENCY = 16
/** Failures printed in full; the rest are counted. */
const PRINTED_FAILURES = 40

/** Products with reviews, a user's pending and paid orders with items, another user's order. */
async function seed(api: Api): Promise<{ targets: Targets; credentials: Credentials }> {
  const admin = await api.newUser({ roles: ['admin'], name: 'Fuzz admin' })
  const user = await api.newUser({ name: 'Fuzz user' })
  const other = await api.newUser({ name: 'Fuzz other' })
  const created = async (res: Promise<{ status: number; body: any; text: string }>) => {
    const { status, body, text } = await res
    if (status !== 201) throw new Error(`seeding failed: ${status} ${text}`)
    return body.id as string
  }
  const productBodies = [
    productBody({ status: 'active', cost: 2, tags: ['a', 'b'], description: 'A mug' }),
    productBody({ status: 'active', stock: 5 }),
    productBody({ status: 'draft' }),
    productBody({ status: 'archived' }),
  ]
  const products: string[] = []
  for (const body of productBodies) products.push(await created(api.admin.post(`${V1}/products`, body)))
  const skus = productBodies.map((body) => body.sku as string)
  const reviews: [string, string][] = [
    [products[0]!, await created(user.api.post(`${V1}/products/${products[0]}/reviews`, { rating: 4, title: 'Good', body: 'Fine mug' }))],
    [products[0]!, await created(other.api.post(`${V1}/products/${products[0]}/reviews`, { rating: 2 }))],
    [products[1]!, await created(user.api.post(`${V1}/products/${products[1]}/reviews`, { rating: 5, title: null }))],
  ]
  const orders = [
    await created(user.api.post(`${V1}/orders`, { note: 'pending' })),
    await created(user.api.post(`${V1}/orders`, {})),
    await created(other.api.post(`${V1}/orders`, { note: "other's" })),
  ]
  const items: [string, string][] = []
  for (const [order, product, quantity] of [[0, 0, 2], [0, 1, 1], [1, 0, 3], [2, 1, 1]] as const) {
    items.push([orders[order]!, await created(api.admin.post(`${V1}/orders/${orders[order]}/items`, { product_id: products[product], quantity }))])
  }
  // Orders change state only inside the service for now: a paid order's items are a 409 STATE_CONFLICT.
  await api.db.query("UPDATE orders SET status = 'paid' WHERE id = $1", [orders[1]])
  const store = accounts(api.db)
  const reader = newSecret('rf_token_')
  await store.createToken(user.id, secretHash(reader), { name: 'reader', scopes: ['read'], expiresAt: new Date(Date.now() + 86_400_000) })
  const session = newSecret('rf_session_')
  await store.createSession(user.id, secretHash(session), new Date(), new Date(Date.now() + 86_400_000))
  const bearer = (token: string): [string, string] => ['authorization', `Bearer ${token}`]
  return {
    targets: { products, reviews, users: [admin.id, user.id, other.id], orders, items, skus, reviewedByUser: [products[0]!, products[1]!] },
    credentials: {
      anonymous: undefined,
      user: bearer(user.token),
      other: bearer(other.token),
      reader: bearer(reader),
      admin: bearer(admin.token),
      session: ['cookie', `session=${session}`],
    },
  }
}

/** Rows of every table, ordered by primary key, without bookkeeping that reads may move. */
async function snapshot(db: Database): Promise<Map<string, string[]>> {
  const tables = await db.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1",
    [],
  )
  const result = new Map<string, string[]>()
  // Migrations, and counters of rate limits or idempotency keys, are not stored data.
  for (const { name } of tables.filter((table) => !/^_prisma_migrations$|rate|idempot|throttle|counter/.test(table.name))) {
    const keys = await db.query<{ column: string }>(
      'SELECT a.attname AS column FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indrelid = $1::regclass AND i.indisprimary',
      [`"${name}"`],
    )
    const order = keys.length ? keys.map((k) => `"${k.column}"`).join(', ') : '1'
    // Reads move a token's last_used_at and a session's last_seen_at.
    const rows = await db.query<{ row: string }>(`SELECT (to_jsonb(t) - ARRAY['last_used_at', 'last_seen_at'])::text AS row FROM "${name}" t ORDER BY ${order}`, [])
    result.set(name, rows.map((r) => r.row))
  }
  return result
}

/** What differs between two snapshots, a line per changed table. */
function differences(before: Map<string, string[]>, after: Map<string, string[]>): string[] {
  const lines: string[] = []
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const was = new Set(before.get(name) ?? [])
    const is = new Set(after.get(name) ?? [])
    const gone = [...was].filter((row) => !is.has(row))
    const added = [...is].filter((row) => !was.has(row))
    if (gone.length || added.length) lines.push(`${name}: -${gone.length} +${added.length}; was ${gone.slice(0, 2).join(' ')}; is ${added.slice(0, 2).join(' ')}`.slice(0, 2000))
  }
  return lines
}

/** Why a 4xx body is not `{"error":{"code","message","details":[{"field","reason"}]}}` as JSON, if it is not. */
function uniformProblem(type: string | undefined, text: string): string | undefined {
  if (!/^application\/json(;|$)/i.test(type ?? '')) return `Content-Type ${type}`
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    return 'a body that is not JSON'
  }
  const error = body?.error
  if (typeof body !== 'object' || Object.keys(body).join() !== 'error') return 'not {"error": ...}'
  if (typeof error !== 'object' || error === null || Object.keys(error).sort().join() !== 'code,details,message') return 'error has other keys'
  if (typeof error.code !== 'string' || !/^[A-Z]+(_[A-Z]+)*$/.test(error.code)) return 'code is not UPPER_SNAKE'
  if (typeof error.message !== 'string' || error.message === '') return 'no message'
  const detail = (d: any) => typeof d === 'object' && d !== null && Object.keys(d).sort().join() === 'field,reason' && typeof d.field === 'string' && typeof d.reason === 'string'
  if (!Array.isArray(error.details) || !error.details.every(detail)) return 'details are not [{field, reason}]'
  return undefined
}

/**
 * Answers below Fastify's routing that were being fixed while this test was written (41f8061),
 * tolerated in their old form and counted in the summary: an Expect other than 100-continue
 * (Node's 417 with an empty body), a request without Host (Node's 400 with an empty body),
 * CONNECT (Node closes the connection). Their fixed answers, with the uniform body, pass anyway.
 */
function knownDeviation(request: BadRequest, outcome: Outcome): boolean {
  const known = request.wire?.known
  if ('failure' in outcome) return known === 'connect' && outcome.failure === 'closed'
  return (known === 'expect' && outcome.status === 417 && outcome.body === '') || (known === 'no-host' && outcome.status === 400 && outcome.body === '')
}

/** What is wrong with the answer to a request, if anything. */
function problemOf(request: BadRequest, outcome: Outcome): string | undefined {
  if (knownDeviation(request, outcome)) return undefined
  if ('failure' in outcome) return `no answer (${outcome.failure})`
  // The one 5xx the catalogue has for a request: CONNECT, 501 NOT_IMPLEMENTED (docs/errors.md).
  if (request.wire?.known === 'connect' && outcome.status === 501) return uniformProblem(outcome.type, outcome.body)
  if (outcome.status >= 500) return `a ${outcome.status}`
  if (outcome.status < 400 || request.method.toUpperCase() === 'HEAD') return undefined
  return uniformProblem(outcome.type, outcome.body)
}

const clip = (text: string, length: number) => (text.length > length ? `${text.slice(0, length)}…(${text.length})` : text)

/** One line to reproduce a request and see what it got. */
function describe(request: BadRequest, outcome: Outcome, problem: string): string {
  const body = bodyBytes(request)
  const shown = request.wire
    ? `wire ${JSON.stringify(clip(request.wire.bytes.toString('latin1'), 300))}`
    : `${request.method} ${clip(request.path, 200)} as ${request.caller} via ${request.transport} headers ${clip(JSON.stringify(request.headers), 300)}` +
      (body ? ` body ${JSON.stringify(clip(body.toString('latin1'), 200))}` : '')
  const answer = 'failure' in outcome ? `${outcome.failure} ${outcome.detail}` : `${outcome.status} ${outcome.type ?? '-'} ${JSON.stringify(clip(outcome.body, 300))}`
  return `${problem} [${request.kind}; ${request.guarantee}] ${shown} -> ${answer}`
}

interface Run {
  sent: number
  failures: string[]
  statuses: Map<string, number>
  tolerated: number
  ms: number
}

/** Sends every request, CONCURRENCY at a time. */
async function run(api: Api, requests: readonly BadRequest[], credentials: Credentials): Promise<Run> {
  const started = Date.now()
  const result: Run = { sent: 0, failures: [], statuses: new Map(), tolerated: 0, ms: 0 }
  let next = 0
  const worker = async () => {
    while (next < requests.length) {
      const request = requests[next++]!
      const outcome = await send(api.origin, request, credentials)
      result.sent++
      const status = 'failure' in outcome ? outcome.failure : String(outcome.status)
      result.statuses.set(status, (result.statuses.get(status) ?? 0) + 1)
      if (knownDeviation(request, outcome)) result.tolerated++
      const problem = problemOf(request, outcome)
      if (problem) result.failures.push(describe(request, outcome, problem))
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  result.ms = Date.now() - started
  return result
}

function report(t: Test, result: Run, kind: string): void {
  const statuses = [...result.statuses].sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${s}:${n}`).join(' ')
  t.comment(`fuzz: seed ${SEED} (FUZZ_SEED=${SEED} repeats it), ${result.sent} of ${COUNT} requests in ${(result.ms / 1000).toFixed(1)} s on ${kind}`)
  t.comment(`fuzz: answers ${statuses}; known deviations below routing tolerated: ${result.tolerated}`)
  for (const line of result.failures.slice(0, PRINTED_FAILURES)) t.comment(`fuzz failure: ${line}`)
  if (result.failures.length > PRINTED_FAILURES) t.comment(`fuzz: ${result.failures.length - PRINTED_FAILURES} more failures`)
}

t.test('generated bad requests: no 5xx, the uniform error body on every 4xx, no stored data changed', async (t) => {
  if (!Number.isSafeInteger(SEED) || !Number.isSafeInteger(COUNT)) throw new Error('FUZZ_SEED and FUZZ_COUNT must be integers')
  const kinds = databaseKinds()
  const kind = kinds.includes('postgres') ? 'postgres' : kinds[0]!
  // A trusted origin: preflights and cookie-signed writes from it get past CORS and CSRF.
  const api = await startApi(t, kind, undefined, { config: { corsOrigins: [TRUSTED_ORIGIN] } })
  const { targets, credentials } = await seed(api)
  const { products, reviews, users, orders, items } = targets
  const realIds = [products, reviews, users, orders, items].flat(2).map((id) => id.toLowerCase())
  const requests = fc.sample(badRequest(targets), { seed: SEED, numRuns: COUNT }).map((request) => guard(request, realIds))
  const before = await snapshot(api.db)

  const result = await run(api, requests, credentials)

  report(t, result, kind)
  t.equal(result.failures.length, 0, 'every answer is below 500, and every 4xx has the uniform JSON error body')
  t.same(differences(before, await snapshot(api.db)), [], 'no stored row changed')
  t.equal(result.sent, COUNT, 'every request was sent')
})
