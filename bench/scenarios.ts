/** The load-test scenarios: the request stream each sends, shared by the service and both floors. */

export interface BenchRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  path: string
  body?: string
}

export interface Scenario {
  name: string
  /** Each request revalidates: it sends the ETag the target gave for the same path in If-None-Match. */
  revalidate?: boolean
  /** The status every response must have; anything else counts as an error. */
  status: number
  /**
   * Each load uses up rows: this many per second of load are made for it before it starts, and
   * its `ids` are theirs, each for one request.
   */
  freshPerSecond?: number
  /** The n-th request of a run; `ids` are existing product ids, `run` makes created values unique. */
  request(n: number, ids: readonly string[], run: string): BenchRequest
}

/** The admin's token in the throwaway bench database (seed.ts stores its hash): catalogue writes are admins'. */
export const BENCH_ADMIN_TOKEN = 'rf_token_bench-admin-of-a-throwaway-database'

const pick = (ids: readonly string[], n: number) => ids[(n * 7919) % ids.length]!

export const LIST_QUERY = 'status=active&sort=price&size=20'

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'GET one product',
    status: 200,
    request: (n, ids) => ({ method: 'GET', path: `/api/v1/products/${pick(ids, n)}` }),
  },
  {
    name: 'GET a filtered, sorted page of 20 (count bounded at 10,000)',
    status: 200,
    request: () => ({ method: 'GET', path: `/api/v1/products?${LIST_QUERY}` }),
  },
  {
    name: 'GET that page again with If-None-Match (304)',
    status: 304,
    revalidate: true,
    request: () => ({ method: 'GET', path: `/api/v1/products?${LIST_QUERY}` }),
  },
  {
    name: 'POST a product',
    status: 201,
    request: (n, _ids, run) => ({
      method: 'POST',
      path: '/api/v1/products',
      body: JSON.stringify({ name: `Bench ${n}`, sku: `B${run}-${n}`, price: 9.99, stock: n % 100, tags: ['bench'] }),
    }),
  },
  {
    name: 'PATCH one field',
    status: 200,
    request: (n, ids) => ({ method: 'PATCH', path: `/api/v1/products/${pick(ids, n)}`, body: JSON.stringify({ stock: n % 100_000 }) }),
  },
  {
    name: 'DELETE a product',
    status: 204,
    // More than the fastest target deletes in a second: a load that ran out would count 404s as errors.
    freshPerSecond: 8_000,
    request: (n, ids) => ({ method: 'DELETE', path: `/api/v1/products/${ids[n % ids.length]!}` }),
  },
]

/** The headers of a scenario's requests to `origin`; a revalidation first asks it for the ETag. */
export async function scenarioHeaders(scenario: Scenario, origin: string, sample: BenchRequest): Promise<Record<string, string>> {
  // Reads are anonymous, as a shop's catalogue mostly is; writes are an admin's.
  const headers: Record<string, string> = sample.method === 'GET' ? {} : { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` }
  if (sample.body) headers['content-type'] = 'application/json'
  if (!scenario.revalidate) return headers
  const etag = (await fetch(origin + sample.path)).headers.get('etag')
  if (!etag) throw new Error(`${origin} sent no ETag for ${sample.path}`)
  return { ...headers, 'if-none-match': etag }
}
