// The docs' example runner (test/helpers/doc-examples.ts) fails an example whose curl failed,
// whatever the block prints: brackets without -g (curl exit 3) used to print nothing and pass.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'
import { pageOf, shell } from '../helpers/doc-examples.js'

const cwd = mkdtempSync(path.join(tmpdir(), 'doc-runner-'))
const bash = shell(cwd, {})
t.teardown(() => {
  bash.close()
  rmSync(cwd, { recursive: true, force: true })
})

// /stream: a line every 50 ms, never ending (as an event stream's heartbeats); any other path: `ok`.
const server = createServer((request, response) => {
  response.writeHead(200, { 'content-type': 'text/plain' })
  if (!request.url!.startsWith('/stream')) return void response.end('ok\n')
  let n = 0
  const lines = setInterval(() => response.write(`line ${++n}\n`), 50)
  response.on('close', () => clearInterval(lines))
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
t.teardown(() => {
  server.closeAllConnections()
  server.close()
})
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

t.test('a curl with brackets and no -g is a failed curl, though the block ends well and prints nothing', async (t) => {
  const ran = await bash.run(`curl -s '${origin}/gift-cards?name[contains]=birth'\necho done`)
  t.equal(ran.code, 0, 'the last command ended well')
  t.equal(ran.stdout, 'done\n')
  t.same(ran.failedCurls, [`curl exited 3: curl -s ${origin}/gift-cards?name[contains]=birth`])
})

t.test('each failed curl of a block is named, in a pipeline too', async (t) => {
  const ran = await bash.run(`curl -s http://127.0.0.1:1/nothing | cat\ncurl -s '${origin}/a[1' | cat`)
  t.same(ran.failedCurls.map((line) => line.split(':')[0]), ['curl exited 7', 'curl exited 3'])
})

t.test('a reader that stops early is not a failure (curl exit 23 into a closed pipe)', async (t) => {
  const ran = await bash.run(`curl -sN ${origin}/stream | head -n 2`)
  t.equal(ran.stdout, 'line 1\nline 2\n')
  t.same(ran.failedCurls, [])
})

t.test('a curl that ends well, with -g for the brackets, is no failure', async (t) => {
  const ran = await bash.run(`curl -sg '${origin}/x?name[contains]=birth'`)
  t.equal(ran.stdout, 'ok\n')
  t.same(ran.failedCurls, [])
})

t.test('a curl cut short by its time limit is a failure', async (t) => {
  const ran = await bash.run(`curl -sN --max-time 1 ${origin}/stream > /dev/null`)
  t.same(ran.failedCurls, [`curl exited 28: curl -sN --max-time 1 ${origin}/stream`])
})

t.test('the examples are the sh blocks with a curl or a variable, and what follows them', async (t) => {
  const page = pageOf(['```sh', 'npm start', '```', '', '```sh', "curl -sg 'http://127.0.0.1:3000/api/v2/products?price[gte]=10'", '```', '', '```', '[]', '```', ''].join('\n'))
  t.same(page.examples, [{ line: 6, command: "curl -sg 'http://127.0.0.1:3000/api/v2/products?price[gte]=10'", commandLines: [6, 6], retry: false, expected: '[]', expectedLines: [10, 10] }])
})

t.test('no example can be skipped: README says every curl example runs', async (t) => {
  const page = pageOf(['<!-- examples: skip -->', '```sh', "curl -s 'http://127.0.0.1:3000/api/v2/products'", '```', ''].join('\n'))
  t.equal(page.examples.length, 1)
})

t.test('a page asks for a collection and an identity provider', async (t) => {
  const page = pageOf(['<!-- examples: collection gift-cards -->', '<!-- examples: identity-provider -->', ''].join('\n'))
  t.same([page.collections, page.identityProvider], [['gift-cards'], true])
  t.same([pageOf('').collections, pageOf('').identityProvider], [[], false])
})
