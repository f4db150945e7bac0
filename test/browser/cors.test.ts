// CORS in a real browser: headless Chromium loads a page from another origin and calls the API
// from it, as a web shop's front end would (WHATWG Fetch; checklist CORS).
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium, type Browser, type Page } from 'playwright-core'
import t, { type Test } from 'tap'
import { startApi, V1 } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
// Without the background-networking flags Chromium tries to reach Google's services at start.
const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
]

/** A page server: every path answers an empty HTML page, so a script can run at that origin. */
async function pageServer(t: Test): Promise<number> {
  const server: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>shop</title>')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  return (server.address() as AddressInfo).port
}

const available = existsSync(CHROMIUM)
// CI installs Chromium (.ci/run); elsewhere a machine without it skips, saying so.
if (!available && process.env.CI) throw new Error(`Chromium is required in CI and was not found at ${CHROMIUM}`)

t.test('a page on another origin calls the API through CORS in Chromium', { skip: !available && `no Chromium at ${CHROMIUM}` }, async (t) => {
  const pagePort = await pageServer(t)
  // The same page server under two host names: two origins, one allowed.
  const allowedOrigin = `http://127.0.0.1:${pagePort}`
  const otherOrigin = `http://localhost:${pagePort}`
  // A test route that shows which cookie reached the API (sessions come with authentication).
  const api = await startApi(t, databaseKinds()[0]!, (app) => app.get('/api/v1/cookie', async (request) => ({ cookie: request.headers.cookie ?? null })), {
    config: { corsOrigins: [allowedOrigin] },
  })
  // The page writes as an admin, with a bearer token: a preflighted request either way.
  const admin = await api.newUser({ roles: ['admin'] })
  const created = await admin.api.post(`${V1}/products`, productBody({ stock: 1 }))
  const item = `${api.origin}${V1}/products/${created.body.id as string}`

  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  t.teardown(() => browser.close())
  const context = await browser.newContext()
  await context.addCookies([{ name: 'session', value: 'abc', url: api.origin, httpOnly: true, sameSite: 'Lax' }])
  const open = async (origin: string): Promise<Page> => {
    const page = await context.newPage()
    await page.goto(`${origin}/`)
    return page
  }

  const page = await open(allowedOrigin)
  const read = await page.evaluate(async (url) => {
    const response = await fetch(url)
    return { status: response.status, etag: response.headers.get('etag'), link: response.headers.get('link'), total: response.headers.get('x-total-count') }
  }, `${api.origin}${V1}/products?size=1`)
  t.equal(read.status, 200)
  t.match(read.etag, /^"/, 'the script reads ETag')
  t.match(read.link, /rel="first"/, 'and Link')
  t.equal(read.total, '1', 'and X-Total-Count')

  const patch = (etag: string) =>
    page.evaluate(
      async ({ url, etag, token }) => {
        // application/json, Authorization and If-Match make this a preflighted request.
        const headers = { 'content-type': 'application/json', 'if-match': etag, authorization: `Bearer ${token}` }
        const response = await fetch(url, { method: 'PATCH', headers, body: JSON.stringify({ stock: 2 }) })
        return { status: response.status, etag: response.headers.get('etag'), body: (await response.json()) as Record<string, any> }
      },
      { url: item, etag, token: admin.token },
    )
  const etag = (await admin.api.get(`${V1}/products/${created.body.id as string}`)).headers.get('etag')!
  const patched = await patch(etag)
  t.equal(patched.status, 200, 'a preflighted PATCH with If-Match succeeds')
  t.equal(patched.body.stock, 2)
  t.not(patched.etag, etag, 'and its new ETag is readable')
  const stale = await patch(etag)
  t.equal(stale.status, 412, 'a stale If-Match: the script reads the 412')
  t.equal(stale.body.error.code, 'PRECONDITION_FAILED')

  const withCookie = (credentials: 'include' | 'same-origin') =>
    page.evaluate(
      async ({ url, credentials }) => {
        const response = await fetch(url, { credentials })
        return { status: response.status, body: (await response.json()) as { cookie: string | null } }
      },
      { url: `${api.origin}/api/v1/cookie`, credentials },
    )
  const credentialed = await withCookie('include')
  t.equal(credentialed.status, 200, 'a credentialed request is allowed: the origin is echoed, credentials allowed')
  t.equal(credentialed.body.cookie, 'session=abc', 'and the cookie went with it')
  t.equal((await withCookie('same-origin')).body.cookie, null, 'without credentials, no cookie')

  const other = await open(otherOrigin)
  const blocked = await other.evaluate(async (url) => {
    try {
      await fetch(url)
      return 'read'
    } catch (error) {
      return (error as Error).name
    }
  }, item)
  t.equal(blocked, 'TypeError', 'the browser blocks a page from an origin that is not allowed')
})
