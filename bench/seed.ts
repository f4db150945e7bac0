/** Seeds a benchmark database in SQL: an admin with a token, `products` rows and two reviews for each. */
import type pg from 'pg'
import { secretHash } from '../src/auth/secrets.js'
import { BENCH_ADMIN_TOKEN } from './scenarios.js'

export async function seed(client: pg.Client, products: number): Promise<string[]> {
  await client.query(
    `WITH admin AS (INSERT INTO users (id, email, name, roles) VALUES (gen_random_uuid(), 'bench@shop.test', 'Bench admin', ARRAY['admin']) RETURNING id)
     INSERT INTO tokens (id, secret_hash, user_id, name, scopes, expires_at) SELECT gen_random_uuid(), $1, id, 'bench', ARRAY['read', 'write'], now() + interval '1 day' FROM admin`,
    [secretHash(BENCH_ADMIN_TOKEN)],
  )
  await client.query(
    `INSERT INTO products (id, name, sku, price, cost, stock, status, description, tags, created_at, updated_at)
     SELECT gen_random_uuid(), 'Product ' || i, 'SKU-' || i, 1 + (i % 10000) / 100.0, (i % 5000) / 100.0, i % 500,
            (ARRAY['draft', 'active', 'archived'])[1 + i % 3]::product_status,
            'A product for the load test.', ARRAY['tag' || (i % 50), 'bench'],
            now() - i * interval '1 second', now() - i * interval '1 second'
       FROM generate_series(1, $1) AS i`,
    [products],
  )
  await client.query(
    `INSERT INTO reviews (id, product_id, author_id, rating, title, body, created_at, updated_at)
     SELECT gen_random_uuid(), p.id, NULL, 1 + (abs(hashtext(p.sku || r)) % 5), 'Review ' || r, 'Fine.', now(), now()
       FROM products p CROSS JOIN generate_series(1, 2) AS r`,
  )
  // As autovacuum would before long: statistics, and the visibility map index-only scans need.
  await client.query('VACUUM ANALYZE')
  const { rows } = await client.query<{ id: string }>('SELECT id FROM products ORDER BY random() LIMIT 5000')
  return rows.map((r) => r.id)
}
