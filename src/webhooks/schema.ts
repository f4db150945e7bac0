/** Webhooks and their deliveries, as the API shows them. */
import { Type, type Static } from 'typebox'
import { EventId, Id, Int32, Nullable, ServerFields, StringEnum, Timestamp } from '../schema-types.js'
import { MAX_ATTEMPTS } from './schedule.js'

const url = Type.String({ format: 'uri', maxLength: 2048, description: 'Where events are POSTed: https, to a public address.', examples: ['https://hooks.shop.example/resourceful'] })
const pattern = Type.String({
  pattern: '^(\\*|[a-z_]+\\.(\\*|[a-z_]+))$',
  maxLength: 100,
  description: 'An event type (`orders.status_changed`), every type of a collection (`orders.*`), or every event (`*`).',
})
const events = Type.Array(pattern, { minItems: 1, maxItems: 50, uniqueItems: true, examples: [['orders.*', 'products.updated']] })
const secret = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/]{32,86}={0,2}$',
  // The pattern's bound (6 + 86 + 2), for tools that do not read patterns.
  maxLength: 94,
  description: 'Signs the deliveries: `whsec_` and the base64 of 24 to 64 random bytes. Write-only: generated when left out, and shown only in the response to the create.',
})
const description = Type.String({ maxLength: 500 })

export const WebhookCreate = Type.Object(
  {
    url,
    events,
    secret: Type.Optional(secret),
    active: Type.Optional(Nullable(Type.Boolean(), { default: true })),
    description: Type.Optional(Nullable(description)),
  },
  { additionalProperties: false },
)

export const Webhook = Type.Object({
  id: ServerFields.id,
  url,
  events,
  active: Type.Boolean({ description: 'Deliveries are made only while it is active; the service disables a webhook whose receiver answers 410, or has failed every delivery for 24 hours.' }),
  description: Nullable(description),
  // The service writes a short sentence (worker.ts, db/webhooks.ts); a PUT may send it back, so as input it is bounded.
  disabled_reason: Nullable(Type.String({ maxLength: 500 }), { description: 'Why the service disabled it; cleared when it is made active again.' }),
  failing_since: Nullable(Timestamp(), { description: 'Since when every delivery has failed; null after a success.' }),
  created_at: ServerFields.created_at,
  updated_at: ServerFields.updated_at,
})

export const WebhookSummary = Type.Pick(Webhook, ['id', 'url', 'events', 'active'])

export type Webhook = Static<typeof Webhook>

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const

export const Delivery = Type.Object({
  id: ServerFields.id,
  webhook_id: Id(),
  event_id: EventId({ description: "The event's id in the feed: the `webhook-id` of every attempt." }),
  event_type: Type.String(),
  status: StringEnum(DELIVERY_STATUSES, { description: `pending until an attempt succeeds (a 2xx), or until ${MAX_ATTEMPTS} attempts have failed.` }),
  attempts: Int32({ minimum: 0, maximum: MAX_ATTEMPTS }),
  // Node's HTTP parser takes any three digits after the version ("HTTP/1.1 000" too), and stores them as sent.
  last_status: Nullable(Int32({ minimum: 0, maximum: 999 }), {
    description: "The receiver's status code at the last attempt, as it sent it (three digits, not always 100-599); null when it did not answer.",
  }),
  last_error: Nullable(Type.String(), { description: 'Why the last attempt failed.' }),
  next_attempt_at: Nullable(Timestamp(), { description: 'When it is attempted next, while pending.' }),
  created_at: ServerFields.created_at,
  updated_at: ServerFields.updated_at,
})

export const DeliverySummary = Delivery
