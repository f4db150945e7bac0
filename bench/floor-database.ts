/**
 * Floor 2: a bare node:http + pg server that runs by hand the SQL each endpoint needs, with the
 * same pool size as the service. The service is measured as a ratio of this: its cost beyond
 * the database's.
 */
import { createHash, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import pg from 'pg'

// Decimals and counts as JS numbers, as the service represents them.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, Number)

const pool = new pg.Pool({ connectionString: process.argv[2], max: 10 })
const ITEM = 'id, name, sku, price, cost, stock, status, description, tags, review_count, rating_total, created_at, updated_at'

/** The representation: rating_total is stored, rating_average is what clients see. */
function product(row: Record<string, unknown>) {
  const { rating_total: total, ...rest } = row as { rating_total: number; review_count: number }
  return { ...rest, rating_average: rest.review_count ? Math.round((total / rest.review_count) * 100) / 100 : null }
}

function send(response: ServerResponse, status: number, value: unknown, request?: IncomingMessage): void {
  const body = JSON.stringify(value)
  if (request) {
    // Lists are revalidated as the service does: a hash of the body as the ETag, 304 on a match.
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`
    response.setHeader('etag', etag)
    if (request.headers['if-none-match'] === etag) return void response.writeHead(304).end()
  }
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body)
}

async function readBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  let text = ''
  for await (const chunk of request) text += chunk
  return JSON.parse(text)
}

// Every statement is prepared once per connection (a name), as the service prepares its own.
async function getProduct(id: string) {
  const { rows } = await pool.query({ name: 'get_product', text: `SELECT ${ITEM} FROM products WHERE id = $1 AND deleted_at IS NULL`, values: [id] })
  return rows[0] && product(rows[0])
}

/** The page and its count bounded at COUNT_LIMIT (10,000) in one statement, as the service reads them. */
async function listProducts(url: URL) {
  const { rows } = await pool.query({
    name: 'list_products',
    text: `SELECT c.n, p.* FROM (SELECT count(*)::int AS n FROM (SELECT FROM products WHERE status = $1 AND deleted_at IS NULL LIMIT 10001) m) c
       LEFT JOIN LATERAL (SELECT id, name, sku, price, status FROM products WHERE status = $1 AND deleted_at IS NULL ORDER BY price ASC, id ASC LIMIT 20) p ON true`,
    values: [url.searchParams.get('status')],
  })
  const n = rows[0].n as number
  return { rows: rows[0].id === null ? [] : rows.map(({ n: _, ...row }) => row), total: n > 10_000 ? undefined : n }
}

/**
 * A write as the service must make it (DESIGN "Events"): the change and its event, atomically.
 * The least a hand-written server needs is one statement: the change in a CTE, and the event
 * inserted from the row it returns, its `data` the representation (rating_average, not the
 * stored total). One round trip, prepared once per connection.
 */
const withEvent = (change: string, type: string) => `WITH p AS (${change} RETURNING ${ITEM}),
  e AS (INSERT INTO events (type, collection, item_id, data)
        SELECT '${type}', 'products', p.id, to_jsonb(p) - 'rating_total'
          || jsonb_build_object('rating_average', CASE WHEN p.review_count > 0 THEN round(p.rating_total::numeric / p.review_count, 2) END)
        FROM p)
  SELECT * FROM p`

const CREATE = withEvent('INSERT INTO products (id, name, sku, price, stock, tags, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, now(), now())', 'products.created')
// A change is conditional, as the service's: only when it changes something (no event otherwise),
// updated_at moving forward even within one millisecond; the row is read when it changes nothing.
const PATCH = withEvent(
  `UPDATE products SET stock = $2, updated_at = greatest(now(), updated_at + interval '1 millisecond') WHERE id = $1 AND deleted_at IS NULL AND stock IS DISTINCT FROM $2`,
  'products.updated',
)
// Products keep a trash (DESIGN "Data over time"): a DELETE moves the live item there.
const DELETE = withEvent(
  `UPDATE products SET deleted_at = now(), updated_at = greatest(now(), updated_at + interval '1 millisecond') WHERE id = $1 AND deleted_at IS NULL`,
  'products.trashed',
)

async function createProduct(body: Record<string, unknown>) {
  const { rows } = await pool.query({ name: 'create_product', text: CREATE, values: [randomUUID(), body.name, body.sku, body.price, body.stock, body.tags] })
  return product(rows[0])
}

async function patchProduct(id: string, body: Record<string, unknown>) {
  const { rows } = await pool.query({ name: 'patch_product', text: PATCH, values: [id, body.stock] })
  return rows[0] ? product(rows[0]) : await getProduct(id)
}

/** Whether there was such a product to delete. */
async function deleteProduct(id: string): Promise<boolean> {
  const { rows } = await pool.query({ name: 'delete_product', text: DELETE, values: [id] })
  return rows.length === 1
}

const server = createServer(async (request, response) => {
  const url = new URL(request.url!, 'http://floor')
  const id = /^\/api\/v1\/products\/([^/]+)$/.exec(url.pathname)?.[1]
  try {
    if (request.method === 'GET' && id) return send(response, 200, await getProduct(id))
    if (request.method === 'GET') {
      const { rows, total } = await listProducts(url)
      if (total !== undefined) response.setHeader('x-total-count', total)
      return send(response, 200, rows, request)
    }
    if (request.method === 'POST') return send(response, 201, await createProduct(await readBody(request)))
    if (request.method === 'PATCH' && id) return send(response, 200, await patchProduct(id, await readBody(request)))
    if (request.method === 'DELETE' && id) return (await deleteProduct(id)) ? void response.writeHead(204).end() : send(response, 404, {})
    send(response, 404, {})
  } catch (error) {
    send(response, 500, { error: String(error) })
  }
})
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`)
})
