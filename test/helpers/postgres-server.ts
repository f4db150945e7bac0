/** A PostgreSQL server's databases by URL, for the tests and the bench that create their own. */
import pg from 'pg'

/** `url` with its database replaced by `database`. */
export function urlWithDatabase(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/** Runs `fn` on one connection to `url` (a server's maintenance database, or any), closed afterwards. */
export async function onServer<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}
