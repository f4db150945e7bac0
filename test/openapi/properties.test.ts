// Requests generated from the OpenAPI document itself (fast-check): for every operation of every
// version, path ids that exist, do not, or are no ids; a valid and an invalid value of every query
// and header parameter; valid and invalid bodies in each media type it takes; as an admin and as a
// plain user. No answer is a 5xx, and every answer is one the document describes (the service's
// answers are checked as they are sent: test/helpers/contract.ts).
// Seeded: OPENAPI_SEED=<n> repeats a run; OPENAPI_RUNS=<n> sets the random requests per operation.
import fc from 'fast-check'
import t from 'tap'
import { eachDatabase, type Api } from '../helpers/api.js'
import { schemaArbitraries, stringMatching, type Schema } from '../helpers/arbitraries.js'
import { operations, type OpenApiDocument, type Operation } from '../helpers/contract.js'
import { productBody } from '../helpers/fixtures.js'
import { until } from '../helpers/until.js'

// Every operation of both versions on both databases: near the suite's 120 s per file on a busy machine.
t.setTimeout(300_000)

const SEED = Number(process.env.OPENAPI_SEED ?? 20_261_124)
/**
 * Random requests per operation, besides those that give each parameter a valid and an invalid
 * value; signing in and registering hash a password (scrypt), so they get fewer.
 */
const RUNS = Number(process.env.OPENAPI_RUNS ?? 8)
const SLOW = new Set(['signIn', 'createUser', 'replaceUser', 'updateUser'])
/** Parameters given values together in one request: each gets a valid and an invalid one in two requests per group. */
const GROUP = 8
/**
 * Parameters in a group of their own: a valid value of theirs names what the service may not
 * have (a cursor's position, an event to resume after, an entity tag), and the 400 or 412 would
 * hide the rest of a group.
 */
const ALONE = new Set(['cursor', 'after', 'If-Match'])

type Caller = 'admin' | 'member'
/** Mostly the admin, who may call everything; a plain user now and then. */
const callerArb = fc.oneof({ weight: 3, arbitrary: fc.constant<Caller>('admin') }, { weight: 1, arbitrary: fc.constant<Caller>('member') })

interface GeneratedRequest {
  caller: Caller
  path: string
  query: [string, string][]
  headers: Record<string, string>
  body?: { type: string; value: unknown }
}

type Parameter = NonNullable<Operation['parameters']>[number]

/** Ids that exist, by the collection path segment they follow (`products`, `reviews`...). */
type Known = Record<string, string[]>

/**
 * A product with a review, an order with an item, a webhook, a user: something for each path to
 * find. The user is not a caller, whom a generated change of roles would lock out.
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

/** A query parameter's text: strings as they are, other values as JSON (a number, `true`, `null`). */
const queryText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value) ?? '')

/** Characters a header value can carry as it is: visible ASCII (fetch trims spaces at the ends, and refuses beyond Latin-1). */
const HEADER_CHAR = fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code))

/** Values of a header parameter: text a header can carry, within its schema's bounds, or off them. */
function headerValues(schema: Schema): { valid: fc.Arbitrary<string>; invalid: fc.Arbitrary<string> } {
  const minLength = schema.minLength ?? 0
  const maxLength = schema.maxLength ?? 1024
  const valid = schema.pattern
    ? stringMatching(schema.pattern).filter((text) => /^[\x21-\x7e]*$/.test(text) && text.length >= minLength && text.length <= maxLength)
    : fc.string({ unit: HEADER_CHAR, minLength, maxLength: Math.min(maxLength, 40) })
  const invalid = fc.constantFrom(...['a'.repeat(maxLength + 1), ...(minLength > 0 ? [''] : []), ...(schema.pattern ? ['not valid!', '-1'] : [])])
  return { valid, invalid }
}

/** Generates requests for the operations of one document. */
function generator(document: OpenApiDocument, known: Known) {
  const { valid, invalid } = schemaArbitraries(document.components.schemas as Record<string, Schema>)
  const sometimes = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<T> | undefined) => (bad ? fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: bad }) : good)
  /** A valid or an invalid value of a parameter, as the text it is sent as. */
  const values = (parameter: Parameter): { valid: fc.Arbitrary<string>; invalid?: fc.Arbitrary<string> } => {
    const schema = parameter.schema as Schema
    if (parameter.in === 'header') return headerValues(schema)
    return { valid: valid(schema).map(queryText), invalid: invalid(schema)?.map(queryText) }
  }
  /** Sets a parameter's value on a request. */
  const give = (request: GeneratedRequest, parameter: Parameter, value: string) => {
    if (parameter.in === 'header') request.headers[parameter.name] = value
    else request.query.push([parameter.name, value])
  }

  /** The parts every request has: who, the path, and a body (valid, or now and then not). */
  function base(template: string, operation: Operation, aimed: boolean): fc.Arbitrary<GeneratedRequest> {
    // Each `{param}` of the path: an id of its collection, an id of nothing, or no id at all.
    const segments = template.split('/').map((segment, i, all) => {
      if (!segment.startsWith('{')) return fc.constant(segment)
      const ids = known[all[i - 1]!] ?? []
      const real = ids.length ? fc.constantFrom(...ids) : fc.uuid()
      return aimed ? real : fc.oneof({ weight: 6, arbitrary: real }, { weight: 1, arbitrary: fc.uuid() }, { weight: 1, arbitrary: fc.constantFrom('nope', '0', 'x'.repeat(40)) })
    })
    const content = Object.entries(operation.requestBody?.content ?? {})
    const body = content.length
      ? fc.constantFrom(...content).chain(([type, { schema }]) => (aimed ? valid(schema as Schema) : sometimes(valid(schema as Schema), invalid(schema as Schema))).map((value) => ({ type, value })))
      : fc.constant(undefined)
    return fc.record({ caller: callerArb, path: fc.tuple(...segments).map((parts) => parts.join('/')), body }).map((parts) => ({ ...parts, query: [], headers: {} }))
  }

  const parametersOf = (operation: Operation) => (operation.parameters ?? []).filter((parameter) => parameter.in === 'query' || parameter.in === 'header')

  /** Random requests: up to three parameters, each valid or now and then not. */
  function random(template: string, operation: Operation): fc.Arbitrary<GeneratedRequest> {
    const parameters = parametersOf(operation)
    const chosen = fc.subarray(parameters, { maxLength: Math.min(3, parameters.length) }).chain((picked) =>
      fc.tuple(...picked.map((parameter) => {
        const { valid: good, invalid: bad } = values(parameter)
        return sometimes(good, bad).map((value): [Parameter, string] => [parameter, value])
      })),
    )
    // A change that needs If-Match (428 otherwise) sometimes sends one that any version matches.
    const ifMatch = operation.responses['428'] ? fc.constantFrom(undefined, '*') : fc.constant(undefined)
    return fc.tuple(base(template, operation, false), chosen, ifMatch).map(([request, given, star]) => {
      for (const [parameter, value] of given) give(request, parameter, value)
      if (star) request.headers['If-Match'] = star
      return request
    })
  }

  /**
   * Every query and header parameter, in groups of GROUP: a request with a valid value of each
   * parameter of a group, and one with an invalid value of each (a valid one for a parameter
   * nothing refuses). The path names what exists, and the body is valid, so the parameters are
   * what is tested.
   */
  function everyParameter(template: string, operation: Operation): fc.Arbitrary<GeneratedRequest>[] {
    const together = parametersOf(operation).filter((parameter) => !ALONE.has(parameter.name))
    const groups = [
      ...Array.from({ length: Math.ceil(together.length / GROUP) }, (_, i) => together.slice(i * GROUP, (i + 1) * GROUP)),
      ...parametersOf(operation).filter((parameter) => ALONE.has(parameter.name)).map((parameter) => [parameter]),
    ]
    return groups.flatMap((group) =>
      [true, false].map((good) =>
        fc.tuple(base(template, operation, true), fc.tuple(...group.map((parameter) => {
          const { valid: v, invalid: bad } = values(parameter)
          return (good ? v : (bad ?? v)).map((value): [Parameter, string] => [parameter, value])
        }))).map(([request, given]) => {
          for (const [parameter, value] of given) give(request, parameter, value)
          return request
        }),
      ),
    )
  }

  return { random, everyParameter }
}

/** Operations in the document's order, deletes last: what they remove, the others still find. */
const deletesLast = (document: OpenApiDocument) => operations(document).sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'))

eachDatabase(t, async (t, api) => {
  const member = await api.newUser({ name: 'A plain user' })
  const callers: Record<Caller, Api> = { admin: api.admin, member: member.api }
  for (const version of [2, 1]) {
    const document = JSON.parse(api.app.openapi.get(version)!()) as OpenApiDocument
    t.test(`v${version}: generated requests to every operation get documented answers below 500`, async (t) => {
      const known = await seed(api)
      const generate = generator(document, known)
      const statuses = new Map<string, Map<number, number>>()
      const failures: string[] = []
      let parameterRequests = 0
      for (const { path: template, method, operation } of deletesLast(document)) {
        const name = operation.operationId!
        const seedOf = SEED + version
        const random = fc.sample(generate.random(template, operation), { seed: seedOf, numRuns: SLOW.has(name) ? 2 : RUNS })
        const covering = generate.everyParameter(template, operation).map((arbitrary, i) => fc.sample(arbitrary, { seed: seedOf + i, numRuns: 1 })[0]!)
        parameterRequests += covering.length
        for (const request of [...covering, ...random]) {
          const search = new URLSearchParams(request.query).toString()
          const target = `${request.path}${search ? `?${search}` : ''}`
          try {
            const headers = { ...request.headers, ...(request.body ? { 'content-type': request.body.type } : {}) }
            const answer = await callers[request.caller].request(method.toUpperCase(), target, { headers, body: request.body && JSON.stringify(request.body.value) })
            const counts = statuses.get(name) ?? new Map<number, number>()
            statuses.set(name, counts.set(answer.status, (counts.get(answer.status) ?? 0) + 1))
            if (answer.status >= 500) failures.push(`${method.toUpperCase()} ${target} as ${request.caller} → ${answer.status} ${answer.text}`)
          } catch (error) {
            failures.push(`${method.toUpperCase()} ${target} as ${request.caller}${request.body ? ` ${JSON.stringify(request.body).slice(0, 300)}` : ''}: ${(error as Error).message}`)
          }
        }
      }
      t.comment(`seed ${SEED + version} (OPENAPI_SEED=${SEED} repeats it); ${parameterRequests} requests for the parameters: ${[...statuses].map(([name, counts]) => `${name} ${[...counts].map(([status, n]) => `${status}×${n}`).join(' ')}`).join('; ')}`)
      t.same(failures, [], 'every answer below 500 (and, checked as sent, as the document says)')
      // A bearer token has no session to read.
      const reads = operations(document).filter(({ method, operation }) => method === 'get' && operation.operationId !== 'getSession').map(({ operation }) => operation.operationId!)
      t.same(reads.filter((name) => ![...(statuses.get(name)?.keys() ?? [])].some((status) => status < 300)), [], 'every read succeeded at least once: the generated requests are valid often enough')
      const writes = [...statuses].filter(([name]) => /^(create|update|replace)/.test(name) && [...statuses.get(name)!.keys()].some((status) => status < 300))
      t.ok(writes.length > 0, `generated bodies were written: ${writes.map(([name]) => name).join(', ')}`)
    })
  }
})
