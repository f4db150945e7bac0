/**
 * Bearer tokens: `POST /tokens` issues one (its secret shown once), `GET /tokens` lists the
 * caller's without secrets, `DELETE /tokens/{id}` revokes one at once.
 */
import type { FastifyInstance } from 'fastify'
import { Type, type Static } from 'typebox'
import type { Accounts, StoredToken } from '../db/accounts.js'
import { ApiError } from '../errors.js'
import { requireBody } from '../http/body-parser.js'
import { requestPath } from '../http/request-target.js'
import { isUuid } from '../ids.js'
import { StringEnum } from '../json-schema.js'
import { requireCaller, SCOPES } from './caller.js'
import { newSecret, secretHash } from './secrets.js'
import { REQUIRED_AUTH } from '../openapi/document.js'
import { errors, noBody, success } from '../openapi/responses.js'

const MAX_DAYS = 365

const Issue = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 120 }),
    scopes: Type.Optional(Type.Array(StringEnum(SCOPES), { minItems: 1, uniqueItems: true, default: ['read'] })),
    expires_in_days: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DAYS, default: 30 })),
  },
  { additionalProperties: false },
)

const TokenView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  expires_at: Type.String(),
  last_used_at: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
})
const IssuedToken = Type.Object({ ...TokenView.properties, token: Type.String() })

const represent = (t: StoredToken) => ({
  id: t.id,
  name: t.name,
  scopes: t.scopes,
  expires_at: t.expiresAt.toISOString(),
  last_used_at: t.lastUsedAt?.toISOString() ?? null,
  created_at: t.createdAt.toISOString(),
})

const tags = ['tokens']
const issue = {
  tags, operationId: 'createToken', summary: 'Issue a bearer token (its secret is shown once)', security: REQUIRED_AUTH,
  body: Issue,
  response: { 201: success('Issued: `token` is the secret, shown only now.', IssuedToken, ['location']) },
}
const list = {
  tags, operationId: 'listTokens', summary: "The caller's tokens, without their secrets", security: REQUIRED_AUTH,
  response: { 200: success("The caller's tokens.", Type.Array(TokenView)) },
}
const revoke = {
  tags, operationId: 'deleteToken', summary: 'Revoke a token at once', security: REQUIRED_AUTH,
  response: { 204: noBody('Revoked.') },
}
const params = Type.Object({ id: Type.String({ format: 'uuid' }) })

export function registerTokens(app: FastifyInstance, store: Accounts): void {
  app.post<{ Body: Static<typeof Issue> }>('/tokens', { preValidation: requireBody, schema: issue, config: { document: { responses: errors([], { unsafe: true, body: true }) } } }, async (request, reply) => {
    const caller = requireCaller(request)
    const { name, scopes = ['read'], expires_in_days: days = 30 } = request.body
    const secret = newSecret('rf_token_')
    const issued = await store.createToken(caller.user.id, secretHash(secret), { name, scopes, expiresAt: new Date(Date.now() + days * 86_400_000) })
    reply.code(201).header('location', `${requestPath(request)}/${issued.id}`)
    // The only time the secret is shown: it is stored as a hash.
    return { ...represent(issued), token: secret }
  })

  app.get('/tokens', { schema: list, config: { document: { responses: errors([]) } } }, async (request) => {
    const caller = requireCaller(request)
    return (await store.tokensOf(caller.user.id)).map(represent)
  })

  app.delete<{ Params: { id: string } }>('/tokens/:id', { schema: revoke, config: { document: { params, responses: errors([404], { unsafe: true }) } } }, async (request, reply) => {
    const caller = requireCaller(request)
    // Another user's token is as unknown as one that does not exist.
    if (!isUuid(request.params.id) || !(await store.deleteToken(caller.user.id, request.params.id))) throw new ApiError('NOT_FOUND')
    return reply.code(204).send()
  })
}
