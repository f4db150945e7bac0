// Requests generated from the OpenAPI document itself (fast-check): for every operation of every
// version, path ids that exist, do not, or are no ids; valid and invalid values of each query
// parameter; valid and invalid bodies in each media type it takes. No answer is a 5xx, and every
// answer is one the document describes (the client checks each: test/helpers/api.ts).
// Seeded: OPENAPI_SEED=<n> repeats a run; OPENAPI_RUNS=<n> sets the requests per operation.
import fc from 'fast-check'
import t from 'tap'
import { eachDatabase, type Api } from '../helpers/api.js'
import { schemaArbitraries, type Schema } from '../helpers/arbitraries.js'
import { operations, type OpenApiDocument, type Operation } from '../helpers/contract.js'
import { productBody } from '../helpers/fixtures.js'
import { until } from '../helpers/until.js'

const SEED = Number(process.env.OPENAPI_SEED ?? 20_261_124)
/** Requests per operation; signing in and registering hash a password (scrypt), so they get fewer. */
const RUNS = Number(process.env.OPENAPI_RUNS ?? 12)
const SLOW = new Set(['signIn', 'createUser', 'replaceUser', 'updateUser'])

interface GeneratedRequest {
  path: string
  query: [string, string][]
  body?: { type: string; value: unknown }
  headers: Record<string, string>
}

/** Ids that exist, by the collection path segment they follow (`products`, `reviews`...). */
type Known = Record<string, string[]>

/**
 * A product with a review, an order with an item, a webhook, a user: something for each path to
 * find. The user is not the caller, whom a generated change of roles would lock out.
 */
async function seed(api: Api): Promise<Known> {
  const created = async (path: string, body: unknown) => {
    const answer = await api.admin.post(path, body)
    if (answer.status !== 201) throw new Error(`seeding ${path}: ${answer.status} ${answer.text}`)
    return answer.body.id as string
  }
  // The webhook first: the product's creation is then a delivery to it (to a closed loopback port).
  const webhook = await created('/api/v1/webhooks', { url: 'http://127.0.0.1:9/hooks', events: ['products.created'] })
  const product = await created('/api/v1/products', productBody({ status: 'active' }))
  const review = await created(`/api/v1/products/${product}/reviews`, { rating: 4 })
  const order = await created('/api/v1/orders', {})
  const item = await created(`/api/v1/orders/${order}/items`, { product_id: product, quantity: 1 })
  const user = await api.newUser()
  // The worker makes the delivery in the background.
  const deliveries = await until('a delivery to the webhook', async () => {
    const ids = (await api.admin.get(`/api/v1/webhooks/${webhook}/deliveries`)).body.map((delivery: { id: string }) => delivery.id)
    return ids.length > 0 ? ids : undefined
  })
  return { products: [product], reviews: [review], orders: [order], items: [item], webhooks: [webhook], deliveries, users: [user.id] }
}

/** Requests for one operation: each part valid, or now and then not. */
function requestsFor(document: OpenApiDocument, template: string, operation: Operation, known: Known): fc.Arbitrary<GeneratedRequest> {
  const { valid, invalid } = schemaArbitraries(document.components.schemas as Record<string, Schema>)
  const sometimes = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<T> | undefined) => (bad ? fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: bad }) : good)
  // Each `{param}` of the path: an id of its collection, an id of nothing, or no id at all.
  const segments = template.split('/').map((segment, i, all) => {
    if (!segment.startsWith('{')) return fc.constant(segment)
    const ids = known[all[i - 1]!] ?? []
    return fc.oneof({ weight: 6, arbitrary: ids.length ? fc.constantFrom(...ids) : fc.uuid() }, { weight: 1, arbitrary: fc.uuid() }, { weight: 1, arbitrary: fc.constantFrom('nope', '0', 'x'.repeat(40)) })
  })
  const queryParameters = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query')
  const query = fc.subarray(queryParameters, { maxLength: Math.min(3, queryParameters.length) }).chain((chosen) =>
    fc.tuple(...chosen.map((parameter) => sometimes(valid(parameter.schema as Schema), invalid(parameter.schema as Schema)).map((value): [string, string] => [parameter.name, queryText(value)]))),
  )
  const content = Object.entries(operation.requestBody?.content ?? {})
  const body = content.length
    ? fc.constantFrom(...content).chain(([type, { schema }]) => sometimes(valid(schema as Schema), invalid(schema as Schema)).map((value) => ({ type, value })))
    : fc.constant(undefined)
  // A change that needs If-Match (428 otherwise) sometimes sends one that any version matches.
  const headers = operation.responses['428'] ? fc.constantFrom({}, { 'if-match': '*' }) : fc.constant({})
  return fc.record({ path: fc.tuple(...segments).map((parts) => parts.join('/')), query, body, headers })
}

/** A query parameter's text: strings as they are, other values as JSON (a number, `true`, `null`). */
const queryText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value) ?? '')

/** Operations in the document's order, deletes last: what they remove, the others still find. */
const deletesLast = (document: OpenApiDocument) => operations(document).sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'))

eachDatabase(t, async (t, api) => {
  for (const version of [2, 1]) {
    const document = JSON.parse(api.app.openapi.get(version)!()) as OpenApiDocument
    t.test(`v${version}: generated requests to every operation get documented answers below 500`, async (t) => {
      const known = await seed(api)
      const statuses = new Map<string, Map<number, number>>()
      const failures: string[] = []
      for (const { path: template, method, operation } of deletesLast(document)) {
        const name = operation.operationId!
        const samples = fc.sample(requestsFor(document, template, operation, known), { seed: SEED + version, numRuns: SLOW.has(name) ? 3 : RUNS })
        for (const request of samples) {
          const search = new URLSearchParams(request.query).toString()
          const target = `${request.path}${search ? `?${search}` : ''}`
          try {
            const body = request.body && { body: JSON.stringify(request.body.value), headers: { ...request.headers, 'content-type': request.body.type } }
            const answer = await api.admin.request(method.toUpperCase(), target, body ?? { headers: request.headers })
            const counts = statuses.get(name) ?? new Map<number, number>()
            statuses.set(name, counts.set(answer.status, (counts.get(answer.status) ?? 0) + 1))
            if (answer.status >= 500) failures.push(`${method.toUpperCase()} ${target} → ${answer.status} ${answer.text}`)
          } catch (error) {
            failures.push(`${method.toUpperCase()} ${target}${request.body ? ` ${JSON.stringify(request.body).slice(0, 300)}` : ''}: ${(error as Error).message}`)
          }
        }
      }
      t.comment(`seed ${SEED + version} (OPENAPI_SEED=${SEED} repeats it): ${[...statuses].map(([name, counts]) => `${name} ${[...counts].map(([status, n]) => `${status}×${n}`).join(' ')}`).join('; ')}`)
      t.same(failures, [], 'every answer below 500 and as the document says')
      // A bearer token has no session to read.
      const reads = operations(document).filter(({ method, operation }) => method === 'get' && operation.operationId !== 'getSession').map(({ operation }) => operation.operationId!)
      t.same(reads.filter((name) => ![...(statuses.get(name)?.keys() ?? [])].some((status) => status < 300)), [], 'every read succeeded at least once: the generated requests are valid often enough')
      const writes = [...statuses].filter(([name]) => /^(create|update|replace)/.test(name) && [...statuses.get(name)!.keys()].some((status) => status < 300))
      t.ok(writes.length > 0, `generated bodies were written: ${writes.map(([name]) => name).join(', ')}`)
    })
  }
})
