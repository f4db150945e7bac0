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

async function getProduct(id: string) {
  const { rows } = await pool.query(`SELECT ${ITEM} FROM products WHERE id = $1`, [id])
  return product(rows[0])
}

/** The page and its count bounded at COUNT_LIMIT (10,000) in one statement, as the service reads them. */
async function listProducts(url: URL) {
  const { rows } = await pool.query(
    `SELECT c.n, p.* FROM (SELECT count(*)::int AS n FROM (SELECT FROM products WHERE status = $1 LIMIT 10001) m) c
       LEFT JOIN LATERAL (SELECT id, name, sku, price, status FROM products WHERE status = $1 ORDER BY price ASC, id ASC LIMIT 20) p ON true`,
    [url.searchParams.get('status')],
  )
  const n = rows[0].n as number
  return { rows: rows[0].id === null ? [] : rows.map(({ n: _, ...row }) => row), total: n > 10_000 ? undefined : n }
}

/**
 * A write as the service must make it (DESIGN "Events"): the change and its event in one
 * transaction, the event's insert sent with the COMMIT. The fewest round trips a correct outbox
 * takes with node-postgres: BEGIN, the change, the event with COMMIT.
 */
async function transactionally(change: (client: pg.PoolClient) => Promise<Record<string, unknown>>, type: string) {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    const row = product(await change(client))
    const event = JSON.stringify([{ type, collection: 'products', item_id: (row as { id?: string }).id, data: row }])
    await client.query(`INSERT INTO events (type, collection, item_id, data) SELECT e.type, e.collection, e.item_id, e.data FROM jsonb_to_recordset(${client.escapeLiteral(event)}::jsonb) AS e(type text, collection text, item_id uuid, data jsonb); COMMIT`)
    return row
  } catch (error) {
    await client.query('ROLLBACK')
    throw error
  } finally {
    client.release()
  }
}

const createProduct = (body: Record<string, unknown>) =>
  transactionally(async (client) => {
    const { rows } = await client.query(
      `INSERT INTO products (id, name, sku, price, stock, tags, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, now(), now()) RETURNING ${ITEM}`,
      [randomUUID(), body.name, body.sku, body.price, body.stock, body.tags],
    )
    return rows[0]
  }, 'products.created')

const patchProduct = (id: string, body: Record<string, unknown>) =>
  transactionally(async (client) => {
    const { rows } = await client.query(`UPDATE products SET stock = $2, updated_at = now() WHERE id = $1 RETURNING ${ITEM}`, [id, body.stock])
    return rows[0]
  }, 'products.updated')

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
    send(response, 404, {})
  } catch (error) {
    send(response, 500, { error: String(error) })
  }
})
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`)
})
