/** Lookups the shop's collection hooks make: a few statements, by hand. */
import type { Statements } from './client.js'

/** A product's price and status; undefined when there is none, or it is in the trash. */
export async function productForSale(db: Statements, id: string): Promise<{ price: number; status: string } | undefined> {
  const rows = await db.query<{ price: string; status: string }>('SELECT price::text AS price, status::text AS status FROM products WHERE id = $1 AND deleted_at IS NULL', [id], 'shop_product_for_sale_live')
  return rows[0] && { price: Number(rows[0].price), status: rows[0].status }
}

/**
 * An order's status, the order locked until `tx` ends: a change to its items and a move of its
 * state (paying takes the items' stock) happen one after the other. Undefined when there is none.
 */
export async function lockedOrderStatus(tx: Statements, id: string): Promise<string | undefined> {
  const rows = await tx.query<{ status: string }>('SELECT status::text AS status FROM orders WHERE id = $1 FOR NO KEY UPDATE', [id], 'shop_order_status_locked')
  return rows[0]?.status
}

/** How many items an order has. */
export async function itemCount(tx: Statements, orderId: string): Promise<number> {
  const rows = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM order_items WHERE order_id = $1', [orderId], 'shop_item_count')
  return rows[0]!.n
}

/** What an order's items need of each product (the items of deleted products need nothing). */
const NEEDS = `SELECT product_id, sum(quantity)::int AS quantity FROM order_items WHERE order_id = $1 AND product_id IS NOT NULL GROUP BY product_id`

export interface StockNeed {
  id: string
  sku: string
  stock: number
  needed: number
}

/**
 * The products an order's items need, with their stock, locked in id order until `tx` ends: two
 * orders paid at once that share products take their locks in the same order, so neither waits
 * for the other forever.
 */
export async function lockStock(tx: Statements, orderId: string): Promise<StockNeed[]> {
  return tx.query<StockNeed>(
    `SELECT p.id, p.sku, p.stock, need.quantity AS needed FROM products p JOIN (${NEEDS}) need ON need.product_id = p.id ORDER BY p.id FOR NO KEY UPDATE OF p`,
    [orderId],
    'shop_lock_stock',
  )
}

/**
 * Takes the items' quantities from stock (`direction` -1) or gives them back (+1), moving each
 * product's updated_at; returns the products as `returning` selects them.
 */
export async function moveStock<Row>(tx: Statements, orderId: string, direction: 1 | -1, returning: string): Promise<Row[]> {
  return tx.query<Row>(
    `UPDATE products p SET stock = p.stock + $2 * need.quantity,
            updated_at = greatest(date_trunc('milliseconds', clock_timestamp()), p.updated_at + interval '1 millisecond')
       FROM (${NEEDS}) need WHERE p.id = need.product_id RETURNING ${returning}`,
    [orderId, direction],
    direction < 0 ? 'shop_take_stock' : 'shop_give_stock',
  )
}
