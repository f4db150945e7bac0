/**
 * An identity provider for a page's examples, when the page says `<!-- examples: identity-provider -->`:
 * a key set on a loopback port, the service configured to trust it, and a JWT it signed in the
 * shell's `JWT`, so that a page's JWT examples run as every other.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import type { Test } from 'tap'

const ISSUER = 'https://sso.shop.example/realms/shop'
const AUDIENCE = 'shop-api'
/** How long the examples' JWT is valid: longer than any page's run. */
const JWT_LIFETIME = '1h'

/** The provider's settings for the service (`env`), and the variables for the page's shell. */
export async function identityProvider(t: Pick<Test, 'teardown'>): Promise<{ env: Record<string, string>; variables: Record<string, string> }> {
  const { privateKey, publicKey } = await generateKeyPair('RS256')
  const keys = [{ ...(await exportJWK(publicKey)), kid: 'docs-1', alg: 'RS256', use: 'sig' }]
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const jwt = await new SignJWT({ email: 'kim@shop.example', name: 'Kim', roles: [] })
    .setProtectedHeader({ alg: 'RS256', kid: 'docs-1' })
    .setSubject('kim')
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(JWT_LIFETIME)
    .sign(privateKey)
  const jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/certs`
  return { env: { JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE, JWT_JWKS_URL: jwksUrl }, variables: { JWT: jwt } }
}
