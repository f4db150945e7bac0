// `npm run users:create`: a user from prompts, the password never on the command line.
import path from 'node:path'
import t from 'tap'
import { verifyPassword } from '../../src/auth/passwords.js'
import { accounts } from '../../src/db/accounts.js'
import { openDatabase } from '../../src/db/client.js'
import { databaseKinds } from '../helpers/databases.js'
import { TEST_PASSWORD_COST } from '../helpers/passwords.js'
import { cliDatabase, runCli } from '../helpers/service-process.js'

const CLI = path.resolve('src/cli/users-create.ts')

t.test('users:create', async (t) => {
  const kind = databaseKinds()[0]!
  const { env, config } = await cliDatabase(t, kind)
  const run = (answers: string[]) => runCli(CLI, env, answers)

  const created = await run(['Ada@Shop.test', 'Ada', 'a long enough password', 'a long enough password', 'y'])
  t.equal(created.code, 0, created.stderr)
  t.match(created.stdout, /^created admin ada@shop\.test \([0-9a-f-]{36}\)\n$/)
  t.notMatch(created.stderr + created.stdout, /a long enough password/, 'the password is never printed')

  const dupe = await run(['ada@shop.test', 'Ada', 'a long enough password', 'a long enough password', 'n'])
  t.equal(dupe.code, 1)
  t.match(dupe.stderr, 'A user with that email exists already.')
  for (const [answers, message] of [
    [['not-an-email'], 'not an email address'],
    [['b@shop.test', 'B', 'short'], 'at least 12 characters'],
    [['b@shop.test', 'B', 'a long enough password', 'another password!!'], 'the passwords differ'],
    [['b@shop.test'], 'standard input ended'],
  ] as const) {
    const res = await run([...answers])
    t.equal(res.code, 1, message)
    t.match(res.stderr, message)
  }

  const db = await openDatabase(config)
  t.teardown(() => db.close())
  const user = await accounts(db).byEmail('ada@shop.test')
  t.same(user?.roles, ['admin'])
  t.ok(await verifyPassword('a long enough password', user?.passwordHash), 'the password it stored works')
  t.match(user?.passwordHash, new RegExp(`^scrypt\\$${2 ** TEST_PASSWORD_COST}\\$`), 'hashed at PASSWORD_HASH_COST')
  t.equal(await accounts(db).byEmail('b@shop.test'), undefined, 'nothing was created by the refused runs')
})
