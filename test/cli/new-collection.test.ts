// `npm run new:collection`: one command writes a collection that type-checks, lints, migrates to
// exactly its model and serves every convention; a bad or taken name is refused and changes nothing.
// All of it happens in one temporary copy of the project, shared by the file's tests.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import t, { type Test } from 'tap'
import { newCollection } from '../../scripts/new-collection.js'
import type * as ApiHelpers from '../helpers/api.js'
import { databaseKinds, type DatabaseKind } from '../helpers/databases.js'

/** The project as the work tree has it (tracked and new files, not ignored ones), with this one's node_modules. */
function copyProject(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'resourceful-new-collection-'))
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8' })
  for (const file of files.split('\0')) {
    // A tracked file deleted in the work tree is not part of it.
    if (!file || !existsSync(file)) continue
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    copyFileSync(file, path.join(root, file))
  }
  symlinkSync(path.resolve('node_modules'), path.join(root, 'node_modules'))
  return root
}

/** Every file under `root` but node_modules, with a hash of its content: what "changes nothing" compares. */
function fingerprint(root: string, dir = ''): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name)
    if (entry.name === 'node_modules') return []
    if (entry.isDirectory()) return fingerprint(root, file)
    return [`${file} ${createHash('sha256').update(readFileSync(path.join(root, file))).digest('hex')}`]
  })
}

/** The commands still running: a test that ends early (a timeout) ends them too. */
const running = new Set<ChildProcess>()

/** A command in the copy, in a clean environment (no tap loader or coverage); its exit code and output. */
function runIn(root: string, command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const passed = ['PATH', 'HOME', 'TEST_DATABASE_URL', 'TEST_DATABASES', 'CI'].filter((name) => process.env[name] !== undefined)
  const env = { ...Object.fromEntries(passed.map((name) => [name, process.env[name]])), _TAPJS_PROCESSINFO_COVERAGE_: '0' }
  const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  running.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  return new Promise((resolve) =>
    child.on('close', (code) => {
      running.delete(child)
      resolve({ code, stdout, stderr })
    }),
  )
}

const root = copyProject()
const cleanUp = () => {
  for (const child of running) child.kill()
  rmSync(root, { recursive: true, force: true })
}
t.teardown(cleanUp)
// It type-checks, lints and migrates a copy of the project, and starts it on both databases.
t.setTimeout(300_000)
// tap ends a file past its time limit without its teardowns.
process.once('exit', cleanUp)
const node = (script: string, ...args: string[]) => runIn(root, process.execPath, [path.join(root, script), ...args])
/** The command in-process, as `npm run new:collection -- <args>` in the copy would run it. */
const refused = (t: Test, args: string[], message: RegExp) => {
  const outcome = newCollection([...args, '--root', root], { generate: false })
  t.equal(outcome.code, 2, `${args.join(' ')}: exit code 2`)
  t.match(outcome.stderr, message)
  t.match(outcome.stderr, /^new:collection: [^\n]+\n$/, 'one line')
  t.equal(outcome.stdout, '')
}

t.test('a malformed name is refused with one line and exit code 2, and nothing changes', async (t) => {
  const before = fingerprint(root)
  const cases: [string[], RegExp][] = [
    [[], /usage: npm run new:collection -- <name>/],
    [['gift-cards', 'vouchers'], /usage/],
    [['gift-cards', '--colour', 'red'], /usage/],
    [['gift-cards', '--model'], /usage/],
    [['GiftCards'], /"GiftCards" is not a collection name/],
    [['gift cards'], /is not a collection name/],
    [['gift-card_codes'], /is not a collection name/],
    [['gift--cards'], /is not a collection name/],
    [['2cards'], /is not a collection name/],
    [['cards-'], /is not a collection name/],
    [['c'.repeat(41)], /is too long: at most 40 characters/],
    [['gift-cards', '--model', 'giftCard'], /--model "giftCard" is not a model name/],
    [['arguments'], /arguments is a reserved word/],
    [['prisma-clients'], /PrismaClient is a reserved word/],
    [['types'], /Type is a reserved word/],
  ]
  for (const [args, message] of cases) refused(t, args, message)
  t.same(fingerprint(root), before, 'no file was written or changed')

  const viaNpm = await runIn(root, 'npm', ['run', '--silent', 'new:collection', '--', 'Gift-Cards'])
  t.equal(viaNpm.code, 2, 'through npm: exit code 2')
  t.equal(viaNpm.stderr, 'new:collection: "Gift-Cards" is not a collection name: the plural in lower case, words joined by - or _ (gift-cards or gift_cards)\n')
  t.same(fingerprint(root), before, 'no file was written or changed')
})

t.test('a name the project has is refused, and nothing changes', async (t) => {
  const before = fingerprint(root)
  const cases: [string[], RegExp][] = [
    [['products'], /^new:collection: products exists already: src\/collections\/products\n$/],
    [['order_items'], /order-items exists already: src\/collections\/order-items/],
    [['sessions'], /sessions exists already: the model Session in prisma\/schema\.prisma/],
    [['sessions', '--model', 'Visit'], /sessions exists already: the table sessions \(model Session\)/],
    [['product_status'], /the type product_status \(enum ProductStatus\)/],
    [['catalogue-items', '--model', 'Product'], /the model Product in prisma\/schema\.prisma/],
    [['order-states', '--model', 'OrderStatus'], /the enum OrderStatus in prisma\/schema\.prisma/],
    [['api-versions'], /api-versions exists already: apiVersions in src\/collections\/index\.ts/],
  ]
  for (const [args, message] of cases) refused(t, args, message)
  t.same(fingerprint(root), before, 'no file was written or changed')
})

t.test('npm run new:collection -- gift-cards writes a collection the service serves', async (t) => {
  const migrations = () => readdirSync(path.join(root, 'prisma/migrations')).filter((d) => /^\d{14}_/.test(d)).sort()
  const earlier = migrations()
  const result = await runIn(root, 'npm', ['run', '--silent', 'new:collection', '--', 'gift-cards'])
  t.equal(result.code, 0, result.stderr)
  t.equal(result.stderr, '')
  const migration = migrations().at(-1)!
  t.match(migration, /^\d{14}_gift_cards$/, 'the migration sorts after every other')
  t.same(migrations().slice(0, -1), earlier)
  t.match(result.stdout, [
    'The collection gift-cards: /api/v{n}/gift-cards, model GiftCard, table gift_cards',
    '  created src/collections/gift-cards/schema.ts',
    '  created src/collections/gift-cards/index.ts',
    `  created prisma/migrations/${migration}/migration.sql`,
    '  changed prisma/schema.prisma (model GiftCard)',
    '  changed src/collections/index.ts (giftCards registered)',
    '  generated the Prisma client (npm run generate)',
    '',
    'Next:',
  ].join('\n'))
  t.ok(existsSync(path.join(root, 'src/db/generated/models/GiftCard.ts')), 'the Prisma client has the model')
  // The checks in their own processes run side by side, and beside the HTTP tests.
  const typecheck = node('node_modules/typescript/bin/tsc', '--noEmit', '-p', 'tsconfig.build.json')
  const lint = node('node_modules/eslint/bin/eslint.js', 'src/collections/gift-cards', 'src/collections/index.ts')
  const drift = runIn(root, process.execPath, ['--import', 'tsx', 'test/db/migrations-drift.test.ts'])

  for (const kind of databaseKinds()) t.test(`${kind}: the collection answers with every convention`, (t) => conventions(t, kind))

  t.test('it type-checks', async (t) => {
    const checked = await typecheck
    t.equal(checked.code, 0, checked.stdout + checked.stderr)
  })

  t.test('its files lint clean', async (t) => {
    const linted = await lint
    t.equal(linted.code, 0, linted.stdout + linted.stderr)
  })

  t.test('the migrations drift test passes, unchanged, on the new model', async (t) => {
    const drifted = await drift
    t.equal(drifted.code, 0, drifted.stdout + drifted.stderr)
    t.match(drifted.stdout, /^ok \d+ - /m, 'the drift test ran')
    t.notMatch(drifted.stdout, /^not ok/m)
  })

  t.test('the same name again is refused, and nothing changes', async (t) => {
    const before = fingerprint(root)
    refused(t, ['gift_cards'], /gift-cards exists already: src\/collections\/gift-cards/)
    t.same(fingerprint(root), before, 'no file was written or changed')
  })
})

/** Over HTTP, with the copy's own test helpers: its app, its migrations, its OpenAPI document checking every answer. */
async function conventions(t: Test, kind: DatabaseKind): Promise<void> {
  const { startApi, V1 } = (await import(pathToFileURL(path.join(root, 'test/helpers/api.ts')).href)) as typeof ApiHelpers
  const api = await startApi(t, kind)
  const { api: user } = await api.newUser()
  const list = `${V1}/gift-cards`

  t.equal((await api.anonymous.get(list)).status, 401, 'reads need a signed-in caller')
  t.equal((await user.post(list, { name: 'Birthday' })).status, 403, 'writes need an admin')
  t.equal((await api.admin.post(list, { name: '' })).status, 422, 'the name has at least one character')

  const created = await api.admin.post(list, { name: 'Birthday', notes: 'For Ada' })
  t.equal(created.status, 201)
  const item = `${list}/${created.body.id}`
  t.equal(created.headers.get('location'), item)
  t.match(created.body, { name: 'Birthday', notes: 'For Ada', active: true }, 'absent fields take their defaults')
  await api.admin.post(list, { name: 'Wedding', active: false })

  const all = await user.get(list)
  t.equal(all.status, 200)
  t.equal(all.headers.get('x-total-count'), '2', 'the kept row count')
  t.same(all.body.map((i: object) => Object.keys(i)), [['id', 'name', 'active'], ['id', 'name', 'active']], 'the summary')
  const found = await user.get(`${list}?name[contains]=IRTH&active=true&sort=name`)
  t.same(found.body.map((i: { name: string }) => i.name), ['Birthday'], 'searched, filtered, sorted')

  const read = await user.get(item)
  t.equal(read.status, 200)
  t.same(read.body, created.body)
  t.ok(read.headers.get('etag'))
  t.equal((await user.get(item, { 'if-none-match': read.headers.get('etag')! })).status, 304)
  t.equal((await user.get(`/api/v2/gift-cards/${created.body.id}`)).body.name, 'Birthday', 'served in every version')

  const patched = await api.admin.patch(item, { notes: null, active: false })
  t.equal(patched.status, 200)
  t.match(patched.body, { name: 'Birthday', notes: null, active: false })
  const replaced = await api.admin.put(item, { name: 'Anniversary' })
  t.equal(replaced.status, 200)
  t.match(replaced.body, { name: 'Anniversary', notes: null, active: true }, 'PUT: what is left out takes its default')

  const removed = await api.admin.delete(item)
  t.equal(removed.status, 204)
  t.equal(removed.text, '')
  t.equal((await user.get(item)).status, 404)
  t.equal((await api.admin.patch(item, { name: 'Gone' })).status, 404)
  t.equal((await api.admin.delete(item)).status, 404)
  t.equal((await user.get(list)).headers.get('x-total-count'), '1')

  const events = await api.db.query<{ type: string }>(`SELECT type FROM events WHERE item_id = $1 ORDER BY id`, [created.body.id])
  t.same(events.map((e) => e.type), ['gift_cards.created', 'gift_cards.updated', 'gift_cards.updated', 'gift_cards.deleted'], 'each change has its event')
}
