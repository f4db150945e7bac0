/** The roles the service gives meaning to: what access rules, JWT claims and the users collection may name. */

export const ADMIN_ROLE = 'admin'
/** Every role the service gives meaning to. */
export const ROLES = [ADMIN_ROLE] as const
