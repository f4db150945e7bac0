// Password storage (OWASP Password Storage Cheat Sheet): scrypt, a salt per hash, constant-time checks.
import t, { type Test } from 'tap'
import { hashPassword, setPasswordCost, verifyPassword } from '../../src/auth/passwords.js'
import { DEFAULT_PASSWORD_COST } from '../../src/config.js'
import { newSecret, secretHash } from '../../src/auth/secrets.js'
import { eachDatabase, V1 } from '../helpers/api.js'
import { TEST_PASSWORD_COST } from '../helpers/passwords.js'

/**
 * The default cost for this test. The cost is the process's (every app built sets its own), and
 * other test files may run in this process before this one (scripts/test.mjs): their apps hash
 * at the tests' cost, as the apps here do again after.
 */
function atDefaultCost(t: Test): void {
  setPasswordCost(DEFAULT_PASSWORD_COST)
  t.teardown(() => setPasswordCost(TEST_PASSWORD_COST))
}

t.test('a password hashes with its own salt and verifies only itself', async (t) => {
  atDefaultCost(t)
  const [a, b] = await Promise.all([hashPassword('correct horse battery staple'), hashPassword('correct horse battery staple')])
  t.match(a, /^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/, 'scrypt at OWASP\'s parameters, salt and key')
  t.not(a, b, 'the same password, two salts, two hashes')
  t.notMatch(a, /correct horse/)
  t.ok(await verifyPassword('correct horse battery staple', a))
  t.notOk(await verifyPassword('correct horse battery stapl', a))
  t.notOk(await verifyPassword('', a))
  t.ok(await verifyPassword('\u0041\u030A', await hashPassword('\u00C5')), 'Unicode is normalised (NFC) first')
})

t.test('the work factor of new hashes can change; a hash made at another still verifies', async (t) => {
  atDefaultCost(t)
  const before = await hashPassword('made at the default cost')
  setPasswordCost(12)
  const after = await hashPassword('made at a lower cost')
  t.match(after, /^scrypt\$4096\$8\$1\$/, 'N=2^12')
  t.ok(await verifyPassword('made at the default cost', before), 'each hash names its own parameters')
  t.ok(await verifyPassword('made at a lower cost', after))
  t.notOk(await verifyPassword('made at the default cost', after))
})

t.test("a service hashes at its configuration's cost (PASSWORD_HASH_COST)", (t) =>
  eachDatabase(t, async (t, api) => {
    const created = await api.anonymous.post(`${V1}/users`, { email: `cost.${api.kind}@shop.test`, name: 'Cost', password: 'a long enough password' })
    t.equal(created.status, 201)
    const [row] = await api.db.query<{ hash: string }>('SELECT password_hash AS hash FROM users WHERE id = $1', [created.body.id])
    t.match(row!.hash, new RegExp(`^scrypt\\$${2 ** TEST_PASSWORD_COST}\\$8\\$1\\$`))
    const signedIn = await api.anonymous.post(`${V1}/sessions`, { email: `cost.${api.kind}@shop.test`, password: 'a long enough password' })
    t.equal(signedIn.status, 201, 'and signs in with it')
  }),
)

t.test('no stored hash, or a broken one, never verifies', async (t) => {
  t.notOk(await verifyPassword('anything', undefined), 'an unknown user (the decoy hash does the same work)')
  t.notOk(await verifyPassword('anything', null), 'a user without a password')
  for (const broken of ['', 'plain', 'bcrypt$1$2$3$4$5', 'scrypt$x$8$1$c2FsdA$a2V5', 'scrypt$16384$8$1$c2FsdA$a2V5']) {
    t.notOk(await verifyPassword('anything', broken), JSON.stringify(broken))
  }
})

t.test('session and token secrets: 256 random bits, stored only as a hash', async (t) => {
  const secret = newSecret('rf_token_')
  t.match(secret, /^rf_token_[A-Za-z0-9_-]{43}$/)
  t.not(newSecret('rf_token_'), secret)
  t.match(secretHash(secret), /^[0-9a-f]{64}$/)
  t.equal(secretHash(secret), secretHash(secret))
})
