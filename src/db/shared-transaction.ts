/**
 * One transaction for everything a piece of work does through the database, however many
 * requests it makes: a batch's operations (src/batch/), each handled by its route as it would be
 * alone, commit together or not at all. Inside `shared(fn)`, every statement made through the
 * database (a query, a replica read, a transaction of its own) runs in the one transaction; a
 * transaction begun inside is part of it, its last statement run at its end rather than with the
 * COMMIT. Outside, the database is as it was. The work is found by its async context
 * (AsyncLocalStorage), which no request can set.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { Database, Statements, Transaction, TransactionOptions } from './client.js'
import { translateDatabaseError } from './database-errors.js'

export interface SharingDatabase extends Database {
  /**
   * Runs `fn` with every statement made through this database in one transaction (begun with
   * `options`): committed when `fn` resolves, rolled back when it throws. Its statements' errors
   * arrive translated, as the requests inside answer them: a lost deadlock is one request's
   * answer, and the whole is not run again.
   */
  shared<T>(fn: () => Promise<T>, options?: TransactionOptions): Promise<T>
}

/** The work's transaction, while it is open: what runs after it (a timer it started) uses the database again. */
interface Shared {
  statements: Statements
  open: boolean
}

const current = new AsyncLocalStorage<Shared>()

/**
 * Runs `fn`, and whatever it starts, outside any shared transaction: for work a request starts
 * that outlives it (the event tail's reads), which must never run inside, or after, a batch's
 * transaction.
 */
export const unshared = <T>(fn: () => T): T => current.exit(fn)

/**
 * The transaction's statements one after another, as one connection runs them (a request may ask
 * for two at once: node-postgres would queue them, a behaviour it deprecates), with their errors
 * translated as every other statement's are (a unique value taken is a 409).
 */
function serialTranslating(tx: Transaction): Statements {
  let previous: Promise<unknown> = Promise.resolve()
  return {
    query<Row>(text: string, params: unknown[], name?: string) {
      const next = previous.then(() => tx.query<Row>(text, params, name))
      previous = next.catch(() => {})
      return next.catch((error: unknown) => {
        throw translateDatabaseError(error) ?? error
      })
    },
  }
}

export function sharingTransactions(db: Database): SharingDatabase {
  const inShared = () => {
    const shared = current.getStore()
    return shared?.open ? shared.statements : undefined
  }
  return {
    get kind() {
      return db.kind
    },
    get capabilities() {
      return db.capabilities
    },
    get replicated() {
      return db.replicated
    },
    pools: () => db.pools(),
    query: (text, params, name) => (inShared() ?? db).query(text, params, name),
    // Reads in the work see its writes: they run in its transaction, never on a replica.
    get replica() {
      return inShared() ?? db.replica
    },
    readsAfter: (lsn) => inShared() ?? db.readsAfter(lsn),
    replayed: () => db.replayed(),
    async transaction(fn, options) {
      const shared = inShared()
      if (!shared) return db.transaction(fn, options)
      let last: [string, readonly unknown[]] | undefined
      const result = await fn({ query: shared.query, beforeCommit: (text, params) => void (last = [text, params]) })
      if (last) await shared.query(last[0], [...last[1]])
      return result
    },
    withSession: (fn) => db.withSession(fn),
    close: () => db.close(),
    shared: (fn, options) =>
      db.transaction(async (tx) => {
        const shared: Shared = { statements: serialTranslating(tx), open: true }
        try {
          return await current.run(shared, fn)
        } finally {
          shared.open = false
        }
      }, options),
  }
}
