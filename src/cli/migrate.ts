/** `npm run migrate`: applies pending migrations to the configured database and exits. */
import { ConfigError, loadConfig } from '../config.js'
import { openDatabase } from '../db/client.js'
import { migrate } from '../db/migrate.js'

try {
  const config = loadConfig()
  const db = await openDatabase(config.database)
  try {
    const result = await migrate(db)
    for (const name of result.modified) process.stderr.write(`warning: migration ${name} changed after it was applied\n`)
    process.stdout.write(result.applied.length ? `applied: ${result.applied.join(', ')}\n` : 'the database is up to date\n')
  } finally {
    await db.close()
  }
} catch (error) {
  const message = error instanceof ConfigError ? `Invalid configuration: ${error.message}` : `Migration failed: ${error instanceof Error ? error.message : String(error)}`
  process.stderr.write(`${message}\n`)
  process.exitCode = 1
}
