// Server-made ids: UUIDv7, unique, and in creation order even within one millisecond (RES-03).
import t from 'tap'
import { isUuid, uuidv7 } from '../src/ids.js'

t.test('ids are UUIDv7 and sort in the order they were made', async (t) => {
  const ids = Array.from({ length: 10_000 }, () => uuidv7())
  t.ok(ids.every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id)), 'version 7, variant 10')
  t.equal(new Set(ids).size, ids.length, 'unique')
  t.same([...ids].sort(), ids, 'sorted as made, though many share a millisecond')
  const ms = parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16)
  t.ok(Math.abs(ms - Date.now()) < 60_000, 'the first 48 bits are the time in milliseconds')
})

t.test('isUuid accepts any well-formed UUID and nothing else', async (t) => {
  t.ok(isUuid('01890000-0000-7000-8000-000000000000'))
  t.ok(isUuid('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'))
  for (const bad of ['', 'nope', '01890000-0000-7000-8000-00000000000', '01890000000070008000000000000000', '01890000-0000-7000-8000-000000000000 ']) {
    t.notOk(isUuid(bad), JSON.stringify(bad))
  }
})
