// The OpenAPI 3.1 document of each API version (DESIGN "OpenAPI, clients and operations"):
// generated from the route schemas, valid, complete, and describing what the service answers.
import { Validator } from '@seriousme/openapi-schema-validator'
import t from 'tap'
import { eachDatabase, type Api, type Response } from '../helpers/api.js'
import { contract, operations, type OpenApiDocument } from '../helpers/contract.js'

const documentOf = async (api: Api, version: number) => (await api.anonymous.get(`/api/v${version}/openapi.json`)).body as OpenApiDocument

eachDatabase(t, async (t, api) => {
  const v1 = await documentOf(api, 1)
  const v2 = await documentOf(api, 2)

  t.test('each version has a valid OpenAPI 3.1 document of its own routes', async (t) => {
    for (const [version, document] of [[1, v1], [2, v2]] as const) {
      t.equal(document.openapi, '3.1.0')
      const result = await new Validator().validate(document as never)
      t.ok(result.valid, `v${version} is valid: ${JSON.stringify(result.errors ?? '')}`)
      t.ok(Object.keys(document.paths).every((path) => path.startsWith(`/api/v${version}/`)), `v${version} has only its own paths`)
    }
  })

  t.test('every operation has a unique operationId, a tag the document declares, security, and its answers', async (t) => {
    const declared = new Set(v2.tags!.map((tag) => tag.name))
    const ids = new Set<string>()
    for (const { path, method, operation } of operations(v2)) {
      const name = `${method.toUpperCase()} ${path}`
      t.ok(operation.operationId && !ids.has(operation.operationId), `${name}: operationId ${operation.operationId}`)
      ids.add(operation.operationId!)
      t.ok(operation.tags?.length && operation.tags.every((tag) => declared.has(tag)), `${name}: tags ${operation.tags}`)
      t.ok(Array.isArray(operation.security), `${name}: says who may call it`)
      const statuses = Object.keys(operation.responses)
      t.ok(statuses.some((status) => status.startsWith('2')), `${name}: a success answer`)
      for (const status of ['400', '401', '429', '500', '503']) t.ok(statuses.includes(status), `${name}: documents ${status}`)
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        t.same(operation.responses[status]!.content?.['application/json']?.schema, { $ref: '#/components/schemas/Error' }, `${name} ${status}: the error body`)
      }
    }
    for (const id of ['listProducts', 'updateProduct', 'listReviews', 'listWebhookDeliveries', 'getWebhookDelivery', 'signIn', 'listEvents']) t.ok(ids.has(id), id)
  })

  t.test('components: the error body and each collection\'s schemas, per version', async (t) => {
    for (const name of ['Error', 'Product', 'ProductSummary', 'ProductCreate', 'ProductReplace', 'ProductPatch', 'User', 'Order', 'OrderItem', 'Webhook', 'WebhookCreated']) {
      t.ok(v2.components.schemas[name], `v2 has ${name}`)
    }
    t.notOk(v2.components.schemas.WebhookDeliveryCreate, 'no body schemas for a collection clients cannot write')
    const price = (document: OpenApiDocument) => (document.components.schemas.Product as { properties: Record<string, unknown> }).properties.price
    t.notSame(price(v1), price(v2), 'a field a version shows differently has that version\'s schema')
    const patch = v2.paths['/api/v2/products/{id}']!.patch!
    t.same(Object.keys(patch.requestBody!.content).sort(), ['application/json', 'application/merge-patch+json'])
    t.same(v2.components.securitySchemes && Object.keys(v2.components.securitySchemes).sort(), ['bearer', 'session'])
  })

  t.test('a list documents the parameters its parser reads', async (t) => {
    const list = v2.paths['/api/v2/products']!.get!
    const names = new Set(list.parameters!.filter((p) => p.in === 'query').map((p) => p.name))
    for (const name of ['page', 'size', 'sort', 'order', 'cursor', 'status', 'status[in]', 'price[gte]', 'name[contains]', 'description[null]']) t.ok(names.has(name), name)
    t.notOk(names.has('cost[contains]'), 'contains only on searchable fields')
    // What the document calls valid, the parser takes; and the other way round.
    const schemaOf = (name: string) => list.parameters!.find((p) => p.name === name)!.schema as { pattern?: string; maximum?: number }
    for (const name of ['created_at[gte]', 'price[gte]']) t.type(schemaOf(name).pattern, 'string', `${name}: the parser's own pattern`)
    t.ok(new RegExp(schemaOf('created_at[gte]').pattern!).test('2026-01-31'), 'a plain date is a documented date-time filter value')
    t.equal((await api.anonymous.get('/api/v2/products?created_at[gte]=2026-01-31')).status, 200)
    t.ok(new RegExp(schemaOf('price[gte]').pattern!).test('12.50'))
    t.notOk(new RegExp(schemaOf('price[gte]').pattern!).test('1e3'), 'no exponents')
    t.equal((await api.anonymous.get('/api/v2/products?price[gte]=1e3')).status, 400)
    t.equal(schemaOf('page').maximum, 2_147_483_647)
    t.equal((await api.anonymous.get('/api/v2/products?page=2147483648')).status, 400, 'past the documented maximum: 400')
    const item = v2.paths['/api/v2/products/{id}']!.get!
    t.same(item.parameters!.map((p) => [p.in, p.name, p.required]), [['path', 'id', true]])
  })

  t.test('the service answers as its document says', async (t) => {
    const check = contract(v2)
    const sent: [string, string, Response][] = []
    const send = async (method: string, path: string, response: Promise<Response>) => sent.push([method, path, await response])
    const created = await api.admin.post('/api/v2/products', { name: 'Documented', sku: 'DOC-1', price: '12.50' })
    sent.push(['POST', '/api/v2/products', created])
    const item = `/api/v2/products/${(created.body as { id: string }).id}`
    await send('GET', item, api.anonymous.get(item))
    await send('GET', item, api.anonymous.get(item, { 'if-none-match': created.headers.get('etag')! }))
    await send('GET', '/api/v2/products', api.anonymous.get('/api/v2/products?size=2&name[contains]=doc'))
    await send('GET', '/api/v2/products', api.anonymous.get('/api/v2/products?size=0'))
    await send('PATCH', item, api.admin.patch(item, { stock: 3 }, { 'if-match': created.headers.get('etag')! }))
    await send('PATCH', item, api.admin.patch(item, { stock: -1 }))
    await send('POST', '/api/v2/products', api.anonymous.post('/api/v2/products', { name: 'x' }))
    await send('GET', '/api/v2/products/0190c3a0-0000-7000-8000-000000000000', api.anonymous.get('/api/v2/products/0190c3a0-0000-7000-8000-000000000000'))
    await send('GET', '/api/v2/tokens', api.admin.get('/api/v2/tokens'))
    await send('GET', '/api/v2/events', api.admin.get('/api/v2/events?size=2'))
    await send('DELETE', item, api.admin.delete(item))
    for (const [method, path, response] of sent) {
      t.same(check.problems(method, path, response.status, response.headers, response.text === '' ? undefined : response.body), [], `${method} ${path} → ${response.status}`)
    }
  })
})
