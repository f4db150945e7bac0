// Password storage (OWASP Password Storage Cheat Sheet): scrypt, a salt per hash, constant-time checks.
import t from 'tap'
import { hashPassword, verifyPassword } from '../../src/auth/passwords.js'
import { newSecret, secretHash } from '../../src/auth/secrets.js'

t.test('a password hashes with its own salt and verifies only itself', async (t) => {
  const [a, b] = await Promise.all([hashPassword('correct horse battery staple'), hashPassword('correct horse battery staple')])
  t.match(a, /^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/, 'scrypt at OWASP\'s parameters, salt and key')
  t.not(a, b, 'the same password, two salts, two hashes')
  t.notMatch(a, /correct horse/)
  t.ok(await verifyPassword('correct horse battery staple', a))
  t.notOk(await verifyPassword('correct horse battery stapl', a))
  t.notOk(await verifyPassword('', a))
  t.ok(await verifyPassword('\u0041\u030A', await hashPassword('\u00C5')), 'Unicode is normalised (NFC) first')
})

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
