// docs/errors.md and the catalogue in src/errors.ts list the same codes with the same statuses.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { CATALOGUE } from '../src/errors.js'

const doc = readFileSync('docs/errors.md', 'utf8')
const documented = new Map([...doc.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])]))

t.test('every catalogue code is documented with its status', async (t) => {
  for (const [code, entry] of Object.entries(CATALOGUE)) t.equal(documented.get(code), entry.status, code)
})

t.test('every documented code exists in the catalogue', async (t) => {
  t.ok(documented.size > 0, 'the table was found')
  for (const code of documented.keys()) t.ok(code in CATALOGUE, code)
})

t.test('codes are UPPER_SNAKE and statuses are errors', async (t) => {
  for (const [code, entry] of Object.entries(CATALOGUE)) {
    t.match(code, /^[A-Z]+(_[A-Z]+)*$/)
    t.ok(entry.status >= 400 && entry.status <= 599, code)
  }
})
