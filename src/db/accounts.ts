/** Users and their sessions as the authentication layer needs them: a few statements, by hand. */
import { createHash } from 'node:crypto'
import { uuidv7 } from '../ids.js'
import { ApiError } from '../errors.js'
import type { Database, Statements } from './client.js'
import { eventsOf } from './events.js'

export interface Account {
  id: string
  email: string
  name: string
  roles: string[]
}

export interface StoredToken {
  id: string
  name: string
  scopes: string[]
  expiresAt: Date
  lastUsedAt: Date | null
  createdAt: Date
}

const TOKEN = 't.id, t.name, t.scopes, t.expires_at, t.last_used_at, t.created_at'
const token = (row: Record<string, unknown>): StoredToken => ({
  id: row.id as string,
  name: row.name as string,
  scopes: row.scopes as string[],
  expiresAt: row.expires_at as Date,
  lastUsedAt: row.last_used_at as Date | null,
  createdAt: row.created_at as Date,
})

export interface StoredSession {
  id: string
  createdAt: Date
  lastSeenAt: Date
  expiresAt: Date
  user: Account
}

const ACCOUNT = 'u.id, u.email, u.name, u.roles'

/** A user's row as the users collection's events keep it: every column but the secret and the provider's subject. */
const USER_ROW = 'id, email, name, roles, created_at, updated_at'
/** No request's time limit applies here: a statement's own (STATEMENT_TIMEOUT_MS) does. */
const UNLIMITED = String(2 ** 31)

/**
 * A change to users made here rather than by the users collection's handlers, with its event in
 * the same statement, as the collection's own writes are (src/resources/store.ts): the change
 * feed, webhooks and the revalidation of users lists (src/events/versions.ts) learn of it. The
 * change's parameters come first; then the actor (none: the service itself) and the time left.
 */
const announced = (change: string, type: 'users.created' | 'users.updated', parameters: number) =>
  `WITH w AS (${change} RETURNING ${USER_ROW}), e AS (${eventsOf('w', { type, collection: 'users' }, parameters + 1, parameters + 2)}) SELECT ${ACCOUNT.replace(/u\./g, '')} FROM w`
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
      const rows = await db.query(
        announced('INSERT INTO users (id, email, name, password_hash, roles, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, now(), now())', 'users.created', 5),
        [uuidv7(), user.email, user.name, user.passwordHash, user.roles, null, UNLIMITED],
        'account_create',
      )
      return account(rows[0]!)
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

    /** An admin for ADMIN_EMAIL and ADMIN_PASSWORD, unless a user has that email already; whether this call created it. */
    async ensureAdmin(email: string, passwordHash: () => Promise<string>): Promise<boolean> {
      if (await this.byEmail(email)) return false
      return this.create({ email, name: 'Administrator', passwordHash: await passwordHash(), roles: ['admin'] }).then(
        () => true,
        (error: unknown) => {
          // Another instance starting at the same time created it first.
          if (!(error instanceof ApiError && error.code === 'CONFLICT')) throw error
          return false
        },
      )
    },

    /** The user an identity provider's subject names. */
    async byExternalSubject(subject: string): Promise<Account | undefined> {
      const rows = await db.query(`SELECT ${ACCOUNT} FROM users u WHERE u.external_subject = $1`, [subject], 'account_by_subject')
      return rows[0] && account(rows[0])
    },

    /**
     * The user for an identity provider's subject, created at its first request. The provider's
     * email is taken only while no other account has it: accounts are never merged by email,
     * or whoever controls a provider account with that address would take over the local one.
     */
    async ensureExternal(user: { subject: string; email: string | undefined; name: string; roles: string[] }): Promise<Account> {
      const existing = await this.byExternalSubject(user.subject)
      if (existing) return existing
      const now = new Date()
      const placeholder = `${createHash('sha256').update(user.subject).digest('hex').slice(0, 32)}@external.invalid`
      for (const email of user.email ? [user.email, placeholder] : [placeholder]) {
        const rows = await db.query(
          announced('INSERT INTO users (id, email, name, roles, external_subject, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT DO NOTHING', 'users.created', 6),
          [uuidv7(), email, user.name, user.roles, user.subject, now, null, UNLIMITED],
          'account_create_external',
        )
        if (rows[0]) return account(rows[0])
        // Another request created this subject's user first, or the email is someone else's.
        const raced = await this.byExternalSubject(user.subject)
        if (raced) return raced
      }
      throw new ApiError('CONFLICT', 'An account for this identity could not be created.')
    },

    /** Keeps the roles an identity provider asserts on its user's row (for the tokens they issue). */
    async setRoles(id: string, roles: string[]): Promise<void> {
      await db.query(
        announced("UPDATE users SET roles = $2, updated_at = greatest(now(), updated_at + interval '1 millisecond') WHERE id = $1", 'users.updated', 2),
        [id, roles, null, UNLIMITED],
        'account_set_roles',
      )
    },

    async deleteSession(id: string): Promise<void> {
      await db.query('DELETE FROM sessions WHERE id = $1', [id], 'session_delete')
    },

    /**
     * A new token; with `limit`, only while the user holds fewer tokens than that (undefined
     * otherwise). The user's row is locked first, so that concurrent issues count one at a time.
     */
    async createToken(userId: string, secretHash: string, fields: { name: string; scopes: string[]; expiresAt: Date }, limit?: number): Promise<StoredToken | undefined> {
      const insert = async (q: Statements) => {
        const now = new Date()
        const rows = await q.query(
          `INSERT INTO tokens AS t (id, secret_hash, user_id, name, scopes, expires_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING ${TOKEN}`,
          [uuidv7(), secretHash, userId, fields.name, fields.scopes, fields.expiresAt, now],
          'token_create',
        )
        return token(rows[0]!)
      }
      if (limit === undefined) return insert(db)
      return db.transaction(async (tx) => {
        await tx.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [userId], 'token_owner_lock')
        const [held] = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM tokens WHERE user_id = $1', [userId], 'tokens_held')
        return held!.n < limit ? insert(tx) : undefined
      })
    },

    /** The token with this secret's hash and its user, whatever its age (the caller decides). */
    async token(secretHash: string): Promise<(StoredToken & { user: Account }) | undefined> {
      const rows = await db.query(
        `SELECT ${TOKEN}, u.id AS user_id, u.email, u.name AS user_name, u.roles FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.secret_hash = $1`,
        [secretHash],
        'token_by_secret',
      )
      const row = rows[0]
      return row && { ...token(row), user: { id: row.user_id as string, email: row.email as string, name: row.user_name as string, roles: row.roles as string[] } }
    },

    /** A user's tokens, newest first. */
    async tokensOf(userId: string): Promise<StoredToken[]> {
      const rows = await db.query(`SELECT ${TOKEN} FROM tokens t WHERE t.user_id = $1 ORDER BY t.id DESC`, [userId], 'tokens_of_user')
      return rows.map(token)
    },

    async touchToken(id: string, at: Date): Promise<void> {
      await db.query('UPDATE tokens SET last_used_at = $2 WHERE id = $1', [id, at], 'token_touch')
    },

    /** Deletes one of the user's tokens; false when the user has no token with that id. */
    async deleteToken(userId: string, id: string): Promise<boolean> {
      return (await db.query('DELETE FROM tokens WHERE id = $1 AND user_id = $2 RETURNING id', [id, userId], 'token_delete')).length === 1
    },
  }
}

export type Accounts = ReturnType<typeof accounts>
