/**
 * Passwords: scrypt with a per-user salt (OWASP Password Storage), compared in constant time.
 * The stored form names its parameters, so they can be raised later without breaking old hashes.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { DEFAULT_PASSWORD_COST } from '../config.js'

let params = { N: 2 ** DEFAULT_PASSWORD_COST, r: 8, p: 1 }

/**
 * Sets the work factor of the hashes made from now on in this process: N = 2^cost
 * (PASSWORD_HASH_COST, which production holds at the default or above). Process-wide because
 * hashes are made wherever a password is set (sign-up, the CLI, the bootstrap admin). A check
 * uses the parameters its stored hash names, so a hash made at another cost still verifies.
 */
export function setPasswordCost(cost: number): void {
  params = { ...params, N: 2 ** cost }
}
const KEY_LENGTH = 32
/** scrypt needs 128·N·r bytes; Node refuses more than its default maxmem (32 MiB) unless told. */
const maxmem = (p: { N: number; r: number }) => 128 * p.N * p.r + 1024 * 1024

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: maxmem(params) }
  return new Promise((resolve, reject) => scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key))))
}

/** `scrypt$N$r$p$salt$hash`, base64url. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const { N, r, p } = params
  const key = await derive(password, salt, params)
  return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$')
}

/** A hash of nothing anyone knows: checked against when an email is unknown, so both take as long. */
let decoy: Promise<string> | undefined

/**
 * Whether `password` matches `stored`. With no stored hash (an unknown email, a user who signs
 * in through an identity provider) it still does the work of one check and answers false.
 */
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const known = typeof stored === 'string'
  const [scheme, n, r, p, salt, hash] = (known ? stored : await (decoy ??= hashPassword(randomBytes(16).toString('hex')))).split('$')
  const params = { N: Number(n), r: Number(r), p: Number(p) }
  if (scheme !== 'scrypt' || !salt || !hash || !Object.values(params).every(Number.isSafeInteger)) return false
  const expected = Buffer.from(hash, 'base64url')
  const key = await derive(password, Buffer.from(salt, 'base64url'), params)
  return known && key.length === expected.length && timingSafeEqual(key, expected)
}
