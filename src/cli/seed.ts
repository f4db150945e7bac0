/**
 * `npm run seed`: the demo shop the docs use (src/demo/shop.ts), on the embedded database or
 * DATABASE_URL, migrated first. Standard output has only `export NAME=token` lines, so that
 * `eval "$(npm run --silent seed)"` sets the tokens the examples send; the rest goes to standard error.
 */
import { buildApp } from '../app.js'
import { ConfigError, loadConfig } from '../config.js'
import { openDatabase } from '../db/client.js'
import { DEMO_ADMIN, DEMO_CUSTOMERS, seedShop } from '../demo/shop.js'

async function main(): Promise<void> {
  // The customers' passwords are printed in the docs: never on a production database by accident.
  if (process.env.NODE_ENV === 'production' && !process.argv.includes('--force')) {
    throw new Error('NODE_ENV is production: the demo accounts have published passwords. Pass --force to seed anyway.')
  }
  const config = loadConfig()
  const db = await openDatabase(config.database)
  // The seed creates the admin itself (ADMIN_EMAIL's, or the demo's), so that it counts what it made.
  const app = await buildApp({ ...config, auth: { ...config.auth, admin: undefined } }, { database: db, logger: false }).catch(async (error: unknown) => {
    await db.close()
    throw error
  })
  try {
    const admin = config.auth.admin ?? DEMO_ADMIN
    const { tokens, created } = await seedShop(app, db, admin)
    const made = Object.entries(created).map(([what, n]) => `${n} ${n === 1 ? what.slice(0, -1) : what}`).join(', ')
    process.stderr.write(
      `Seeded the demo shop (created ${made}; what existed was kept).\n` +
        `Sign in as ${admin.email}${config.auth.admin ? '' : ` with "${DEMO_ADMIN.password}"`}, or as ${DEMO_CUSTOMERS.map((c) => c.email).join(', ')} with "a long password for <Name>".\n` +
        `Bearer tokens for the examples (read and write, valid 7 days; the next seed revokes them and prints new ones):\n`,
    )
    process.stdout.write(Object.entries(tokens).map(([name, token]) => `export ${name}=${token}\n`).join(''))
  } finally {
    await app.close()
    await db.close()
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof ConfigError ? 'Invalid configuration: ' : 'Could not seed the demo shop: '}${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
})
