/** Users: accounts, as a collection. The password is write-only; it is stored as its scrypt hash. */
import { Type, type Static } from 'typebox'
import { MIN_PASSWORD_LENGTH } from '../../config.js'
import { ROLES } from '../../auth/roles.js'
import { ServerFields, StringEnum } from '../../schema-types.js'


const email = Type.String({ format: 'email', maxLength: 254, description: 'Unique, compared without case; stored lower-cased.', examples: ['ada@shop.example'] })
const name = Type.String({ minLength: 1, maxLength: 120, examples: ['Ada Lovelace'] })
const password = Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: 1024, description: `Write-only: at least ${MIN_PASSWORD_LENGTH} characters.` })
const roles = (options: Record<string, unknown> = {}) =>
  Type.Array(StringEnum(ROLES), { uniqueItems: true, maxItems: ROLES.length, description: 'Only admins set roles.', ...options })

export const UserCreate = Type.Object(
  { email, name, password, roles: Type.Optional(roles({ default: [] })) },
  { additionalProperties: false },
)

export const User = Type.Object({
  id: ServerFields.id,
  email,
  name,
  roles: roles(),
  created_at: ServerFields.created_at,
  updated_at: ServerFields.updated_at,
})

export const UserSummary = Type.Pick(User, ['id', 'name', 'roles'])

export type User = Static<typeof User>
