/** /webhooks (admins) and each webhook's read-only delivery log, /webhooks/{id}/deliveries. */
import { Type } from 'typebox'
import { ApiError } from '../errors.js'
import { defineCollection, type Collection } from '../resources/collection.js'
import { refusedUrl } from './addresses.js'
import { Delivery, DeliverySummary, Webhook, WebhookCreate, WebhookSummary } from './schema.js'
import { newWebhookSecret } from './signature.js'

const ADMINS = { list: 'admin', read: 'admin', create: 'admin', update: 'admin', delete: 'admin' } as const

/** `allowPrivate`: URLs may point anywhere, over http too (WEBHOOKS_ALLOW_PRIVATE). */
export function webhookCollections(allowPrivate: boolean): readonly Collection[] {
  const webhooks = defineCollection({
    name: 'webhooks',
    model: 'webhook',
    schemas: { create: WebhookCreate, item: Webhook, summary: WebhookSummary },
    sortable: ['url', 'created_at'],
    filterable: ['url', 'active', 'events', 'created_at'],
    access: ADMINS,
    // Its worker disables a failing webhook (`active`, `failing_since`) without an event.
    changedWithoutEvents: true,
    // Stored as given: signing needs the secret itself, not a hash of it.
    writeOnly: { secret: { column: 'secret', store: (value) => value, generate: newWebhookSecret, shownOnCreate: true } },
    hooks: {
      beforeWrite({ data, current }) {
        const reason = typeof data.url === 'string' ? refusedUrl(data.url, allowPrivate) : undefined
        if (reason) throw new ApiError('VALIDATION_ERROR', undefined, [{ field: 'url', reason }])
        // Made active again: it starts afresh.
        if (data.active === true && current?.active === false) {
          data.disabled_reason = null
          data.failing_since = null
        }
      },
    },
  })
  const deliveries = defineCollection({
    name: 'deliveries',
    model: 'webhookDelivery',
    table: 'webhook_deliveries',
    schemas: { create: Type.Object({}), item: Delivery, summary: DeliverySummary },
    parent: { collection: webhooks, field: 'webhook_id' },
    // The service keeps this log; clients only read it.
    writes: false,
    changedWithoutEvents: true,
    sortable: ['event_id', 'created_at', 'next_attempt_at'],
    filterable: ['status', 'event_type', 'created_at'],
    access: { ...ADMINS, create: 'nobody', update: 'nobody', delete: 'nobody' },
  })
  return [webhooks, deliveries]
}
