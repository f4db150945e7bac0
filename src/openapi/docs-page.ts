/**
 * The docs page, `/docs`: Swagger UI from @fastify/swagger-ui's own bundled files (no CDN, works
 * offline), with a version menu of every version's `/api/v{n}/openapi.json`, newest first, under
 * a Content-Security-Policy that lets the page load nothing but this service's files.
 */
import { createHash } from 'node:crypto'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { versionPrefix, type Versions } from '../http/versioning.js'

/** Where the page is; its files are under `/docs/static/`. */
const DOCS_PATH = '/docs'

/** A CSP source allowing one inline `<style>` by its text (CSP3 §8.3 hash-source). */
const styleHash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`

/**
 * The one inline style Swagger UI 5 writes: the `<style>` of its top bar's SVG logo (replaced by
 * the plugin's logo once rendered). Allowed by hash, not with 'unsafe-inline'; if an upgrade
 * changes it, test/openapi/docs-page.test.ts sees the violation.
 */
const LOGO_STYLE = '.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}'

/**
 * Only this service's own files. `img-src data:`: swagger-ui.css draws its icons as data: SVGs and
 * the plugin's logo is a data: URL. Swagger UI otherwise styles elements through the CSSOM
 * (`element.style`), which CSP does not restrict. The response headers' default
 * `frame-ancestors 'none'` is repeated: this header replaces it.
 */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  `style-src 'self' ${styleHash(LOGO_STYLE)}`,
  "img-src 'self' data:",
  "font-src 'self'",
  // The documents, and Try it out's requests: this service only.
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ')

/**
 * A Swagger UI plugin, as browser code. Swagger UI draws a padlock on every operation with
 * security requirements but `[{}]`, closed when any of them is met, and the empty one (`{}`: no
 * credentials, document.ts's OPTIONAL_AUTH) always is: an operation anyone may call showed a
 * closed padlock and one that needs credentials an open one (until Authorize). Here an operation
 * with the empty requirement shows none; Try it out still sends the credentials given to
 * Authorize, as the document allows.
 */
const OPTIONAL_AUTH_WITHOUT_PADLOCK = `function optionalAuthWithoutPadlock() {
  return {
    wrapComponents: {
      OperationSummary: (Original, system) => (props) => {
        const security = props.operationProps.get('security')
        const optional = security && security.some((requirement) => requirement.isEmpty())
        return system.React.createElement(Original, optional ? { ...props, operationProps: props.operationProps.set('security', security.clear()) } : props)
      },
    },
  }
}`

/**
 * A function @fastify/swagger-ui writes into the page's initializer as `source`: it writes a
 * function as its `toString()`, and a function of this file would carry what the TypeScript
 * compiler adds to it (tsx's `__name`), which the page does not have.
 */
const browserFunction = (source: string) => Object.assign(() => ({}), { toString: () => source })

/** Installs `/docs`; call after the version plugins (it names their documents). */
export async function installDocsPage(app: FastifyInstance, versions: Versions): Promise<void> {
  // Named `v{n}` only: the name is the page's link to a version (`?urls.primaryName=v1`), and a
  // deprecated version's document says so itself.
  const urls = [...versions.all].reverse().map((v) => ({ url: `${versionPrefix(v.version)}/openapi.json`, name: `v${v.version}` }))
  // A scope of its own: @fastify/swagger-ui requires @fastify/swagger in the scope it is registered
  // in and serves that one's `swagger()` at /docs/json and /docs/yaml. The versions' documents
  // live in their own plugins, so this scope's is a static index that names them; the page never
  // loads it (with `urls`, Swagger UI loads only the selected version's document).
  await app.register(async (docs) => {
    await docs.register(swagger, {
      mode: 'static',
      specification: {
        document: {
          openapi: '3.1.0',
          info: {
            title: 'Resourceful shop API',
            version: urls.map((u) => u.name).join(', '),
            description: `One document per API version: ${urls.map((u) => u.url).join(', ')}.`,
          },
          paths: {},
        },
      },
    })
    await docs.register(swaggerUi, {
      routePrefix: DOCS_PATH,
      // `validatorUrl` stays unset: the plugin then turns off the badge that calls validator.swagger.io.
      uiConfig: { urls, plugins: [browserFunction(OPTIONAL_AUTH_WITHOUT_PADLOCK)] },
      theme: { title: 'Resourceful shop API' },
      staticCSP: DOCS_CSP,
    })
  })
}
