// Every installed package runs on the oldest Node.js that package.json's engines and README name,
// so `npm ci` prints no EBADENGINE warning there: cookie@2 and content-disposition@3 asked for
// Node 22 (package.json's overrides pin versions of theirs that support 20; the packages that
// need them call nothing the older ones lack).
import { readFile } from 'node:fs/promises'
import semver from 'semver'
import t from 'tap'

/** Packages that ask for a newer Node.js than the project's, each with why that is harmless. */
const EXCEPTIONS: Readonly<Record<string, string>> = {
  '@prisma/streams-local':
    "Prisma's `prisma dev` (a local Prisma Postgres) runs it on node:sqlite, which Node.js 20 lacks; every version asks for Node.js 22, and nothing here runs `prisma dev`",
}

interface LockEntry {
  version?: string
  engines?: { node?: string } | string[]
}

const read = async (file: string) => readFile(new URL(`../${file}`, import.meta.url), 'utf8')

t.test('every package in the lock file runs on the oldest Node.js the project supports', async (t) => {
  const { engines } = JSON.parse(await read('package.json')) as { engines: { node: string } }
  const oldest = semver.minVersion(engines.node)!
  const { packages } = JSON.parse(await read('package-lock.json')) as { packages: Record<string, LockEntry> }
  const refused = new Map<string, string>()
  for (const [path, entry] of Object.entries(packages)) {
    // Old packages list engines as an array of words, which npm does not check.
    const wanted = Array.isArray(entry.engines) ? undefined : entry.engines?.node
    // As npm checks it (npm-install-checks): prereleases count.
    if (path && wanted && !semver.satisfies(oldest, wanted, { includePrerelease: true })) {
      refused.set(path.replace(/^.*node_modules\//, ''), `${path}@${entry.version} wants node ${wanted}`)
    }
  }
  const unexpected = [...refused].filter(([name]) => !(name in EXCEPTIONS)).map(([, said]) => said)
  t.same(unexpected, [], `Node.js ${oldest.version} runs every package (pin one that does in package.json's overrides)`)
  t.same(Object.keys(EXCEPTIONS).filter((name) => !refused.has(name)), [], 'every exception is still needed')
  t.match(await read('README.md'), `Node.js ${oldest.major}.${oldest.minor} or later`, 'README names the same Node.js')
})
