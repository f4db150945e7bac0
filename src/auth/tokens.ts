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
import { Id, Int32, Nullable, Timestamp } from '../schema-types.js'
import { requireCaller, SCOPES } from './caller.js'
import { newSecret, secretHash } from './secrets.js'
import { REQUIRED_AUTH } from '../openapi/document.js'
import { errors, noBody, success } from '../openapi/responses.js'

const MAX_DAYS = 365

/** Each scope at most once: a token holds at most all of them. */
const scopes = (options: Record<string, unknown> = {}) => Type.Array(StringEnum(SCOPES), { uniqueItems: true, maxItems: SCOPES.length, ...options })

const Issue = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 120 }),
    scopes: Type.Optional(scopes({ minItems: 1, default: ['read'] })),
    expires_in_days: Type.Optional(Int32({ minimum: 1, maximum: MAX_DAYS, default: 30 })),
  },
  { additionalProperties: false },
)

/** `$id`s of the answers, components of each version's document (`#/components/schemas/Token`). */
const TOKEN_SCHEMA_ID = 'Token'
const ISSUED_TOKEN_SCHEMA_ID = 'IssuedToken'

const Token = Type.Object({
  id: Id(),
  name: Type.String(),
  scopes: scopes(),
  expires_at: Timestamp(),
  last_used_at: Nullable(Timestamp()),
  created_at: Timestamp(),
})
const IssuedToken = Type.Object({ ...Token.properties, token: Type.String() })

const represent = (t: StoredToken) => ({
  id: t.id,
  name: t.name,
  scopes: t.scopes,
  expires_at: t.expiresAt.toISOString(),
  last_used_at: t.lastUsedAt?.toISOString() ?? null,
  created_at: t.createdAt.toISOString(),
})

/** The most tokens a user holds (the list is not paged): a script that issues one per run cannot grow it without bound. */
export const MAX_TOKENS = 100

const tags = ['tokens']
const issue = {
  tags, operationId: 'createToken', summary: 'Issue a bearer token (its secret is shown once)', security: REQUIRED_AUTH,
  description: `Any signed-in caller, for themselves. Scopes \`read\` and \`write\`; it expires after \`expires_in_days\`. A user holds at most ${MAX_TOKENS} tokens (409 past that).`,
  body: Issue,
  response: { 201: success('Issued: `token` is the secret, shown only now.', Type.Ref(ISSUED_TOKEN_SCHEMA_ID), ['Location']) },
}
const list = {
  tags, operationId: 'listTokens', summary: "The caller's tokens, without their secrets", security: REQUIRED_AUTH,
  description: 'Any signed-in caller: their own tokens, newest first, expired ones included.',
  response: { 200: success("The caller's tokens.", Type.Array(Type.Ref(TOKEN_SCHEMA_ID), { maxItems: MAX_TOKENS })) },
}
const revoke = {
  tags, operationId: 'deleteToken', summary: 'Revoke a token at once', security: REQUIRED_AUTH,
  description: "Any signed-in caller, for their own tokens: another user's token is 404.",
  response: { 204: noBody('Revoked.') },
}
const params = Type.Object({ id: Id() })

/** The token routes on a version's plugin, which gets the Token and IssuedToken schemas (one each per version). */
export function registerTokens(app: FastifyInstance, store: Accounts): void {
  app.addSchema({ ...Token, $id: TOKEN_SCHEMA_ID })
  app.addSchema({ ...IssuedToken, $id: ISSUED_TOKEN_SCHEMA_ID })
  app.post<{ Body: Static<typeof Issue> }>('/tokens', { preValidation: requireBody, schema: issue, config: { document: { responses: errors([409], { unsafe: true, body: true }) } } }, async (request, reply) => {
    const caller = requireCaller(request)
    const { name, scopes = ['read'], expires_in_days: days = 30 } = request.body
    const secret = newSecret('rf_token_')
    const issued = await store.createToken(caller.user.id, secretHash(secret), { name, scopes, expiresAt: new Date(Date.now() + days * 86_400_000) }, MAX_TOKENS)
    if (!issued) throw new ApiError('CONFLICT', `A user holds at most ${MAX_TOKENS} tokens, expired ones included: revoke one first.`)
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
