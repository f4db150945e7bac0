/** The batch's request and answer, as they validate and as the document shows them. */
import type { FastifyInstance } from 'fastify'
import { Type, type Static } from 'typebox'
import { REQUIRED_AUTH, type DocumentedRoute } from '../openapi/document.js'
import { requestHeaders } from '../openapi/request-headers.js'
import { errors, success } from '../openapi/responses.js'
import { Int32, StringEnum } from '../schema-types.js'

export const BATCH_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

const Operation = Type.Object(
  {
    method: StringEnum(BATCH_METHODS),
    path: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'Below the API version, with its query: `/products`, `/orders/{$0.id}/items?fields=quantity`. `{$i.field}` is operation i\'s answer\'s field.',
      examples: ['/orders/{$0.id}/items'],
    }),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 1024 }), {
        description: 'Only If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since, Prefer, Idempotency-Key and Content-Type: the caller is the batch\'s.',
      }),
    ),
    body: Type.Optional(Type.Unknown({ description: 'The JSON body, as the route takes it; a string `"{$i.field}"` is that value, with its type.' })),
  },
  { additionalProperties: false },
)

export type Operation = Static<typeof Operation>

const batchOf = (maxOperations: number) => Type.Object(
  {
    operations: Type.Array(Operation, { minItems: 1, maxItems: maxOperations }),
    atomic: Type.Optional(Type.Boolean({ description: 'true (the default): every operation in one transaction, and the first failure undoes them all. false: each in its own, each answered.' })),
  },
  { additionalProperties: false },
)

export type BatchBody = Static<ReturnType<typeof batchOf>>

const Result = Type.Object({
  status: Int32({ minimum: 100, maximum: 599 }),
  headers: Type.Record(Type.String(), Type.String(), { description: 'Location, Content-Location, ETag, Last-Modified, Preference-Applied, Idempotent-Replayed, Link, X-Total-Count, Retry-After: those the answer had.' }),
  body: Type.Unknown({ description: 'The answer\'s JSON body (an error body for a failure), or null.' }),
})

const resultsOf = (maxOperations: number) => Type.Object({ results: Type.Array(Result, { maxItems: maxOperations, description: 'One per operation, in their order.' }) })

/** The answer's `$id`: a component of each version's document (`#/components/schemas/BatchResults`). */
const RESULTS_SCHEMA_ID = 'BatchResults'

/** The route's schema, and what only the document shows; the answer's schema is added to `api`, the version's plugin. */
export function batchDocument(api: FastifyInstance, maxOperations: number): { schema: object; document: DocumentedRoute } {
  api.addSchema({ ...resultsOf(maxOperations), $id: RESULTS_SCHEMA_ID })
  return {
    schema: {
      tags: ['batch'],
      operationId: 'batch',
      summary: 'Several operations in one request, in one transaction',
      description: [
        `Up to ${maxOperations} operations, each a request you could make alone: the same routes, rules, preconditions, idempotency keys, events and rate limits (each operation counts).`,
        'By default they run in one transaction: the first that fails undoes them all, and the answer is its status and error body, its details under `operations[i]`.',
        'With `"atomic": false` each runs in its own and every result is answered, failures too; one that refers to a failed one is 424.',
        'An Idempotency-Key covers the whole batch.',
      ].join(' '),
      security: REQUIRED_AUTH,
      consumes: ['application/json'],
      body: batchOf(maxOperations),
      response: { 200: success('Every operation\'s result, in order.', Type.Ref(RESULTS_SCHEMA_ID)) },
    },
    document: {
      headers: requestHeaders(['Idempotency-Key']),
      // A failed operation's status is the batch's.
      responses: errors([403, 404, 405, 409, 412, 413, 415, 428], { unsafe: true, body: true }),
    },
  }
}
