#!/usr/bin/env node
// `npm run test:quick`: the inner loop. Runs the test files of what changed since the last commit
// (or since `--since <ref>`), on PostgreSQL alone and without coverage; with nothing to match, the
// conventions core. A changed test file runs itself; a changed source file runs the tests named
// like it (src/http/conditional.ts: test/http/conditional.test.ts) and those that import it.
// `npm test` stays the whole check: both databases, every file, type-check, lint and coverage.
//   npm run test:quick                      what changed since HEAD (staged, unstaged, new)
//   npm run test:quick -- --since main      what changed since main
//   TEST_DATABASES=pglite npm run test:quick
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
/** What runs when no changed file maps to a test: the spec's rules, rule by rule. */
const CORE = ['test/conventions/items.test.ts', 'test/conventions/lists.test.ts', 'test/conventions/errors.test.ts', 'test/http/conditional.test.ts']

const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean)

function changedFiles(since) {
  const tracked = git('diff', '--name-only', since ?? 'HEAD')
  const untracked = git('ls-files', '--others', '--exclude-standard')
  return [...new Set([...tracked, ...untracked])].filter((file) => existsSync(path.join(root, file)))
}

function testFiles(dir = 'test') {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = `${dir}/${entry.name}`
    return entry.isDirectory() ? testFiles(file) : file.endsWith('.test.ts') ? [file] : []
  })
}

/** The repository files a file imports directly (relative specifiers, `.js` read as `.ts`). */
function importsOf(file) {
  const text = readFileSync(path.join(root, file), 'utf8')
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map(([, specifier]) =>
    path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)).replace(/\.js$/, '.ts'),
  )
}

/** The tests a changed file asks for. */
function testsFor(file, tests) {
  if (file.endsWith('.test.ts')) return [file]
  const mirror = file.replace(/^src\//, 'test/').replace(/\.ts$/, '.test.ts')
  return tests.filter((test) => test === mirror || importsOf(test).includes(file))
}

const args = process.argv.slice(2)
const sinceAt = args.indexOf('--since')
const since = sinceAt >= 0 ? args[sinceAt + 1] : undefined
const tests = testFiles()
const changed = changedFiles(since)
const selected = [...new Set(changed.flatMap((file) => testsFor(file, tests)))].sort()
const files = selected.length > 0 ? selected : CORE
console.log(selected.length > 0 ? `> test:quick: ${files.length} test files for ${changed.length} changed files` : `> test:quick: nothing changed maps to a test; the conventions core`)

const env = { ...process.env, TEST_DATABASES: process.env.TEST_DATABASES ?? 'postgres' }
const child = spawn(process.execPath, [path.join(root, 'scripts/test.mjs'), '--disable-coverage', ...files], { cwd: root, env, stdio: 'inherit' })
child.on('close', (code) => process.exit(code ?? 1))
