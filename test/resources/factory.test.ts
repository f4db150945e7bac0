// The collection factory is generic: any collection declared with a schema and options gets the
// conventions, and can add rules with hooks. `gadgets` is a collection only this test declares.
import t from 'tap'
import { Type } from 'typebox'
import { Product, ProductCreate } from '../../src/collections/products/schema.js'
import { usersCollection } from '../../src/collections/users/index.js'
import { ApiError } from '../../src/errors.js'
import type { RowOf } from '../../src/db/models.js'
import { defineCollection, type TransitionContext, type WriteContext } from '../../src/resources/collection.js'
import { relationsOf } from '../../src/resources/relations.js'
import { createBodySchema, patchBodySchema, replaceBodySchema } from '../../src/resources/derive-schemas.js'
import { Money, Nullable, ServerFields } from '../../src/schema-types.js'
import { startApi, V1 } from '../helpers/api.js'
import { eachKind } from '../helpers/databases.js'

const GadgetCreate = Type.Object(
  { name: Type.String({ minLength: 1 }), sku: Type.String(), price: Money(), description: Type.Optional(Nullable(Type.String())) },
  { additionalProperties: false },
)
const Gadget = Type.Object({ id: ServerFields.id, name: Type.String(), sku: Type.String(), price: Money(), description: Nullable(Type.String()), created_at: ServerFields.created_at, updated_at: ServerFields.updated_at })
const seen: Pick<WriteContext, 'operation' | 'current'>[] = []

const gadgets = defineCollection({
  name: 'gadgets',
  model: 'product',
  table: 'products',
  schemas: { create: GadgetCreate, item: Gadget, summary: Type.Pick(Gadget, ['id', 'name']) },
  sortable: ['name'],
  filterable: ['price'],
  access: { list: 'public', read: 'public', create: 'public', update: 'public', delete: 'public' },
  hooks: {
    beforeWrite(context) {
      seen.push(structuredClone({ operation: context.operation, current: context.current }))
      const value = (name: 'name' | 'sku') => (name in context.data ? context.data[name] : context.current?.[name])
      if (value('name') === value('sku')) {
        throw new ApiError('VALIDATION_ERROR', undefined, [{ field: 'name', reason: 'must differ from sku' }])
      }
      if ('description' in context.data || !context.current) context.data.description ??= `About ${String(value('name'))}`
    },
  },
})

t.test('a declared collection gets every convention and its hooks run before each write', (t) =>
  eachKind(t, async (t, kind) => {
    seen.length = 0
    const api = await startApi(t, kind, undefined, { collections: [gadgets] })
    const admin = api.admin
    const created = await admin.post(`${V1}/gadgets`, { name: 'Widget', sku: 'W-1', price: 2.5 })
    t.equal(created.status, 201)
    t.equal(created.body.description, 'About Widget', 'a hook may fill in data')
    t.same(Object.keys((await admin.get(`${V1}/gadgets`)).body[0]), ['id', 'name'], 'its own summary')
    t.equal((await admin.get(`${V1}/gadgets?sort=price`)).status, 400, 'its own sortable fields')
    t.equal((await admin.get(`${V1}/products`)).status, 404, 'only the declared collections are served')
    t.equal((await admin.request('PUT', `${V1}/gadgets`, { body: {} })).headers.get('allow'), 'DELETE, GET, HEAD, OPTIONS, PATCH, POST')

    const refused = await admin.post(`${V1}/gadgets`, { name: 'SAME', sku: 'SAME', price: 1 })
    t.equal(refused.status, 422, 'a hook may refuse a write')
    t.same(refused.body.error.details, [{ field: 'name', reason: 'must differ from sku' }])

    const patched = await admin.patch(`${V1}/gadgets/${created.body.id}`, { description: null, price: 3 })
    t.equal(patched.status, 200, patched.text)
    t.equal(patched.body.description, 'About Widget', 'the hook sees the current item on a patch')
    t.same(
      seen.map((c) => [c.operation, c.current?.name ?? null]),
      [['create', null], ['create', null], ['patch', 'Widget']],
    )
  }),
)

t.test('a declaration that does not fit its schema fails at startup, naming the problem', async (t) => {
  const base = { name: 'bad', model: 'product' as const, schemas: { create: GadgetCreate, item: Gadget, summary: Type.Pick(Gadget, ['id']) }, access: gadgets.options.access }
  t.throws(() => defineCollection({ ...base, sortable: ['colour'] }), /sortable field "colour" is not in the item schema/)
  t.throws(() => defineCollection({ ...base, filterable: ['x'] }), /filterable field "x"/)
  t.throws(() => defineCollection({ ...base, filterable: ['price'], searchable: ['price'] }), /searchable field "price" must be a filterable text field/)
  t.throws(() => defineCollection({ ...base, searchable: ['name'] }), /searchable field "name" must be a filterable text field/, 'searchable implies filterable')
  t.throws(() => defineCollection({ ...base, schemas: { ...base.schemas, summary: Type.Object({ id: ServerFields.id, nope: Type.String() }) } }), /summary field "nope"/)
  t.throws(() => defineCollection({ ...base, schemas: { ...base.schemas, item: Type.Object({ name: Type.String() }) } }), /needs an id/)
  t.throws(() => defineCollection({ ...base, access: { ...base.access, list: 'owner-or-admin' } }), /owner-or-admin rule needs an owner field/)
  // The model's type refuses these at compile time; the checks at startup hold for a cast.
  t.throws(() => defineCollection({ ...base, owner: 'nope' as 'name' }), /owner field "nope"/)
  const address2 = Type.Object({ ...Gadget.properties, address_2: Type.String() })
  t.throws(
    () => defineCollection({ ...base, schemas: { ...base.schemas, item: address2 } }),
    /"address_2" is not a field of the Prisma model product/,
    'a field is named as its column: one the model lacks fails at startup, not at its first query',
  )
  t.throws(
    () => defineCollection({ ...base, computed: { sku: { from: ['skuCode'], value: () => 'x' } } }),
    /"skuCode" is not a field of the Prisma model product/,
    'what a computed field reads too',
  )
  t.throws(
    () => defineCollection({ ...base, writeOnly: { secret: { column: 'secretHash' as 'name', store: (value) => value } } }),
    /"secretHash" is not a field of the Prisma model product/,
    "and a write-only field's column",
  )
  t.throws(() => defineCollection({ ...base, noun: 'gadget' }), /noun "gadget" must start with its article, "a" or "an"/)
  t.throws(() => defineCollection({ ...base, fieldAccess: { nope: { read: 'admin' } } }), /field rules for "nope"/)
  t.throws(
    () => defineCollection({ ...base, textSearch: { name: 'A' }, fieldAccess: { name: { read: 'admin' } } }),
    /text search field "name" has a read rule; a search would reveal it/,
  )
  t.throws(() => defineCollection({ ...base, textSearch: { price: 'A' } }), /text search field "price" must be a text field/)
  for (const days of [0, 1.5, 36_501]) t.throws(() => defineCollection({ ...base, history: { days } }), /history days must be a whole number from 1 to 36500/, `history of ${days} days`)
  t.throws(() => defineCollection({ ...base, history: { days: 30 }, changedWithoutEvents: true }), /a collection changed without events keeps no history/)
  t.ok(defineCollection({ ...base, history: { days: 36_500 } }), 'a hundred years')
})

// Checked by the type-check `npm test` runs: each `@ts-expect-error` fails it when its line compiles.
t.test("hooks are typed by the collection's schemas, and rows by its model", async (t) => {
  const base = { name: 'typed', model: 'product' as const, schemas: { create: GadgetCreate, item: Gadget, summary: Type.Pick(Gadget, ['id']) }, access: gadgets.options.access }
  const typed = defineCollection({
    ...base,
    hooks: {
      beforeWrite({ data, current }) {
        const name: string | undefined = data.name ?? current?.name
        // @ts-expect-error: a field the schemas do not have
        data.colour = name
        // @ts-expect-error: the item's price is a number, as a client reads it
        data.price = '12.50'
      },
      beforeDelete({ current }) {
        // @ts-expect-error: the item has no such field
        void current.colour
      },
    },
  })
  const report = (changed: TransitionContext['changed'], row: RowOf<'product'>) => {
    changed(typed, row)
    // @ts-expect-error: a row of another model
    changed(typed, { id: 'x' } as RowOf<'review'>)
  }
  t.equal(typed.model, 'product', 'the collection knows its model')
  t.type(report, 'function')
})

t.test('only a create body has defaults: a patch leaves an absent field as it is, a PUT keeps a state field', async (t) => {
  const defaults = (schema: object) =>
    Object.fromEntries(Object.entries((schema as { properties: Record<string, { default?: unknown }> }).properties).flatMap(([name, p]) => ('default' in p ? [[name, p.default]] : [])))
  t.same(defaults(createBodySchema(ProductCreate)), { stock: 0, status: 'draft', tags: [] })
  t.same(defaults(replaceBodySchema(ProductCreate, Product, ['id', 'review_count', 'rating_average', 'created_at', 'updated_at'])), {})
  t.same(defaults(patchBodySchema(ProductCreate)), {})
  t.same(defaults(ProductCreate), { stock: 0, status: 'draft', tags: [] }, 'the create schema is left as it was')
})

t.test('cursor paging refuses to sort by a field that may be null', async (t) => {
  const { parseListQuery } = await import('../../src/resources/list-query/parse.js')
  const nullable = defineCollection({
    ...gadgets.options,
    name: 'nullable',
    sortable: ['description'],
  })
  t.throws(() => parseListQuery({ sort: 'description', cursor: '' }, nullable.listSpec), {
    code: 'INVALID_PARAMETER',
    details: [{ field: 'cursor', reason: 'cannot page by cursor when sorting by description, which may be null' }],
  })
  t.equal(parseListQuery({ sort: 'description' }, nullable.listSpec).sort[0]!.field.name, 'description', 'page numbers still sort by it')
})

t.test('a write-only field is stored (hashed) only once the item is found and the caller may change it', (t) =>
  eachKind(t, async (t, kind) => {
    let stored = 0
    const base = usersCollection('open').options
    const users = defineCollection({
      ...base,
      writeOnly: { password: { column: 'password_hash', store: async (value) => (stored++, `hashed ${String(value)}`) } },
    })
    const api = await startApi(t, kind, undefined, { collections: [users] })
    const [alice, bob] = [await api.newUser(), await api.newUser()]
    const password = { password: 'a long new password' }
    t.equal((await alice.api.patch(`${V1}/users/${bob.id}`, password)).status, 403)
    t.equal((await alice.api.patch(`${V1}/users/01890000-0000-7000-8000-000000000000`, password)).status, 404)
    t.equal(stored, 0, 'nothing hashed for a 403 or a 404')
    t.equal((await alice.api.patch(`${V1}/users/${alice.id}`, password)).status, 200)
    t.equal(stored, 1)
  }),
)

t.test('a relation through a column some callers may not read is refused at startup', async (t) => {
  const base = { model: 'product' as const, schemas: { create: GadgetCreate, item: Gadget, summary: Type.Pick(Gadget, ['id']) }, access: gadgets.options.access }
  const target = defineCollection({ ...base, name: 'targets' })
  const pointing = defineCollection({ ...base, name: 'pointing', references: { target: { field: 'sku', collection: 'targets' } }, fieldAccess: { sku: { read: 'admin' } } })
  t.throws(() => relationsOf([target, pointing]), /"sku" has a read rule, so relation "target" would reveal it/)
  const open = defineCollection({ ...base, name: 'open', references: { target: { field: 'sku', collection: 'targets' } } })
  t.equal(relationsOf([target, open]).get(open)!.get('target')!.target, target)
})
