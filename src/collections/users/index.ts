/** The users collection: registration, profiles, and who may see an email or grant a role. */
import type { AccessRule } from '../../auth/access.js'
import { hashPassword } from '../../auth/passwords.js'
import type { Registration } from '../../config.js'
import { defineCollection, type Collection } from '../../resources/collection.js'
import { User, UserCreate, UserSummary } from './schema.js'

const REGISTRATION_RULES: Readonly<Record<Registration, AccessRule>> = { open: 'public', admins: 'admin', closed: 'nobody' }

/** The collection for a REGISTRATION setting: who may `POST /users`. */
export function usersCollection(registration: Registration): Collection {
  return defineCollection({
    name: 'users',
    model: 'user',
    // The default would put "an" before its vowel.
    noun: 'a user',
    schemas: { create: UserCreate, item: User, summary: UserSummary },
    // A user is their own item: "owner" is the user themself.
    owner: 'id',
    sortable: ['name', 'email', 'created_at'],
    filterable: ['name', 'email', 'roles', 'created_at'],
    searchable: ['name', 'email'],
    access: { list: 'admin', read: 'authenticated', create: REGISTRATION_RULES[registration], update: 'owner-or-admin', delete: 'admin' },
    fieldAccess: { email: { read: 'owner-or-admin' }, roles: { write: 'admin' } },
    writeOnly: { password: { column: 'password_hash', store: (value) => hashPassword(value as string) } },
    hooks: {
      beforeWrite({ data }) {
        // One account per address whatever its case: stored lower-cased, as sign-in looks it up.
        if (typeof data.email === 'string') data.email = data.email.toLowerCase()
      },
    },
  })
}
