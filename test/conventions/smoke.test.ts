import t from 'tap'
import { eachDatabase, V1 } from '../helpers/api.js'

t.test('smoke', (t) =>
  eachDatabase(t, async (t, api) => {
    const res = await api.get(`${V1}/products`)
    t.equal(res.status, 200)
    t.same(res.body, [])
  }),
)
