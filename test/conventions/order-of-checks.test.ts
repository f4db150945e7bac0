// The order of checks of a write (DESIGN "Status codes, errors and the order of checks"): item
// access 404 / 403 -> 422 -> 412 / 428 -> 409. Each row breaks two rules and expects the earlier
// one's answer, whichever way the write runs (one statement or its transaction). A hook's refusal
// (an item of a paid order: 409) comes after the preconditions: the client's copy is stale.
import t from 'tap'
import { eachDatabase, V1, type Api } from '../helpers/api.js'
import { productBody } from '../helpers/fixtures.js'

/** An If-Match that names a version no item has: a stale copy. */
const STALE = { 'if-match': '"v1.1"' }
const UNKNOWN = '01890000-0000-7000-8000-000000000000'

interface Row {
  breaks: string
  send(): Promise<{ status: number; body: any }>
  status: number
  code: string
}

t.test('each write that breaks two rules is answered for the earlier one', (t) =>
  eachDatabase(t, async (t, api: Api) => {
    const [alice, bob] = [await api.newUser(), await api.newUser()]
    const product = (await api.admin.post(`${V1}/products`, productBody({ status: 'active', stock: 10 }))).body
    const pending = (await alice.api.post(`${V1}/orders`, {})).body
    const paid = (await alice.api.post(`${V1}/orders`, {})).body
    const item = (await alice.api.post(`${V1}/orders/${paid.id}/items`, { product_id: product.id, quantity: 1 })).body
    const etag = (await alice.api.get(`${V1}/orders/${paid.id}`)).headers.get('etag')!
    t.equal((await alice.api.patch(`${V1}/orders/${paid.id}`, { status: 'paid' }, { 'if-match': etag })).status, 200)
    const order = `${V1}/orders/${pending.id}`
    const paidItem = `${V1}/orders/${paid.id}/items/${item.id}`
    const rows: Row[] = [
      { breaks: 'unknown item (404), invalid body (422)', send: () => alice.api.patch(`${V1}/orders/${UNKNOWN}`, { note: 5 }, STALE), status: 404, code: 'NOT_FOUND' },
      { breaks: "another's item (403), invalid body (422)", send: () => bob.api.patch(order, { note: 5 }, STALE), status: 403, code: 'FORBIDDEN' },
      { breaks: 'invalid body (422), stale If-Match (412)', send: () => alice.api.patch(order, { note: 5 }, STALE), status: 422, code: 'VALIDATION_ERROR' },
      { breaks: 'a field only admins write (403), stale If-Match (412)', send: () => alice.api.patch(`${V1}/users/${alice.id}`, { roles: ['admin'] }, STALE), status: 403, code: 'FORBIDDEN' },
      { breaks: 'a changed identity in a PUT (422), stale If-Match (412)', send: () => alice.api.put(order, { id: UNKNOWN, note: null }, STALE), status: 422, code: 'VALIDATION_ERROR' },
      { breaks: 'stale If-Match (412), a move the machine forbids (409)', send: () => alice.api.patch(order, { status: 'shipped' }, STALE), status: 412, code: 'PRECONDITION_FAILED' },
      { breaks: 'no If-Match where it is required (428), a move the machine forbids (409)', send: () => alice.api.patch(order, { status: 'shipped' }), status: 428, code: 'PRECONDITION_REQUIRED' },
      { breaks: "stale If-Match (412), a hook's refusal: an item of a paid order (409)", send: () => alice.api.patch(paidItem, { quantity: 2 }, STALE), status: 412, code: 'PRECONDITION_FAILED' },
      { breaks: "a delete: stale If-Match (412), a hook's refusal (409)", send: () => alice.api.delete(paidItem, STALE), status: 412, code: 'PRECONDITION_FAILED' },
      { breaks: "a delete: another's item (403), no If-Match where it is required (428)", send: () => bob.api.delete(order), status: 403, code: 'FORBIDDEN' },
    ]
    for (const row of rows) {
      const answer = await row.send()
      t.equal(answer.status, row.status, `${row.breaks}: ${row.status}`)
      t.equal(answer.body?.error?.code, row.code, `${row.breaks}: ${row.code}`)
    }
    // And each rule alone is what it says: the later rule of a row holds when the earlier is kept.
    t.equal((await alice.api.patch(paidItem, { quantity: 2 })).status, 409, "the hook's refusal, with no precondition")
    t.equal((await alice.api.delete(paidItem)).status, 409)
    t.equal((await alice.api.patch(order, { note: 5 }, { 'if-match': (await alice.api.get(order)).headers.get('etag')! })).status, 422)
  }),
)
