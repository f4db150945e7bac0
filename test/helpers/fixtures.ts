/** Example request bodies for the shop's collections. */
let sequence = 0

/** A valid product body with a unique sku; `overrides` replace or add fields. */
export function productBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  sequence += 1
  return { name: `Product ${sequence}`, sku: `SKU-${String(sequence).padStart(5, '0')}`, price: 10, ...overrides }
}
