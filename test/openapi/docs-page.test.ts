// The docs page, /docs: Swagger UI from the service's own files, rendering each version's OpenAPI
// document in headless Chromium with no request beyond the service and nothing its CSP refuses.
import { existsSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'
import t from 'tap'
import { startApi, type Api } from '../helpers/api.js'
import { operations, type OpenApiDocument } from '../helpers/contract.js'
import { databaseKinds } from '../helpers/databases.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
// Without the background-networking flags Chromium tries to reach Google's services at start.
const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
]

const available = existsSync(CHROMIUM)
// CI installs Chromium (.ci/run); elsewhere a machine without it skips, saying so.
if (!available && process.env.CI) throw new Error(`Chromium is required in CI and was not found at ${CHROMIUM}`)

/** Sends each CSP violation to the test (the page's own code; a string, as the tests have no DOM types). */
const REPORT_VIOLATIONS = `document.addEventListener('securitypolicyviolation', (event) =>
  reportViolation(event.violatedDirective + ' refused ' + (event.blockedURI || '(inline)') + ' at ' + event.sourceFile + ':' + event.lineNumber))`

/** What the page did besides rendering: requests off the service, failures, console errors, CSP reports. */
interface Observed {
  outside: string[]
  failed: string[]
  errors: string[]
  violations: string[]
}

/**
 * A page that may only reach `origin`: any other request is aborted and recorded, as are failed
 * requests, answers of 400 and over, console errors, uncaught exceptions and CSP violations.
 */
async function watchedPage(browser: Browser, origin: string): Promise<{ page: Page; observed: Observed }> {
  const observed: Observed = { outside: [], failed: [], errors: [], violations: [] }
  const context = await browser.newContext()
  await context.route('**/*', (route) => {
    const url = route.request().url()
    if (new URL(url).origin === origin) return route.continue()
    observed.outside.push(url)
    return route.abort()
  })
  const page = await context.newPage()
  // A binding and an init script run outside the page's CSP: reporting adds no inline script to refuse.
  await page.exposeFunction('reportViolation', (violation: string) => observed.violations.push(violation))
  await page.addInitScript({ content: REPORT_VIOLATIONS })
  page.on('console', (message) => {
    if (message.type() === 'error') observed.errors.push(message.text())
  })
  page.on('pageerror', (error) => observed.errors.push(error.message))
  page.on('requestfailed', (request) => observed.failed.push(`${request.url()}: ${request.failure()?.errorText}`))
  page.on('response', (response) => {
    if (response.status() >= 400) observed.failed.push(`${response.url()}: ${response.status()}`)
  })
  return { page, observed }
}

/**
 * An operation's path as Swagger UI shows it; by attribute, as a deprecated operation's path has a
 * class of its own (`opblock-summary-path__deprecated`).
 */
const operationPath = (page: Page, path?: string) => page.locator(path === undefined ? '.opblock-summary [data-path]' : `.opblock-summary [data-path="${path}"]`)

/** The paths of the operations Swagger UI shows. */
const shownPaths = async (page: Page) => Promise.all((await operationPath(page).all()).map((path) => path.getAttribute('data-path')))

t.test('/docs', async (t) => {
  // The page serves documents, not data: one database kind is enough.
  const api: Api = await startApi(t, databaseKinds()[0]!)

  t.test('the page: HTML under its own strict CSP, with no inline script', async (t) => {
    const page = await api.anonymous.get('/docs')
    t.equal(page.status, 200)
    t.match(page.headers.get('content-type'), /^text\/html/)
    const csp = page.headers.get('content-security-policy') ?? ''
    const directives = new Map(csp.split('; ').map((directive) => [directive.split(' ')[0], directive.split(' ').slice(1).join(' ')]))
    const expected = { 'default-src': "'none'", 'script-src': "'self'", 'connect-src': "'self'", 'base-uri': "'none'", 'frame-ancestors': "'none'" }
    for (const [name, sources] of Object.entries(expected)) t.equal(directives.get(name), sources, name)
    t.match(directives.get('style-src') ?? '', /^'self'( 'sha256-[A-Za-z0-9+/]+=*')*$/, 'style-src: the service\'s files, and inline styles only by hash')
    t.notMatch(csp, /unsafe-|https?:|\*/, 'nothing unsafe, from another host or from anywhere')
    t.equal(page.headers.get('x-content-type-options'), 'nosniff')
    t.notMatch(page.text, /<script>|<script(?![^>]*\ssrc=)[^>]*>/, 'every script is a file')
    t.notMatch(page.text, /https?:\/\//, 'every file is the service\'s')
  })

  t.test('a slash-ended /docs/ redirects to /docs, the canonical path', async (t) => {
    const response = await fetch(`${api.origin}/docs/`, { redirect: 'manual' })
    t.equal(response.status, 301)
    t.equal(response.headers.get('location'), '/docs')
  })

  t.test('the bundled files: served with validators, revalidated with 304', async (t) => {
    for (const [file, type] of [['swagger-ui-bundle.js', /^application\/javascript/], ['swagger-ui.css', /^text\/css/], ['swagger-initializer.js', /^application\/javascript/]] as const) {
      const response = await api.anonymous.get(`/docs/static/${file}`)
      t.equal(response.status, 200, file)
      t.match(response.headers.get('content-type'), type, `${file}: its type (nosniff refuses a wrong one)`)
    }
    // The plugin sets no long lifetime (the names carry no hash): a browser revalidates, cheaply.
    const bundle = await api.anonymous.get('/docs/static/swagger-ui-bundle.js')
    t.equal(bundle.headers.get('cache-control'), 'public, max-age=0')
    const etag = bundle.headers.get('etag')
    t.ok(etag, 'an ETag')
    // inject, not fetch: fetch adds `Cache-Control: no-cache` to a conditional request, and the
    // server then answers 200 (a reload), as it should.
    const again = await api.app.inject({ url: '/docs/static/swagger-ui-bundle.js', headers: { 'if-none-match': etag! } })
    t.equal(again.statusCode, 304)
    t.equal(again.body, '')
  })

  t.test('/docs/json, which the plugin always serves: an index naming each version\'s document', async (t) => {
    const index = await api.anonymous.get('/docs/json')
    t.equal(index.status, 200)
    t.equal(index.body.openapi, '3.1.0')
    t.same(index.body.paths, {}, 'no copy of a version\'s operations')
    t.match(index.body.info.description, '/api/v2/openapi.json, /api/v1/openapi.json')
  })

  t.test('unknown paths under /docs: 404 with the uniform error body', async (t) => {
    for (const path of ['/docs/nope', '/docs/static/nope.js', '/docs/static/', '/docs/static/../../package.json']) {
      const response = await api.anonymous.get(path)
      t.equal(response.status, 404, path)
      t.match(response.headers.get('content-type'), /^application\/json/, path)
      t.equal(response.body?.error?.code, 'NOT_FOUND', path)
    }
    const post = await api.anonymous.post('/docs', {})
    t.equal(post.status, 405, 'another method on the page: 405')
    t.equal(post.headers.get('allow'), 'GET, HEAD, OPTIONS')
  })

  t.test('in Chromium: every version renders, offline, with no console error or CSP violation', { skip: !available && `no Chromium at ${CHROMIUM}` }, async (t) => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    t.teardown(() => browser.close())
    const { page, observed } = await watchedPage(browser, api.origin)

    try {
      await page.goto(`${api.origin}/docs`)
      await operationPath(page, '/api/v2/products').first().waitFor()
      const info = await page.locator('.information-container').innerText()
      t.match(info, 'Resourceful shop API', 'the title')
      t.match(info, 'OAS 3.1', 'the OpenAPI version stamp')
      t.match(info, 'Version 2 of the API', 'the newest version first')
      t.match(info, 'docs/reference/api.md', 'where the conventions are explained')
      t.ok(await page.getByText('List products').first().isVisible(), 'an operation\'s summary')
      t.ok((await shownPaths(page)).every((path) => path?.startsWith('/api/v2/')), 'only v2\'s operations')
      t.ok(await page.getByText('Create a product, or several', { exact: true }).first().isVisible(), 'a summary in words: "Create a product, or several"')

      // A padlock on what needs credentials, and none where anyone may call (security with `{}`, or none).
      const v2 = (await api.anonymous.get('/api/v2/openapi.json')).body as OpenApiDocument
      for (const { path, method, operation } of operations(v2)) {
        const requirements = operation.security ?? []
        const anyone = requirements.length === 0 || requirements.some((requirement) => Object.keys(requirement).length === 0)
        const padlock = page.locator(`[id="operations-${operation.tags![0]}-${operation.operationId}"] .opblock-summary .authorization__btn`)
        t.equal(await padlock.count(), anyone ? 0 : 1, `${method.toUpperCase()} ${path}: ${anyone ? 'no padlock' : 'a padlock'}`)
      }

      const menu = page.locator('.topbar select')
      t.same(await menu.locator('option').allInnerTexts(), ['v2', 'v1'], 'the versions, newest first')

      await menu.selectOption({ label: 'v1' })
      await operationPath(page, '/api/v1/products').first().waitFor()
      t.match(await page.locator('.information-container').innerText(), 'Version 1 of the API (deprecated', 'v1\'s document')
      t.ok((await shownPaths(page)).every((path) => path?.startsWith('/api/v1/')), 'only v1\'s operations')
      t.match(page.url(), /[?&]urls\.primaryName=v1(&|$)/, 'the address names the version shown')

      // That address, slash-ended: redirected to /docs with its query, and it shows v1.
      await page.goto(`${api.origin}/docs/?urls.primaryName=v1`)
      t.equal(new URL(page.url()).pathname, '/docs')
      await operationPath(page, '/api/v1/products').first().waitFor()
      t.equal(await page.locator('.topbar select').inputValue(), '/api/v1/openapi.json', 'the menu shows v1')
    } finally {
      // Also when a step above failed: what went wrong in the page is the explanation.
      t.same(observed.outside, [], 'no request to another host')
      t.same(observed.violations, [], 'no CSP violation')
      t.same(observed.errors, [], 'no console error')
      t.same(observed.failed, [], 'no failed request')
    }
  })
})
