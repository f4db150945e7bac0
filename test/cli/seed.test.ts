// `npm run seed`: the demo shop, idempotent, its tokens as export lines; never on production by accident.
import path from 'node:path'
import t from 'tap'
import { openDatabase } from '../../src/db/client.js'
import { secretHash } from '../../src/auth/secrets.js'
import { accounts } from '../../src/db/accounts.js'
import { databaseKinds } from '../helpers/databases.js'
import { cliDatabase, runCli } from '../helpers/service-process.js'

const CLI = path.resolve('src/cli/seed.ts')
const EXPORTS = /^(export [A-Z]+_TOKEN=rf_token_[A-Za-z0-9_-]{43}\n){5}$/

const tokensOf = (stdout: string) => Object.fromEntries([...stdout.matchAll(/^export ([A-Z]+_TOKEN)=(\S+)$/gm)].map(([, name, token]) => [name!, token!]))

// Each run starts a process that builds the service and hashes five passwords.
t.setTimeout(300_000)

t.test('refused under NODE_ENV=production, before opening any database', async (t) => {
  const refused = await runCli(CLI, { NODE_ENV: 'production', DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none' })
  t.equal(refused.code, 1)
  t.match(refused.stderr, 'Pass --force to seed anyway')
  t.equal(refused.stdout, '', 'and prints no token')
})

for (const kind of databaseKinds()) {
  t.test(kind, async (t) => {
    const { env, config } = await cliDatabase(t, kind)

    const first = await runCli(CLI, env)
    t.equal(first.code, 0, first.stderr)
    t.match(first.stdout, EXPORTS, 'standard output is only the export lines')
    t.match(first.stderr, 'created 5 users, 6 products, 4 reviews, 2 orders', 'the admin and four customers')
    t.match(first.stderr, 'the next seed revokes them and prints new ones', 'it says that a second run revokes these tokens')
    const again = await runCli(CLI, env)
    t.equal(again.code, 0, again.stderr)
    t.match(again.stderr, 'created 0 users, 0 products, 0 reviews, 0 orders', 'a second run keeps what exists')

    const db = await openDatabase(config)
    t.teardown(() => db.close())
    const store = accounts(db)
    const [before, after] = [tokensOf(first.stdout), tokensOf(again.stdout)]
    t.same(Object.keys(after), ['ADMIN_TOKEN', 'ADA_TOKEN', 'BOB_TOKEN', 'CY_TOKEN', 'DEE_TOKEN'])
    t.equal((await store.token(secretHash(after.ADA_TOKEN!)))?.user.email, 'ada@shop.example', "the new tokens are their users'")
    t.equal((await store.token(secretHash(after.ADMIN_TOKEN!)))?.user.roles.join(), 'admin')
    t.equal(await store.token(secretHash(before.ADA_TOKEN!)), undefined, "each run replaces the seed's earlier tokens")
    const rows = async (table: string) => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`, [], `count_${table}`))[0]!.n
    t.same([await rows('users'), await rows('products'), await rows('reviews'), await rows('orders')], [5, 6, 4, 2], 'nothing was written twice')
    const [mug] = await db.query<{ stock: number }>("SELECT stock FROM products WHERE sku = 'MUG-001'", [], 'mug_stock')
    t.equal(mug!.stock, 24, "Ada's paid order took one mug from stock")
  })
}

t.test("with ADMIN_EMAIL, the seed's admin is that one, and counted as created", async (t) => {
  const { env } = await cliDatabase(t, databaseKinds()[0]!)
  const seeded = await runCli(CLI, { ...env, ADMIN_EMAIL: 'owner@shop.example', ADMIN_PASSWORD: 'the owner password, long enough' })
  t.equal(seeded.code, 0, seeded.stderr)
  t.match(seeded.stderr, 'created 5 users, 6 products, 4 reviews, 2 orders')
  t.match(seeded.stderr, 'Sign in as owner@shop.example, or as ada@shop.example')
})
