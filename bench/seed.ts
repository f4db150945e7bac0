/** Seeds a benchmark database in SQL: an admin with a token, `products` rows, and two reviews for each of the first 100,000. */
import type pg from 'pg'
import { secretHash } from '../src/auth/secrets.js'
import { BENCH_ADMIN_TOKEN } from './scenarios.js'

export async function seed(client: pg.Client, products: number): Promise<string[]> {
  await client.query(
    `WITH admin AS (INSERT INTO users (id, email, name, roles) VALUES (gen_random_uuid(), 'bench@shop.test', 'Bench admin', ARRAY['admin']) RETURNING id)
     INSERT INTO tokens (id, secret_hash, user_id, name, scopes, expires_at) SELECT gen_random_uuid(), $1, id, 'bench', ARRAY['read', 'write'], now() + interval '1 day' FROM admin`,
    [secretHash(BENCH_ADMIN_TOKEN)],
  )
  // Secondary indexes are built after the rows: one build is many times faster than ten million
  // insertions into each (the trigram indexes most of all).
  const { rows: indexes } = await client.query<{ name: string; definition: string }>(
    `SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE tablename = 'products' AND indexname <> 'products_pkey'`,
  )
  for (const index of indexes) await client.query(`DROP INDEX ${client.escapeIdentifier(index.name)}`)
  await client.query(
    `INSERT INTO products (id, name, sku, price, cost, stock, status, description, tags, created_at, updated_at)
     SELECT gen_random_uuid(), 'Product ' || i, 'SKU-' || i, 1 + (i % 10000) / 100.0, (i % 5000) / 100.0, i % 500,
            (ARRAY['draft', 'active', 'archived'])[1 + i % 3]::product_status,
            'A product for the load test.', ARRAY['tag' || (i % 50), 'bench'],
            now() - i * interval '1 second', now() - i * interval '1 second'
       FROM generate_series(1, $1) AS i`,
    [products],
  )
  await client.query(`SET maintenance_work_mem = '512MB'`)
  for (const index of indexes) await client.query(index.definition)
  // Two reviews for each of the first 100,000 products: the reviews are not what grows here.
  await client.query(
    `INSERT INTO reviews (id, product_id, author_id, rating, title, body, created_at, updated_at)
     SELECT gen_random_uuid(), p.id, NULL, 1 + (abs(hashtext(p.sku || r)) % 5), 'Review ' || r, 'Fine.', now(), now()
       FROM (SELECT id, sku FROM products LIMIT 100000) p CROSS JOIN generate_series(1, 2) AS r`,
  )
  // As autovacuum would before long: statistics, and the visibility map index-only scans need.
  await client.query('VACUUM ANALYZE')
  // A random sample without sorting every row by random() (TABLESAMPLE reads about 1% of the pages).
  const { rows } = await client.query<{ id: string }>(`SELECT id FROM products ${products > 500_000 ? 'TABLESAMPLE SYSTEM (1)' : ''} ORDER BY random() LIMIT 5000`)
  return rows.map((r) => r.id)
}

/** `count` more products for a load to use up (a DELETE's), named by `run`; their ids. */
export async function freshProducts(client: pg.Client, count: number, run: string): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO products (id, name, sku, price, stock, status, tags, created_at, updated_at)
     SELECT gen_random_uuid(), 'Fresh ' || i, 'F' || $2 || '-' || i, 5, 1, 'active', ARRAY['bench'], now(), now()
       FROM generate_series(1, $1) AS i
     RETURNING id`,
    [count, run],
  )
  return rows.map((r) => r.id)
}
