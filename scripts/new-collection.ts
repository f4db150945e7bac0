/**
 * `npm run new:collection -- <name>`: a new collection's schema, plugin, Prisma model and
 * migration, registered and with the Prisma client regenerated, so that adding a collection is
 * this command and then editing the fields (docs/how-to/add-a-collection.md).
 *
 * Names: `gift-cards` or `gift_cards` give the path and folder `gift-cards` (kebab case, as file
 * names are), the table `gift_cards` (snake case, as columns are; events are named after it:
 * `gift_cards.created`), the model `GiftCard` (the OpenAPI components' singular) and the export
 * `giftCards`. A refusal (a bad or taken name) is one line on stderr and exit code 2, and writes
 * nothing: every file is planned and checked before the first is written.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { stripVTControlCharacters } from 'node:util'
import { singularName } from '../src/resources/operations.js'
import { collectionFiles, migrationSql, prismaModel, type Names } from './new-collection.templates.js'

/** This project: where the files go unless `--root` names another copy of it. */
const PROJECT = fileURLToPath(new URL('..', import.meta.url))

/**
 * The longest name: PostgreSQL cuts identifiers at 63 bytes, and the table's longest derived one
 * (`<table>_created_at_id_idx`) adds 18; events keep the table's name in 60 characters.
 */
export const MAX_NAME_LENGTH = 40

/** Lower-case words joined by one kind of separator: `gift-cards`, `gift_cards`, `coupons`. */
const NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$|^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/
const MODEL = /^[A-Z][A-Za-z0-9]*$/

/**
 * Words the export (`giftCards`) or the model may not be: JavaScript's reserved words in a module,
 * Prisma's own names, and what the generated schema file imports.
 */
const RESERVED = new Set(
  ('arguments await break case catch class const continue debugger default delete do else enum eval export extends false finally for ' +
    'function if implements import in instanceof interface let new null package private protected public return static super switch ' +
    'this throw true try typeof var void while with yield Prisma PrismaClient Type Static Nullable ServerFields').split(' '),
)

const USAGE = 'usage: npm run new:collection -- <name> [--model <Model>] [--root <dir>], <name> the plural in lower case (gift-cards or gift_cards)'

/** A name the command will not use, or a call it cannot follow: one line, exit code 2, nothing written. */
export class Refusal extends Error {
  override name = 'Refusal'
}

interface Arguments {
  name: string
  model?: string
  root: string
}

function parseArguments(argv: readonly string[]): Arguments {
  const positional: string[] = []
  const options: Record<string, string> = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--model' || arg === '--root') {
      if (argv[i + 1] === undefined) throw new Refusal(USAGE)
      options[arg.slice(2)] = argv[++i]!
    } else if (arg.startsWith('-')) throw new Refusal(USAGE)
    else positional.push(arg)
  }
  if (positional.length !== 1) throw new Refusal(USAGE)
  return { name: positional[0]!, model: options.model, root: path.resolve(options.root ?? PROJECT) }
}

/** Every name the collection takes, from the one given; refuses a malformed one. */
export function namesOf(name: string, model?: string): Names {
  if (!NAME.test(name)) {
    throw new Refusal(`"${name}" is not a collection name: the plural in lower case, words joined by - or _ (gift-cards or gift_cards)`)
  }
  if (name.length > MAX_NAME_LENGTH) throw new Refusal(`"${name}" is too long: at most ${MAX_NAME_LENGTH} characters, as PostgreSQL names indexes after the table`)
  if (model !== undefined && !MODEL.test(model)) throw new Refusal(`--model "${model}" is not a model name: PascalCase, letters and digits (GiftCard)`)
  const words = name.split(/[-_]/)
  const table = words.join('_')
  const modelName = model ?? singularName(table)
  const names: Names = {
    path: words.join('-'),
    table,
    variable: words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join(''),
    model: modelName,
    delegate: modelName[0]!.toLowerCase() + modelName.slice(1),
  }
  for (const word of [names.variable, names.model]) if (RESERVED.has(word)) throw new Refusal(`"${name}" cannot name a collection: ${word} is a reserved word`)
  return names
}

interface Datamodel {
  models: { name: string; dbName: string | null }[]
  enums: { name: string; dbName: string | null }[]
}

const require = createRequire(import.meta.url)

/** Prisma's first error line: the error is JSON whose message is Prisma's coloured report. */
function prismaError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  let report = text
  try {
    report = (JSON.parse(text) as { message?: string }).message ?? text
  } catch {
    // Not JSON: the text as it is.
  }
  return stripVTControlCharacters(report).split('\n')[0]!.replace(/^error: /, '')
}

/** The schema as Prisma reads it; throws Prisma's first error line when it does not validate. */
function readDatamodel(schema: string): Datamodel {
  const wasm = require('@prisma/prisma-schema-wasm') as { get_dmmf(params: string): string }
  try {
    return JSON.parse(wasm.get_dmmf(JSON.stringify({ prismaSchema: schema }))).datamodel as Datamodel
  } catch (error) {
    throw new Error(prismaError(error), { cause: error })
  }
}

/** Refuses a name that something in the project has already: a folder, a model or enum, a table or type. */
function refuseTaken(root: string, names: Names, datamodel: Datamodel): void {
  const taken = (what: string) => new Refusal(`${names.path} exists already: ${what}`)
  for (const folder of new Set([names.path, names.table])) {
    if (existsSync(path.join(root, 'src/collections', folder))) throw taken(`src/collections/${folder}`)
  }
  const types = [...datamodel.models.map((m) => ({ ...m, kind: 'model' })), ...datamodel.enums.map((e) => ({ ...e, kind: 'enum' }))]
  const model = types.find((t) => t.name === names.model)
  if (model) throw taken(`the ${model.kind} ${model.name} in prisma/schema.prisma (another model name: --model)`)
  // A table is also a type in PostgreSQL: an enum's type name is as taken as a table's.
  const table = types.find((t) => (t.dbName ?? t.name) === names.table)
  if (table) throw taken(`the ${table.kind === 'model' ? 'table' : 'type'} ${names.table} (${table.kind} ${table.name})`)
}

/** A file the command writes: a new one, or a new content for one that exists. */
interface PlannedFile {
  path: string
  content: string
  kind: 'created' | 'changed'
  note?: string
}

/** `src/collections/index.ts` with the collection imported and appended to shopCollections. */
export function registered(source: string, names: Names): string {
  if (new RegExp(`\\b${names.variable}\\b`).test(source)) throw new Refusal(`${names.path} exists already: ${names.variable} in src/collections/index.ts`)
  const lines = source.split('\n')
  const from = `./${names.path}/index.js`
  const importLine = `import { ${names.variable} } from '${from}'`
  const imports = lines.flatMap((line, i) => (/^import .* from '\.\/[^']+'$/.test(line) ? [i] : []))
  const start = lines.findIndex((line) => line.startsWith('export const shopCollections'))
  const end = lines.findIndex((line, i) => i > start && line === ']')
  if (imports.length === 0 || start < 0 || end < 0) {
    throw new Error(`src/collections/index.ts has no shopCollections list ending in a line "]": register ${names.variable} by hand`)
  }
  // Imports stay in the order of their paths, as the file keeps them.
  const before = imports.find((i) => /from '([^']+)'/.exec(lines[i]!)![1]! > from)
  lines.splice(end, 0, `  ${names.variable},`)
  lines.splice(before ?? imports.at(-1)! + 1, 0, importLine)
  return lines.join('\n')
}

/** The migration folder's timestamp: now (UTC), or just after the newest folder when the clock is behind it. */
function migrationStamp(migrations: string, now: Date): string {
  const stamp = (date: Date) => date.toISOString().replace(/\D/g, '').slice(0, 14)
  const newest = readdirSync(migrations).filter((d) => /^\d{14}_/.test(d)).sort().at(-1)?.slice(0, 14)
  if (newest === undefined || stamp(now) > newest) return stamp(now)
  const [, y, mo, d, h, mi, s] = /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)$/.exec(newest)!.map(Number) as number[]
  return stamp(new Date(Date.UTC(y!, mo! - 1, d!, h!, mi!, s! + 1)))
}

/** Every file the collection needs, checked against the project, before anything is written. */
export function planCollection(root: string, names: Names, now = new Date()): PlannedFile[] {
  const read = (file: string) => readFileSync(path.join(root, file), 'utf8')
  const schema = read('prisma/schema.prisma')
  refuseTaken(root, names, readDatamodel(schema))
  const model = prismaModel(names)
  try {
    readDatamodel(`${schema.trimEnd()}\n\n${model}`)
  } catch (error) {
    throw new Refusal(`"${names.path}" cannot name a collection: Prisma refuses the model ${names.model}: ${(error as Error).message}`)
  }
  const migration = `prisma/migrations/${migrationStamp(path.join(root, 'prisma/migrations'), now)}_${names.table}/migration.sql`
  const files: PlannedFile[] = [
    ...collectionFiles(names).map(({ file, content }) => ({ path: `src/collections/${names.path}/${file}`, content, kind: 'created' as const })),
    { path: migration, content: migrationSql(names), kind: 'created' },
    { path: 'prisma/schema.prisma', content: `${schema.trimEnd()}\n\n${model}`, kind: 'changed', note: `model ${names.model}` },
    { path: 'src/collections/index.ts', content: registered(read('src/collections/index.ts'), names), kind: 'changed', note: `${names.variable} registered` },
  ]
  for (const file of files) if (file.kind === 'created' && existsSync(path.join(root, file.path))) throw new Refusal(`${file.path} exists already`)
  return files
}

/** Writes the plan; if one write fails, the files written so far are put back as they were. */
function writePlan(root: string, files: readonly PlannedFile[]): void {
  const undo: (() => void)[] = []
  try {
    for (const file of files) {
      const target = path.join(root, file.path)
      const before = file.kind === 'changed' ? readFileSync(target, 'utf8') : undefined
      const dir = path.dirname(target)
      const newDir = !existsSync(dir)
      mkdirSync(dir, { recursive: true })
      undo.push(() => (before === undefined ? rmSync(newDir ? dir : target, { recursive: true, force: true }) : writeFileSync(target, before)))
      writeFileSync(target, file.content, { flag: file.kind === 'created' ? 'wx' : 'w' })
    }
  } catch (error) {
    for (const step of undo.reverse()) step()
    throw error
  }
}

/** `npm run generate` in `root`: the Prisma client learns the model, so that the plugin's `model` type-checks. */
function generateClient(root: string): { ok: boolean; output: string } {
  const result = spawnSync(process.execPath, [path.join(root, 'scripts/prisma-generate.mjs')], { cwd: root, encoding: 'utf8' })
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}` }
}

function nextSteps(names: Names, files: readonly PlannedFile[]): string[] {
  const [schema, plugin, migration] = files.map((f) => f.path)
  return [
    '',
    'Next:',
    `  1. Edit the fields, alike in the three places that describe them (how: docs/how-to/add-a-collection.md):`,
    `       ${schema}`,
    `       prisma/schema.prisma, model ${names.model}`,
    `       ${migration}`,
    `  2. Who may do what, sorting, filters: ${plugin}`,
    '  3. npm run generate   (again, if you renamed the model)',
    `  4. npm run openapi    (the documents in openapi/ describe /${names.path})`,
    '  5. npm test           (the drift test compares the migration with the model)',
    `  6. npm run dev, then /api/v2/${names.path} (reads need a signed-in caller, writes an admin)`,
  ]
}

export interface Outcome {
  /** 0: written; 1: failed (nothing written, or written without a generated client: see stderr); 2: refused, nothing written. */
  code: 0 | 1 | 2
  stdout: string
  stderr: string
}

/** The command, without touching the process: the test runs it in-process as well as through npm. */
export function newCollection(argv: readonly string[], options: { generate?: boolean; now?: Date } = {}): Outcome {
  let files: PlannedFile[]
  let args: Arguments
  let names: Names
  try {
    args = parseArguments(argv)
    names = namesOf(args.name, args.model)
    files = planCollection(args.root, names, options.now)
    writePlan(args.root, files)
  } catch (error) {
    const refused = error instanceof Refusal
    return { code: refused ? 2 : 1, stdout: '', stderr: `new:collection: ${(error as Error).message}\n` }
  }
  const out = [
    `The collection ${names.path}: /api/v{n}/${names.path}, model ${names.model}, table ${names.table}`,
    ...files.map((f) => `  ${f.kind} ${f.path}${f.note ? ` (${f.note})` : ''}`),
  ]
  if (options.generate !== false) {
    const generated = generateClient(args.root)
    if (!generated.ok) {
      const stderr = `${generated.output}new:collection: the files are written, but the Prisma client was not generated: fix the above, then npm run generate\n`
      return { code: 1, stdout: `${out.join('\n')}\n`, stderr }
    }
    out.push('  generated the Prisma client (npm run generate)')
  }
  return { code: 0, stdout: `${[...out, ...nextSteps(names, files)].join('\n')}\n`, stderr: '' }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outcome = newCollection(process.argv.slice(2))
  process.stdout.write(outcome.stdout)
  process.stderr.write(outcome.stderr)
  process.exitCode = outcome.code
}
