/** Lookups the shop's collection hooks make: a few statements, by hand. */
import type { Database } from './client.js'

/** A product's price and status; undefined when there is none. */
export async function productForSale(db: Database, id: string): Promise<{ price: number; status: string } | undefined> {
  const rows = await db.query<{ price: string; status: string }>('SELECT price::text AS price, status::text AS status FROM products WHERE id = $1', [id], 'shop_product_for_sale')
  return rows[0] && { price: Number(rows[0].price), status: rows[0].status }
}

/** An order's status; undefined when there is none. */
export async function orderStatus(db: Database, id: string): Promise<string | undefined> {
  const rows = await db.query<{ status: string }>('SELECT status::text AS status FROM orders WHERE id = $1', [id], 'shop_order_status')
  return rows[0]?.status
}
