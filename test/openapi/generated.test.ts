// The checked-in documents and client types (openapi/) are what the code generates now: a route or
// schema change without `npm run openapi` fails here, as `npm run openapi -- --check` would.
import t from 'tap'
import { staleFiles, staleMessage } from '../../scripts/openapi.js'

t.test('openapi/ is up to date with the route schemas', async (t) => {
  const stale = await staleFiles()
  t.same(stale, [], stale.length > 0 ? staleMessage(stale) : 'every generated file is current')
})
