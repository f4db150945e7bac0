// The checked-in documents and client types (openapi/) are what the code generates now: a route or
// schema change without `npm run openapi` fails here, as `npm run openapi -- --check` would. The
// types are openapi-typescript's with its default options, as a client generates them.
import { readFile } from 'node:fs/promises'
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript'
import t from 'tap'
import { staleFiles, staleMessage } from '../../scripts/openapi.js'

t.test('openapi/ is up to date with the route schemas', async (t) => {
  const stale = await staleFiles()
  t.same(stale, [], stale.length > 0 ? staleMessage(stale) : 'every generated file is current')
})

t.test('the client types are the same with openapi-typescript\'s defaults and without defaultNonNullable', async (t) => {
  // A `default` a body's property has would be typed as always present with the defaults
  // (src/openapi/body-defaults.ts): the documents keep none there, so a client made either way
  // takes a create without the fields the service fills in.
  for (const version of [1, 2]) {
    const document = JSON.parse(await readFile(new URL(`../../openapi/v${version}.json`, import.meta.url), 'utf8'))
    const checkedIn = await readFile(new URL(`../../openapi/v${version}.d.ts`, import.meta.url), 'utf8')
    t.equal(COMMENT_HEADER + astToString(await openapiTS(document, { defaultNonNullable: false, silent: true })), checkedIn, `v${version}`)
  }
})
