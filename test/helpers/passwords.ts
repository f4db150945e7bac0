/**
 * The password work factor of the services tests start (PASSWORD_HASH_COST): scrypt at N=2^10
 * takes a millisecond where the default 2^17 takes 0.45 s of CPU, and the suite hashes some 300
 * passwords. Sign-up, sign-in and their rules are the same at any cost; the default's parameters
 * have their own test (test/auth/passwords.test.ts), and so does PASSWORD_HASH_COST (test/config.test.ts).
 */
export const TEST_PASSWORD_COST = 10
