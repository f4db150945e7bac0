/** Fresh databases for tests: one PostgreSQL database or one in-memory PGlite per test, dropped afterwards. */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { DatabaseConfig } from '../../src/config.js'

export type DatabaseKind = 'postgres' | 'pglite'

/** The PostgreSQL server tests create their databases on (scripts/test.mjs finds one). */
const serverUrl = process.env.TEST_DATABASE_URL

/**
 * The databases every conventions test runs against. TEST_DATABASES narrows the list
 * (`TEST_DATABASES=pglite`); in CI a missing PostgreSQL is an error, never a silent skip.
 */
export function databaseKinds(): DatabaseKind[] {
  const wanted = (process.env.TEST_DATABASES ?? 'postgres,pglite').split(',').map((s) => s.trim())
  const kinds = wanted.filter((k): k is DatabaseKind => k === 'postgres' || k === 'pglite')
  if (kinds.includes('postgres') && !serverUrl) {
    if (process.env.CI === 'true') throw new Error('CI needs PostgreSQL: set TEST_DATABASE_URL (scripts/test.mjs does)')
    return kinds.filter((k) => k !== 'postgres')
  }
  return kinds
}

export interface TestDatabase {
  config: DatabaseConfig
  /** Drops the database (PostgreSQL); PGlite's memory goes with its process. */
  drop(): Promise<void>
}

function urlWithDatabase(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

async function onServer<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

/** A new, empty database of the given kind. */
export async function createTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === 'pglite') return { config: { kind: 'pglite', dataDir: 'memory://' }, drop: async () => {} }
  const name = `resourceful_test_${randomBytes(6).toString('hex')}`
  await onServer((client) => client.query(`CREATE DATABASE ${name}`))
  return {
    config: { kind: 'postgres', url: urlWithDatabase(serverUrl!, name) },
    drop: () => onServer(async (client) => void (await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  }
}
