/**
 * Examples of the components every client meets (an error, a session, a token, an event, a
 * webhook delivery), as the service writes them: what the docs page shows and generated clients
 * document. Added to each version's document by name; Spectral checks each against its schema
 * (`npm run lint:openapi`), and so does test/openapi/document.test.ts.
 */

const ADMIN = { id: '01a212ec-59a3-75f5-bdf6-d00b46935f65', email: 'ada@shop.example', name: 'Ada Lovelace', roles: ['admin'] }
const PRODUCT = '01a212ec-6c4e-7017-b981-b5cca16c672c'

export const COMPONENT_EXAMPLES: Readonly<Record<string, readonly unknown[]>> = {
  Error: [
    {
      error: {
        code: 'VALIDATION_ERROR',
        message: 'The request body is not valid.',
        details: [
          { field: 'sku', reason: 'must match pattern "^[A-Z0-9-]{3,32}$"' },
          { field: 'price.amount', reason: 'must be >= 0' },
        ],
      },
    },
  ],
  Session: [{ id: '01a212f0-1c2d-7b3e-9f40-5a6b7c8d9e0f', user: ADMIN, created_at: '2026-11-24T09:30:00.000Z', expires_at: '2026-12-24T09:30:00.000Z' }],
  Token: [
    {
      id: '01a212ec-72ec-725d-9f28-efa8399114ee',
      name: 'deploy script',
      scopes: ['read'],
      expires_at: '2026-12-25T13:36:55.480Z',
      last_used_at: '2026-11-25T14:02:11.907Z',
      created_at: '2026-11-25T13:36:55.531Z',
    },
  ],
  Event: [
    {
      id: 3,
      type: 'products.updated',
      collection: 'products',
      item_id: PRODUCT,
      occurred_at: '2026-11-25T13:36:54.255Z',
      actor_id: ADMIN.id,
      data: {
        id: PRODUCT, sku: 'CUP-ESP-01', name: 'Espresso cup', price: { amount: 12.5, currency: 'USD' }, cost: null, stock: 38,
        status: 'active', description: null, tags: ['kitchen', 'ceramic'], review_count: 0, rating_average: null,
        created_at: '2026-11-25T13:36:53.838Z', updated_at: '2026-11-25T13:36:54.290Z',
      },
    },
  ],
  WebhookDelivery: [
    {
      id: '01a212ec-6f40-7790-8999-bafcae45d6c0',
      webhook_id: '01a212ec-6b8b-706a-8b38-3a4115fba239',
      event_id: 3,
      event_type: 'products.updated',
      status: 'pending',
      attempts: 2,
      last_status: 503,
      last_error: 'The receiver answered 503.',
      next_attempt_at: '2026-11-25T13:37:58.338Z',
      created_at: '2026-11-25T13:36:54.590Z',
      updated_at: '2026-11-25T13:36:55.338Z',
    },
  ],
}

/** Sets the examples of the components the document has. */
export function addExamples(schemas: Record<string, Record<string, unknown>>): void {
  for (const [name, examples] of Object.entries(COMPONENT_EXAMPLES)) if (schemas[name]) schemas[name].examples = examples
}
