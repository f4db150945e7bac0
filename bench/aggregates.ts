/**
 * Aggregates over a million orders (issue 27): the orders and their items seeded in one SQL
 * statement, then `GET /orders/aggregates` timed one request at a time, as an admin over every
 * order and as a customer over their own, against the statement time limit (STATEMENT_TIMEOUT_MS);
 * and the statement alone in the database (EXPLAIN ANALYZE), with and without a covering index.
 */
import type pg from 'pg'
import { secretHash } from '../src/auth/secrets.js'
import { STATEMENT_TIMEOUT_MS } from '../src/db/client.js'
import { BENCH_ADMIN_TOKEN } from './scenarios.js'

/** A customer's token in the throwaway bench database. */
const CUSTOMER_TOKEN = 'rf_token_bench-customer-of-a-throwaway-database'
/** Customers the orders are spread over: a customer has orders / CUSTOMERS of them. */
const CUSTOMERS = 10_000
/** The aggregate the issue names. */
export const AGGREGATE_QUERY = 'group_by=status&metrics=count,sum:total,avg:total'

export interface AggregateProbe {
  name: string
  status: number
  medianMs: number
  p90Ms: number
}

export interface AggregatesResult {
  orders: number
  items: number
  seedSeconds: number
  statementTimeoutMs: number
  probes: AggregateProbe[]
  /** The statement alone, in the database: execution time (ms, median) and the plan's top node, without and with the index. */
  statement: { name: string; ms: number; plan: string }[]
}

/**
 * `orders` orders of `CUSTOMERS` customers, each with one item of one of the first 1,000
 * products, in one statement. The total is the item's price times its quantity, written with the
 * order: the trigger that keeps it (order_items_total) is off while the items go in, or it would
 * update each order again, a million times.
 */
async function seedOrders(client: pg.Client, orders: number): Promise<void> {
  await client.query(
    `WITH c AS (INSERT INTO users (id, email, name, roles) SELECT gen_random_uuid(), 'customer' || i || '@bench.test', 'Customer ' || i, '{}' FROM generate_series(1, $1::int) AS i RETURNING id),
          t AS (INSERT INTO tokens (id, secret_hash, user_id, name, scopes, expires_at) SELECT gen_random_uuid(), $2, id, 'bench', ARRAY['read'], now() + interval '1 day' FROM (SELECT id FROM c LIMIT 1) one)
     SELECT count(*) FROM c`,
    [CUSTOMERS, secretHash(CUSTOMER_TOKEN)],
  )
  await client.query('ALTER TABLE order_items DISABLE TRIGGER order_items_total')
  await client.query(
    `WITH c AS (SELECT array_agg(id ORDER BY id) AS ids FROM users WHERE email LIKE 'customer%@bench.test'),
          p AS (SELECT array_agg(id) AS ids, array_agg(price) AS prices FROM (SELECT id, price FROM products ORDER BY id LIMIT 1000) one),
          o AS (INSERT INTO orders (id, user_id, status, total, created_at, updated_at)
                SELECT gen_random_uuid(), c.ids[1 + i % ${CUSTOMERS}], (ARRAY['pending', 'paid', 'shipped', 'delivered', 'cancelled'])[1 + i % 5]::order_status,
                       p.prices[1 + i % 1000] * (1 + i % 3), now() - i * interval '1 second', now() - i * interval '1 second'
                  FROM generate_series(1, $1::int) AS i, c, p
                RETURNING id, total, created_at)
     INSERT INTO order_items (id, order_id, product_id, quantity, unit_price, created_at, updated_at)
     SELECT gen_random_uuid(), o.id, p.ids[1 + (extract(epoch FROM o.created_at)::bigint % 1000)::int], 1, o.total, o.created_at, o.created_at FROM o, p`,
    [orders],
  )
  await client.query('ALTER TABLE order_items ENABLE TRIGGER order_items_total')
  await client.query('VACUUM ANALYZE orders')
  await client.query('VACUUM ANALYZE order_items')
}

/** Sequential requests: median and p90, and the status they all had. */
async function probe(origin: string, name: string, path: string, token: string, runs: number, headers: Record<string, string> = {}): Promise<AggregateProbe> {
  const times: number[] = []
  let status = 0
  for (let i = 0; i < runs; i++) {
    const began = performance.now()
    const response = await fetch(origin + path, { headers: { authorization: `Bearer ${token}`, ...headers } })
    await response.arrayBuffer()
    times.push(performance.now() - began)
    if (status !== 0 && response.status !== status) throw new Error(`${path}: ${response.status}, then ${status}`)
    status = response.status
  }
  times.sort((a, b) => a - b)
  return { name, status, medianMs: times[Math.floor(times.length / 2)]!, p90Ms: times[Math.floor(times.length * 0.9)]! }
}

/** The headline aggregate's statement, as the service sends it for an admin. */
const HEADLINE = `SELECT "status", count(*) AS "count", sum("total") AS "sum_total", round(avg("total"), 2) AS "avg_total" FROM "orders" GROUP BY "status" ORDER BY "status" LIMIT 1001`
/** The statement of group_by=user_id (more groups than an answer holds). */
const BY_CUSTOMER = `SELECT "user_id", count(*) AS "count" FROM "orders" GROUP BY "user_id" ORDER BY "user_id" LIMIT 1001`

/** A statement run `runs` times under EXPLAIN ANALYZE: the median execution time and its plan. */
async function explain(client: pg.Client, statement: string, runs: number): Promise<{ ms: number; plan: string }> {
  const text = `EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`
  const times: number[] = []
  let plan = ''
  for (let i = 0; i < runs; i++) {
    const [result] = (await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }] }>(text)).rows[0]!['QUERY PLAN']
    times.push(result['Execution Time'])
    plan = describe(result.Plan)
  }
  times.sort((a, b) => a - b)
  return { ms: times[Math.floor(times.length / 2)]!, plan }
}

interface PlanNode {
  'Node Type': string
  'Workers Planned'?: number
  Strategy?: string
  'Index Name'?: string
  Plans?: PlanNode[]
}

/** The plan's nodes, outermost first: `Limit > Finalize GroupAggregate > Gather Merge (2 workers) > ...`. */
function describe(node: PlanNode): string {
  const label = `${node['Node Type']}${node.Strategy && node.Strategy !== 'Plain' ? ` (${node.Strategy})` : ''}${node['Workers Planned'] ? ` (${node['Workers Planned']} workers)` : ''}${node['Index Name'] ? ` on ${node['Index Name']}` : ''}`
  return node.Plans?.length ? `${label} > ${node.Plans.map(describe).join(', ')}` : label
}

/** Seeds `orders` orders into the bench database, then measures; `runs` requests per probe. */
export async function measureAggregates(origin: string, client: pg.Client, orders: number, runs: number): Promise<AggregatesResult> {
  const began = performance.now()
  await seedOrders(client, orders)
  const seedSeconds = (performance.now() - began) / 1000
  const path = `/api/v1/orders/aggregates?${AGGREGATE_QUERY}`
  const admin = await probe(origin, `admin, every order: ${AGGREGATE_QUERY}`, path, BENCH_ADMIN_TOKEN, runs)
  const etag = (await fetch(origin + path, { headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` } })).headers.get('etag')!
  const probes = [
    admin,
    await probe(origin, 'admin, every order, v2 (amounts as objects), all five metrics', `/api/v2/orders/aggregates?group_by=status&metrics=count,sum:total,avg:total,min:total,max:total`, BENCH_ADMIN_TOKEN, runs),
    await probe(origin, 'admin, the newest tenth (created_at[gte])', `${path}&created_at[gte]=${new Date(Date.now() - (orders / 10) * 1000).toISOString()}`, BENCH_ADMIN_TOKEN, runs),
    await probe(origin, `a customer, their ${orders / CUSTOMERS} orders`, path, CUSTOMER_TOKEN, runs),
    await probe(origin, `admin, group_by=user_id (${CUSTOMERS.toLocaleString('en')} groups: 400 TOO_MANY_GROUPS)`, '/api/v1/orders/aggregates?group_by=user_id', BENCH_ADMIN_TOKEN, runs),
    await probe(origin, 'admin, If-None-Match with the current tag (304)', path, BENCH_ADMIN_TOKEN, runs, { 'if-none-match': etag }),
  ]
  const statement = [
    { name: 'every order by status, without an index on status', ...(await explain(client, HEADLINE, runs)) },
    { name: 'every order by customer (the first 1,001 groups)', ...(await explain(client, BY_CUSTOMER, runs)) },
  ]
  // A covering index would let the aggregate read the index alone; measured, not kept (docs/decisions.md).
  await client.query('CREATE INDEX bench_orders_status_total ON orders (status) INCLUDE (total)')
  await client.query('VACUUM ANALYZE orders')
  statement.push({ name: 'every order by status, with orders (status) INCLUDE (total)', ...(await explain(client, HEADLINE, runs)) })
  await client.query('DROP INDEX bench_orders_status_total')
  const [{ n: items }] = (await client.query<{ n: string }>('SELECT count(*) AS n FROM order_items')).rows as [{ n: string }]
  return { orders, items: Number(items), seedSeconds, statementTimeoutMs: STATEMENT_TIMEOUT_MS, probes, statement }
}

/** The result as the report's section. */
export function aggregatesMarkdown(result: AggregatesResult): string[] {
  const n = (value: number, digits = 0) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
  const limit = result.statementTimeoutMs
  return [
    `Aggregates over ${n(result.orders)} orders and ${n(result.items)} items (seeded in ${n(result.seedSeconds, 1)} s), one request at a time; the statement time limit is ${n(limit)} ms:`,
    '',
    '| GET /orders/aggregates | status | median ms | p90 ms | of the limit |',
    '|---|---:|---:|---:|---:|',
    ...result.probes.map((p) => `| ${p.name} | ${p.status} | ${n(p.medianMs, 1)} | ${n(p.p90Ms, 1)} | ${((100 * p.p90Ms) / limit).toFixed(1)}% |`),
    '',
    '| The statement alone (EXPLAIN ANALYZE) | median ms | plan |',
    '|---|---:|---|',
    ...result.statement.map((s) => `| ${s.name} | ${n(s.ms, 1)} | ${s.plan} |`),
    '',
  ]
}
