/** Users and their sessions as the authentication layer needs them: a few statements, by hand. */
import { uuidv7 } from '../resources/ids.js'
import { ApiError } from '../errors.js'
import type { Database } from './client.js'
import { translateDatabaseError } from './prisma-errors.js'

export interface Account {
  id: string
  email: string
  name: string
  roles: string[]
}

export interface StoredSession {
  id: string
  createdAt: Date
  lastSeenAt: Date
  expiresAt: Date
  user: Account
}

const ACCOUNT = 'u.id, u.email, u.name, u.roles'
const account = (row: Record<string, unknown>): Account => ({
  id: row.id as string,
  email: row.email as string,
  name: row.name as string,
  roles: row.roles as string[],
})

export function accounts(db: Database) {
  return {
    /** The account with this (lower-cased) email, with its password hash. */
    async byEmail(email: string): Promise<(Account & { passwordHash: string | null }) | undefined> {
      const rows = await db.query(`SELECT ${ACCOUNT}, u.password_hash FROM users u WHERE u.email = $1`, [email], 'account_by_email')
      return rows[0] && { ...account(rows[0]), passwordHash: rows[0].password_hash as string | null }
    },

    async create(user: { email: string; name: string; passwordHash: string; roles: string[] }): Promise<Account> {
      const now = new Date()
      const row = await db.prisma.user
        .create({ data: { id: uuidv7(), ...user, createdAt: now, updatedAt: now }, select: { id: true, email: true, name: true, roles: true } })
        .catch((error: unknown) => {
          throw translateDatabaseError(error, { fields: ['email', 'external_subject'] }) ?? error
        })
      return row
    },

    async createSession(userId: string, secretHash: string, createdAt: Date, expiresAt: Date): Promise<string> {
      const id = uuidv7()
      await db.query(
        'INSERT INTO sessions (id, secret_hash, user_id, created_at, last_seen_at, expires_at) VALUES ($1, $2, $3, $4, $4, $5)',
        [id, secretHash, userId, createdAt, expiresAt],
        'session_create',
      )
      return id
    },

    /** The session with this secret's hash and its user, whatever its age (the caller decides). */
    async session(secretHash: string): Promise<StoredSession | undefined> {
      const rows = await db.query(
        `SELECT s.id AS session_id, s.created_at AS session_created_at, s.last_seen_at, s.expires_at, ${ACCOUNT} FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.secret_hash = $1`,
        [secretHash],
        'session_by_secret',
      )
      const row = rows[0]
      return row && { id: row.session_id as string, createdAt: row.session_created_at as Date, lastSeenAt: row.last_seen_at as Date, expiresAt: row.expires_at as Date, user: account(row) }
    },

    async touchSession(id: string, at: Date): Promise<void> {
      await db.query('UPDATE sessions SET last_seen_at = $2 WHERE id = $1', [id, at], 'session_touch')
    },

    /** An admin for ADMIN_EMAIL and ADMIN_PASSWORD, unless a user has that email already. */
    async ensureAdmin(email: string, passwordHash: () => Promise<string>): Promise<void> {
      if (await this.byEmail(email)) return
      await this.create({ email, name: 'Administrator', passwordHash: await passwordHash(), roles: ['admin'] }).catch((error: unknown) => {
        // Another instance starting at the same time created it first.
        if (!(error instanceof ApiError && error.code === 'CONFLICT')) throw error
      })
    },

    async deleteSession(id: string): Promise<void> {
      await db.query('DELETE FROM sessions WHERE id = $1', [id], 'session_delete')
    },
  }
}

export type Accounts = ReturnType<typeof accounts>
