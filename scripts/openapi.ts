/**
 * `npm run openapi`: each API version's OpenAPI document, as the service serves it, and its
 * openapi-typescript types, written to openapi/v{n}.json and openapi/v{n}.d.ts. With `--check` it
 * writes nothing and fails naming the files that differ (test/openapi/generated.test.ts runs that).
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { fileURLToPath, pathToFileURL } from 'node:url'
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** Where the generated files live, relative to the repository's root. */
const DIR = 'openapi'
/** What a generated file is named: anything else in DIR is left alone. */
const GENERATED = /^v\d+\.(json|d\.ts)$/
/**
 * openapi-typescript's options: its defaults, as a client's `npx openapi-typescript` has them
 * (the documents are made to type right with them: src/openapi/body-defaults.ts).
 */
const TYPES_OPTIONS = { silent: true }

/** Every generated file, by path from the root, with its content. */
export async function generate(): Promise<Map<string, string>> {
  // An empty environment, not this shell's: every machine generates the default configuration's
  // document. Not started: the documents need the routes, not a migrated database.
  const app = await buildApp(loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent' }), { start: 'later' })
  const files = new Map<string, string>()
  try {
    await app.ready()
    for (const [version, text] of app.openapi) {
      const document = JSON.parse(text())
      files.set(`${DIR}/v${version}.json`, `${JSON.stringify(document, null, 2)}\n`)
      // The CLI's output exactly: `npx openapi-typescript openapi/v2.json`.
      files.set(`${DIR}/v${version}.d.ts`, COMMENT_HEADER + astToString(await openapiTS(document, TYPES_OPTIONS)))
    }
  } finally {
    await app.close()
  }
  return files
}

const read = (path: string) => readFile(`${ROOT}${path}`, 'utf8').catch(() => undefined)

/** Generated files that exist only on disk: a version no longer served. */
async function leftovers(files: Map<string, string>): Promise<string[]> {
  const names = await readdir(`${ROOT}${DIR}`).catch(() => [])
  return names.filter((name) => GENERATED.test(name) && !files.has(`${DIR}/${name}`)).map((name) => `${DIR}/${name}`)
}

/** The files on disk that differ from what the code generates now (missing, changed, or no longer generated). */
export async function staleFiles(files?: Map<string, string>): Promise<string[]> {
  const fresh = files ?? (await generate())
  const changed: string[] = []
  for (const [path, content] of fresh) if ((await read(path)) !== content) changed.push(path)
  return [...changed, ...(await leftovers(fresh))]
}

/** The message for stale files, as `--check` prints it and the test fails with it. */
export const staleMessage = (stale: readonly string[]) => `out of date (run npm run openapi): ${stale.join(', ')}`

async function main(check: boolean): Promise<number> {
  const files = await generate()
  const stale = await staleFiles(files)
  if (check) {
    if (stale.length > 0) console.error(staleMessage(stale))
    return stale.length > 0 ? 1 : 0
  }
  await mkdir(`${ROOT}${DIR}`, { recursive: true })
  for (const path of stale) {
    const content = files.get(path)
    await (content === undefined ? rm(`${ROOT}${path}`) : writeFile(`${ROOT}${path}`, content))
    console.log(`${content === undefined ? 'removed' : 'wrote'} ${path}`)
  }
  if (stale.length === 0) console.log(`${DIR}/ is up to date`)
  return 0
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.includes('--check'))
}
