/**
 * The pages' examples as tap tests: each page runs on a service with a fresh demo seed (`npm run
 * seed`), once per database. test/docs/ holds the long pages in files of their own (tap runs
 * files side by side) and every other page of README.md and docs/ in one: a new example, or a
 * new page, is tested by being written. `DOCS_UPDATE=1` writes what the run printed into the
 * pages instead (review the diff); `DOCS_PAGES=docs/auth.md,README.md` narrows either.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { shopCollections } from '../../src/collections/index.js'
import { seedShop } from '../../src/demo/shop.js'
import { serveForTest } from './api.js'
import { createTestDatabase, databaseKinds, type DatabaseKind } from './databases.js'
import { DOC_COLLECTIONS } from './doc-collections.js'
import { identityProvider } from './doc-identity-provider.js'
import { restoreSnapshot, takeSnapshot, type Snapshot } from './snapshot.js'
import { asDocShows, carriedOver, compare, pageOf, shell, type Carried, type Example, type Page } from './doc-examples.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
/** Pages with a test file of their own (test/docs/); pages.test.ts runs the rest. */
export const OWN_FILES = ['docs/getting-started.md', 'docs/reference/api.md', 'docs/events.md']
const DOC_ORIGIN = 'http://127.0.0.1:3000'
const update = process.env.DOCS_UPDATE === '1'
/** How long a retried example waits before asking again. */
const RETRY_PAUSE_MS = 200
const RETRY_FOR_MS = 30_000
/**
 * The seed's requests (each hashes a password) on a machine running other test files beside this
 * one have passed the default 10 s; no page shows a time limit.
 */
const SEED_REQUEST_TIMEOUT_MS = 60_000
/** How long one file of pages may run. */
const DOCS_FILE_TIMEOUT_MS = 600_000

function markdownFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name)
    return entry.isDirectory() ? markdownFiles(file) : entry.name.endsWith('.md') ? [file] : []
  })
}

const allPages = () =>
  ['README.md', ...markdownFiles('docs')]
  .map((file) => ({ file, text: readFileSync(path.join(root, file), 'utf8') }))
  .map((page) => ({ ...page, ...pageOf(page.text) }))
  .filter((page) => page.examples.length > 0)
  .filter((page) => !process.env.DOCS_PAGES || process.env.DOCS_PAGES.split(',').includes(page.file))

/** The demo shop as the first page of this process seeded it: its rows, and the tokens the seed printed. */
let seeded: Promise<{ snapshot: Snapshot; tokens: Record<string, string> }> | undefined

/**
 * The service as `npm start` runs it (the page's settings on top), on a fresh seeded database,
 * listening; and the variables the page's shell starts with (the seed's tokens, a provider's JWT).
 */
async function seededService(t: Test, kind: DatabaseKind, page: Page) {
  const provider = page.identityProvider ? await identityProvider(t) : undefined
  const database = await createTestDatabase(kind, { migrated: true })
  const db = await database.open()
  // The seed's rows, put back before the service starts, as if it had seeded them.
  const copied = seeded && (await seeded)
  if (copied) await restoreSnapshot(db, copied.snapshot)
  const env = { LOG_LEVEL: 'silent', MIGRATE_ON_START: 'false', REQUEST_TIMEOUT_MS: String(SEED_REQUEST_TIMEOUT_MS), ...provider?.env, ...page.env }
  const config = { ...loadConfig(env), database: database.config, port: 0 }
  const extra = page.collections.map((name) => {
    const made = DOC_COLLECTIONS[name]
    if (!made) throw new Error(`${name}: no such collection in test/helpers/doc-collections.ts`)
    return made()
  })
  for (const { sql } of extra) await db.withSession((session) => session.exec(sql))
  const collections = extra.length ? [...shopCollections(config.auth.registration), ...extra.map((made) => made.collection)] : undefined
  const app = await buildApp(config, { database: db, ...(collections ? { collections } : {}) })
  seeded ??= seedShop(app, db).then(async ({ tokens }) => ({ tokens, snapshot: await takeSnapshot(db) }))
  const { tokens } = copied || (await seeded)
  // The pages' answers are held to the OpenAPI document too.
  return { origin: await serveForTest(t, app, db, database), variables: { ...tokens, ...provider?.variables } }
}

/** The page with each edit's lines (from 1, inclusive) replaced by its text. */
function edited(text: string, edits: { lines: [number, number]; text: string }[]): string {
  const lines = text.split('\n')
  for (const edit of [...edits].sort((a, b) => b.lines[0] - a.lines[0])) lines.splice(edit.lines[0] - 1, edit.lines[1] - edit.lines[0] + 1, ...edit.text.split('\n'))
  return lines.join('\n')
}

/** Runs the examples of the pages `select` takes. */
export function testPages(select: (file: string) => boolean): void {
  // A long page runs a hundred examples on each database: more than the suite's 120 s per file.
  t.setTimeout(DOCS_FILE_TIMEOUT_MS)
  const pages = allPages().filter((page) => select(page.file))
  if (pages.length === 0) t.pass('no page of this file has examples (or DOCS_PAGES names none)')
  for (const page of pages) testPage(page)
}

/**
 * Runs an example against the service at `origin`. A retried example is a read whose answer
 * waits for background work: it is asked again until it prints what the page shows, for at
 * most RETRY_FOR_MS.
 */
async function runExample(bash: ReturnType<typeof shell>, example: Example, command: string, origin: string) {
  const run = () => bash.run(command.replaceAll(DOC_ORIGIN, origin))
  let ran = await run()
  const until = Date.now() + RETRY_FOR_MS
  while (example.retry && !update && Date.now() < until && compare(example.expected ?? '', ran.stdout.replaceAll(origin, DOC_ORIGIN), new Map()).length > 0) {
    await setTimeout(RETRY_PAUSE_MS)
    ran = await run()
  }
  return ran
}

function testPage(page: Page & { file: string; text: string }): void {
  t.test(page.file, async (t) => {
    for (const kind of update ? databaseKinds().slice(0, 1) : databaseKinds()) {
      await t.test(kind, async (t) => {
        const { origin, variables } = await seededService(t, kind, page)
        const cwd = mkdtempSync(path.join(tmpdir(), 'doc-examples-'))
        const bash = shell(cwd, variables)
        t.teardown(() => {
          bash.close()
          rmSync(cwd, { recursive: true, force: true })
        })
        const carried: Carried = new Map()
        const edits: { lines: [number, number]; text: string }[] = []
        for (const example of page.examples) {
          const command = carriedOver(example.command, carried)
          const ran = await runExample(bash, example, command, origin)
          const printed = ran.stdout.replaceAll(origin, DOC_ORIGIN)
          const at = `${page.file}:${example.line}`
          if (update) edits.push({ lines: example.commandLines, text: command })
          // A curl that failed prints nothing, which a page may show as nothing, or hide behind a later command.
          t.same(ran.failedCurls, [], `${at}: every curl ends well (${ran.stderr.trim()})`)
          if (example.expected === undefined) {
            t.equal(ran.code, 0, `${at} runs (${ran.stderr.trim()})`)
            continue
          }
          const problems = compare(example.expected, printed, carried)
          t.same(problems, [], `${at} prints what the page shows`)
          if (update) edits.push({ lines: example.expectedLines!, text: asDocShows(printed) })
        }
        if (update) writeFileSync(path.join(root, page.file), edited(page.text, edits))
      })
    }
  })
}
