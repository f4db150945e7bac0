// The OpenAPI 3.1 document of each API version (DESIGN "OpenAPI, clients and operations"):
// generated from the route schemas, valid, complete, and describing what the service answers.
import { Validator } from '@seriousme/openapi-schema-validator'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import t from 'tap'
import { eachDatabase, type Api } from '../helpers/api.js'
import { contract, operations, type DocumentedResponse, type OpenApiDocument } from '../helpers/contract.js'
import { productBody } from '../helpers/fixtures.js'
import { bodyName, nameComponents } from '../../src/openapi/components.js'

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
        const shared = (operation.responses[status] as { $ref: string }).$ref.replace('#/components/responses/', '')
        t.same(v2.components.responses?.[shared]?.content, { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } }, `${name} ${status}: the error body, JSON whatever was asked`)
      }
    }
    for (const id of ['listProducts', 'updateProduct', 'listReviews', 'listWebhookDeliveries', 'getWebhookDelivery', 'signIn', 'listEvents']) t.ok(ids.has(id), id)
  })

  t.test('summaries in words: an item with its article, a list by its name and its parent', async (t) => {
    const expected = [
      ['get', '/api/v2/products', 'List products'],
      ['post', '/api/v2/products', 'Create a product, or several'],
      ['get', '/api/v2/products/{id}', 'Read a product'],
      ['put', '/api/v2/products/{id}', 'Replace a product'],
      ['patch', '/api/v2/products/{id}', 'Change fields of a product (JSON merge patch)'],
      ['delete', '/api/v2/products/{id}', 'Delete a product'],
      ['get', '/api/v2/products/{parentId}/reviews', "List a product's reviews"],
      ['put', '/api/v2/products/{parentId}/reviews/{id}', 'Replace a review'],
      ['post', '/api/v2/orders', 'Create an order, or several'],
      ['get', '/api/v2/orders/{parentId}/items/{id}', 'Read an order item'],
      ['post', '/api/v2/users', 'Create a user, or several'],
      ['get', '/api/v2/webhooks/{parentId}/deliveries', "List a webhook's deliveries"],
      ['get', '/api/v2/webhooks/{parentId}/deliveries/{id}', 'Read a webhook delivery'],
    ] as const
    for (const [method, path, summary] of expected) t.equal(v2.paths[path]![method]!.summary, summary, `${method.toUpperCase()} ${path}`)
    for (const { path, method, operation } of operations(v2)) t.notMatch(operation.summary, / one of /, `${method.toUpperCase()} ${path}: "${operation.summary}"`)
  })

  t.test('components: the error body and each collection\'s schemas, per version', async (t) => {
    for (const name of ['Error', 'Product', 'ProductSummary', 'ProductCreate', 'ProductReplace', 'ProductPatch', 'User', 'Order', 'OrderItem', 'Webhook', 'WebhookCreated']) {
      t.ok(v2.components.schemas[name], `v2 has ${name}`)
    }
    t.notOk(v2.components.schemas.WebhookDeliveryCreate, 'no body schemas for a collection clients cannot write')
    // Examples for the docs page's sample bodies; each is checked against its schema below.
    const property = (name: string, field: string) => (v2.components.schemas[name] as { properties: Record<string, { examples?: unknown[] }> }).properties[field]!
    t.same(property('ProductCreate', 'name').examples, ['Espresso cup'])
    t.ok(property('WebhookCreate', 'url').examples?.length, 'a webhook url example')
    // A body's defaults are said in words: openapi-typescript types a property with a `default` as always present.
    for (const [name, field, value] of [['ProductCreate', 'status', '"draft"'], ['TokenCreate', 'expires_in_days', '30']] as const) {
      const described = property(name, field) as { default?: unknown; description?: string }
      t.notOk('default' in described, `${name}.${field}: no default keyword`)
      t.match(described.description, `Default: \`${value}\`.`, `${name}.${field}: its default in its description`)
    }
    const price = (document: OpenApiDocument) => (document.components.schemas.Product as { properties: Record<string, unknown> }).properties.price
    t.notSame(price(v1), price(v2), 'a field a version shows differently has that version\'s schema')
    const patch = v2.paths['/api/v2/products/{id}']!.patch!
    t.same(Object.keys(patch.requestBody!.content).sort(), ['application/json', 'application/merge-patch+json', 'application/vnd.resourceful.v2+json'])
    t.same(v2.components.securitySchemes && Object.keys(v2.components.securitySchemes).sort(), ['bearer', 'session'])
  })

  t.test('a schema several places have is a component, not a copy', async (t) => {
    const schemas = v2.components.schemas as Record<string, { properties?: Record<string, unknown> }>
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
    t.same(schemas.Product!.properties!.price, ref('Money'), 'an amount')
    t.same(schemas.Product!.properties!.cost, { anyOf: [ref('Money'), { type: 'null' }] }, 'an amount that may be null')
    t.same(schemas.OrderItem!.properties!.unit_price, ref('Money'))
    t.same(schemas.Order!.properties!.total, ref('OrderTotal'), 'a total, which may be larger')
    for (const name of ['Webhook', 'WebhookCreate', 'WebhookPatch']) t.same(schemas[name]!.properties!.events, ref('WebhookEvents'), `${name}: the event types`)
    for (const [path, name] of [['/api/v2/sessions', 'SignIn'], ['/api/v2/tokens', 'TokenCreate']] as const) {
      const content = v2.paths[path]!.post!.requestBody!.content
      t.same(Object.values(content).map((media) => media.schema), [ref(name), ref(name)], `${path}: one body schema, in each media type`)
    }
    t.notOk(schemas.WebhookDeliverySummary, 'a summary with every field of the item is the item')
    t.same((v2.paths['/api/v2/webhooks/{parentId}/deliveries']!.get!.responses['200'] as DocumentedResponse).content!['application/json']!.schema, {
      type: 'array', items: ref('WebhookDelivery'), maxItems: 100, description: 'A page of items, in order.',
    })
    t.match(schemas.Event!.properties!.actor_id, { type: ['string', 'null'], format: 'uuid' }, 'a nullable value as a type union, as the others')
    t.notOk(v1.components.schemas.Money, 'v1 shows amounts as numbers')
    // No object schema is written out twice anywhere in either document.
    for (const document of [v1, v2]) {
      const seen = new Map<string, string[]>()
      const canonical = (value: unknown): string => JSON.stringify(value, (_key, item: unknown) =>
        item && typeof item === 'object' && !Array.isArray(item) ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => a.localeCompare(b))) : item)
      const walk = (node: unknown, at: string, component: boolean) => {
        if (node === null || typeof node !== 'object') return
        if ('properties' in node && !component) seen.set(canonical(node), [...(seen.get(canonical(node)) ?? []), at])
        for (const [key, child] of Object.entries(node)) walk(child, `${at}/${key}`, at === '#/components/schemas')
      }
      walk(document.paths, '#/paths', false)
      walk(document.components.schemas, '#/components/schemas', false)
      t.same([...seen.values()].filter((places) => places.length > 1), [], `v${document.info.version}: no object schema twice`)
    }
  })

  t.test('a body named as a component another schema has is a mistake, found when the document is made', async (t) => {
    t.equal(bodyName('createOrderItem'), 'OrderItemCreate')
    t.equal(bodyName('updateProduct'), 'ProductPatch')
    t.equal(bodyName('signIn'), 'SignIn')
    const body = { type: 'object', properties: { name: { type: 'string' } } }
    const document = {
      paths: { '/api/v9/tokens': { post: { operationId: 'createToken', requestBody: { content: { 'application/json': { schema: body } } } } } },
      components: { schemas: { TokenCreate: { type: 'object', properties: { other: { type: 'string' } } } } },
    }
    t.throws(() => nameComponents(document), /the body of createToken would be TokenCreate, which is another schema/)
  })

  t.test('every example is valid against its schema; the components every client meets have one', async (t) => {
    // Spectral's OpenAPI rules check a schema's `example` and `default`, not JSON Schema's `examples`: this test does.
    for (const document of [v1, v2]) {
      const ajv = new Ajv2020({ strict: false, allErrors: true })
      addFormats.default(ajv)
      ajv.addSchema({ $id: 'doc', components: document.components })
      const checked: string[] = []
      const walk = (node: unknown, at: string) => {
        if (node === null || typeof node !== 'object') return
        const { examples } = node as { examples?: unknown }
        if (Array.isArray(examples) && !at.endsWith('/properties')) {
          const validate = ajv.compile(JSON.parse(JSON.stringify({ ...node, examples: undefined }).replaceAll('"#/components/', '"doc#/components/')))
          for (const example of examples) t.ok(validate(example), `v${document.info.version} ${at}: ${ajv.errorsText(validate.errors)}`)
          checked.push(at)
        }
        for (const [key, child] of Object.entries(node)) walk(child, `${at}/${key}`)
      }
      walk(document.paths, '#/paths')
      walk(document.components.schemas, '#/components/schemas')
      for (const name of ['Error', 'Session', 'Token', 'Event', 'WebhookDelivery']) t.ok(checked.includes(`#/components/schemas/${name}`), `v${document.info.version} ${name} has an example`)
    }
  })

  t.test('what every operation shares is said once: media types, error answers, headers, deprecation', async (t) => {
    const read = (document: OpenApiDocument, version: number) => document.paths[`/api/v${version}/products/{id}`]!.get!
    const ok = (document: OpenApiDocument, version: number) => read(document, version).responses['200'] as DocumentedResponse
    t.same(Object.keys(ok(v2, 2).content!), ['application/json', 'application/vnd.resourceful.v2+json'], 'a success answer in JSON or the version\'s vendor type')
    t.same(read(v2, 2).responses['404'], { $ref: '#/components/responses/NotFound' })
    t.same(Object.keys(v2.components.responses!).slice(0, 3), ['BadRequest', 'Unauthorized', 'Forbidden'])
    t.same(ok(v2, 2).headers!.RateLimit, { $ref: '#/components/headers/RateLimit' })
    t.match(ok(v2, 2).headers!.ETag, { required: true }, 'a header every such answer carries is required')
    t.notOk(read(v2, 2).deprecated, 'v2 is current')
    // v1 is deprecated (src/collections): each operation says so, and each answer carries Deprecation.
    t.ok(operations(v1).every(({ operation }) => operation.deprecated), 'every operation of v1 is deprecated')
    t.same(ok(v1, 1).headers!.Deprecation, { $ref: '#/components/headers/Deprecation' })
    t.match(v1.components.headers!.Deprecation, { required: true })
    t.notOk(v2.components.headers!.Deprecation)
  })

  t.test('a list documents the parameters its parser reads', async (t) => {
    const list = v2.paths['/api/v2/products']!.get!
    const names = new Set(list.parameters!.filter((p) => p.in === 'query').map((p) => p.name))
    for (const name of ['page', 'size', 'sort', 'order', 'cursor', 'fields', 'filter', 'status', 'status[in]', 'price[gte]', 'name[contains]', 'description[null]']) t.ok(names.has(name), name)
    t.notOk(names.has('cost[contains]'), 'contains only on searchable fields')
    // What the document calls valid, the parser takes; and the other way round.
    const schemaOf = (name: string) => list.parameters!.find((p) => p.name === name)!.schema as { pattern?: string; maximum?: number }
    for (const name of ['created_at[gte]', 'price[gte]']) t.type(schemaOf(name).pattern, 'string', `${name}: the parser's own pattern`)
    t.ok(new RegExp(schemaOf('created_at[gte]').pattern!).test('2026-01-31'), 'a plain date is a documented date-time filter value')
    t.equal((await api.anonymous.get('/api/v2/products?created_at[gte]=2026-01-31')).status, 200)
    t.ok(new RegExp(schemaOf('price[gte]').pattern!).test('12.50'))
    t.notOk(new RegExp(schemaOf('price[gte]').pattern!).test('1e3'), 'no exponents')
    t.equal((await api.anonymous.get('/api/v2/products?price[gte]=1e3')).status, 400)
    // A field[in] list: each comma-separated value as field= takes it.
    const statusIn = new RegExp(schemaOf('status[in]').pattern!)
    t.ok(statusIn.test('draft,active') && !statusIn.test('draft,sold') && !statusIn.test('draft,'), 'status[in]: statuses, comma-separated')
    t.equal((await api.anonymous.get('/api/v2/products?status[in]=draft,active')).status, 200)
    t.equal((await api.anonymous.get('/api/v2/products?status[in]=draft,sold')).status, 400)
    t.ok(new RegExp(schemaOf('created_at[in]').pattern!).test('2026-01-31,2026-02-01T10:00:00Z'))
    t.notOk(schemaOf('name[in]').pattern, 'free text: anything but a comma, as the length bound says')
    t.equal(schemaOf('page').maximum, 2_147_483_647)
    t.equal((await api.anonymous.get('/api/v2/products?page=2147483648')).status, 400, 'past the documented maximum: 400')
    const item = v2.paths['/api/v2/products/{id}']!.get!
    t.same(item.parameters!.map((p) => [p.in, p.name, p.required]), [
      ['query', 'fields', false],
      ['query', 'trashed', false],
      ['query', 'include', false],
      ['query', 'include[reviews][size]', false],
      ['query', 'fields[reviews]', false],
      ['query', 'fields[reviews.product]', false],
      ['query', 'fields[reviews.author]', false],
      ['path', 'id', true],
      ['header', 'If-None-Match', false],
      ['header', 'If-Modified-Since', false],
      ['header', 'If-Match', false],
      ['header', 'If-Unmodified-Since', false],
    ], 'the fields, the trash, the relations to embed, the id, and the conditional request headers')
    // Orders need If-Match on every change (428 without it); products do not.
    const ifMatch = (path: string) => v2.paths[path]!.patch!.parameters!.find((p) => p.name === 'If-Match')
    t.match(ifMatch('/api/v2/orders/{id}'), { in: 'header', required: true })
    t.match(ifMatch('/api/v2/products/{id}'), { in: 'header', required: false })
    t.ok(v2.paths['/api/v2/orders/{id}']!.patch!.responses['428'] && !v2.paths['/api/v2/products/{id}']!.patch!.responses['428'], '428 only where If-Match is required')
    t.ok(v2.paths['/api/v2/products']!.post!.parameters!.some((p) => p.in === 'header' && p.name === 'Idempotency-Key'), 'a create takes Idempotency-Key')
  })

  // Every answer of the suite is checked (test/helpers/api.ts); here, that the check finds faults.
  t.test('an answer the document does not describe is a problem', async (t) => {
    const check = contract(v1)
    const created = await api.admin.post('/api/v1/products', productBody())
    t.equal(created.status, 201)
    const answer = { method: 'POST', path: '/api/v1/products', ...created }
    t.same(check.problems(answer), [], 'as it came')
    t.match(check.problems({ ...answer, status: 202 }), [/status 202 is not documented/])
    const read = await api.admin.get(`/api/v1/products/${created.body.id}`)
    const withoutTag = new Headers([...read.headers].filter(([header]) => header !== 'etag'))
    t.match(check.problems({ method: 'GET', path: `/api/v1/products/${created.body.id}`, ...read, headers: withoutTag }), [/header ETag is missing/])
    t.match(check.problems({ ...answer, body: { ...created.body, price: '12.00' } }), [/body body\/price must be number/])
    t.match(check.problems({ ...answer, headers: new Headers({ ...Object.fromEntries(created.headers), 'content-type': 'text/plain' }) }), [/a text\/plain body/])
    t.match(check.problems({ ...answer, method: 'GET', path: '/api/v1/nowhere', status: 200 }), [/not in the document/])
    t.same(check.problems({ ...answer, method: 'GET', path: '/api/v1/nowhere', status: 404 }), [], 'a path that does not exist is not an operation')
  })
})
