/**
 * The docs' examples as tests: a `sh` block with a curl command, and the plain block right after
 * it (what the doc says it prints), run in one bash per page against a service on a fresh, seeded
 * database. The answer must be what the doc prints: the status line, every header it shows (and
 * none it leaves out but Date, Connection and Keep-Alive), and the body, with the values that
 * differ on every run (ids, times, tokens, ETags, cursors, request ids) masked. A value the doc
 * prints and a later command of the page uses (an id, a token, an ETag) is carried over: the
 * command runs with the value this run printed in its place. No example can be skipped: what a
 * page calls beyond the seeded shop, the runner provides (`<!-- examples: collection ... -->`,
 * `<!-- examples: identity-provider -->`); only blocks that set up or run the service (SETUP) are
 * not examples.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'

/** One example: a shell block and what it prints. */
export interface Example {
  /** The block's first line of code, counted from 1. */
  line: number
  command: string
  /** The printed answer the doc shows; undefined when the block has none after it. */
  expected?: string
  /** Where `expected` is in the page (lines, from 1), to rewrite it. */
  expectedLines?: [number, number]
  commandLines: [number, number]
  /** The answer comes from work done after the request (the webhook worker's round): ask until it does. */
  retry: boolean
}

export interface Page {
  /** Configuration the page's service runs with: `<!-- examples: env NAME=value ... -->`. */
  env: Record<string, string>
  /** Collections the service serves besides the shop's: `<!-- examples: collection gift-cards -->` (test/helpers/doc-collections.ts). */
  collections: string[]
  /** `<!-- examples: identity-provider -->`: the service trusts a provider's JWTs, and the shell has one in `JWT` (test/helpers/doc-identity-provider.ts). */
  identityProvider: boolean
  examples: Example[]
}

/** Commands that set up or run the service itself: the runner does that, so such blocks are not examples. */
const SETUP = /(^|[\s;&|(])(npm|npx|node|docker|git|cd|psql|pg_ctlcluster)(\s|$)/m
const RETRY = '<!-- examples: retry -->'

interface Block {
  lang: string
  body: string
  /** Lines of the body, from 1, inclusive. */
  from: number
  to: number
  /** The last non-blank line before the opening fence. */
  before: string
}

function blocksOf(lines: string[]): Block[] {
  const blocks: Block[] = []
  let open: { lang: string; from: number; before: string } | undefined
  let before = ''
  lines.forEach((line, i) => {
    const fence = /^```(\S*)\s*$/.exec(line)
    if (open) {
      if (line === '```') {
        blocks.push({ ...open, body: lines.slice(open.from - 1, i).join('\n'), to: i })
        open = undefined
      }
    } else if (fence) {
      open = { lang: fence[1]!, from: i + 2, before }
    } else if (line.trim() !== '') {
      before = line.trim()
    }
  })
  return blocks
}

/** The examples of a markdown page, in order. */
export function pageOf(markdown: string): Page {
  const lines = markdown.split('\n')
  const env: Record<string, string> = {}
  for (const [, settings] of markdown.matchAll(/<!-- examples: env (.*?) -->/g)) {
    for (const [, name, value] of settings!.matchAll(/([A-Z_]+)=(\S+)/g)) env[name!] = value!
  }
  const collections = [...markdown.matchAll(/<!-- examples: collection (\S+) -->/g)].map(([, name]) => name!)
  const blocks = blocksOf(lines)
  const examples: Example[] = []
  blocks.forEach((block, i) => {
    if (block.lang !== 'sh' || SETUP.test(block.body)) return
    if (!/^\s*(curl |[A-Z_]+=)/m.test(block.body)) return
    const next = blocks[i + 1]
    const adjacent = next && next.lang === '' && lines.slice(block.to + 1, next.from - 2).every((line) => line.trim() === '')
    examples.push({
      line: block.from,
      command: block.body,
      commandLines: [block.from, block.to],
      retry: block.before === RETRY,
      ...(adjacent ? { expected: next.body, expectedLines: [next.from, next.to] as [number, number] } : {}),
    })
  })
  return { env, collections, identityProvider: markdown.includes('<!-- examples: identity-provider -->'), examples }
}

/** The values that differ from run to run, each with its class; a masked line keeps only the class. */
const VARYING: readonly [string, RegExp][] = [
  ['token', /rf_(?:token|session)_[A-Za-z0-9_-]{43}/g],
  ['secret', /whsec_[A-Za-z0-9+/=]{40,}/g],
  ['id', /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g],
  ['time', /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)/g],
  ['date', /(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT/g],
  // In a header, or inside a JSON string (a batch's results): its quotes escaped.
  ['etag', /(?:W\/)?\\?"(?:v\d+\.[A-Za-z0-9._~+-]+|[A-Za-z0-9_-]{27}(?:@\d+\.[A-Za-z0-9_-]{12})?)\\?"/g],
  ['cursor', /(?<=cursor=)[A-Za-z0-9_-]{16,}/g],
]
const COMBINED = new RegExp(VARYING.map(([, re]) => `(${re.source})`).join('|'), 'g')

/** Header values that change with the clock or the body's masked values: only their shape is compared. */
const CLOCKED: Record<string, RegExp> = {
  ratelimit: /\d+/g,
  'retry-after': /\d+/g,
  'content-length': /\d+/g,
  'webhook-timestamp': /\d+/g,
  age: /\d+/g,
}
/** Headers a doc may leave out of a whole answer. */
const LEFT_OUT = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding'])

/** A line with its varying values replaced by their class, and the values in order. */
function mask(line: string): { masked: string; values: [string, string][] } {
  const values: [string, string][] = []
  const masked = line.replace(COMBINED, (value, ...groups: unknown[]) => {
    const kind = VARYING[groups.findIndex((g) => g !== undefined)]![0]
    values.push([kind, value])
    return `<${kind}>`
  })
  return { masked, values }
}

function maskHeader(name: string, value: string) {
  const clocked = CLOCKED[name]
  const { masked, values } = mask(value)
  return { masked: clocked ? masked.replace(clocked, 'N') : masked, values }
}

type Header = { name: string; value: string; line: string }

/** Splits printed output into parts: answers' header sections and the lines between. */
function partsOf(text: string): ({ kind: 'status'; line: string; headers: Header[] } | { kind: 'line'; line: string })[] {
  const lines = text.replace(/\r/g, '').replace(/\n+$/, '').split('\n')
  const parts: ReturnType<typeof partsOf> = []
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (/^HTTP\/[\d.]+ \d{3}/.test(line)) {
      const headers: Header[] = []
      while (i + 1 < lines.length && lines[i + 1] !== '') {
        const header = lines[++i]!
        const colon = header.indexOf(':')
        headers.push({ name: header.slice(0, colon).toLowerCase(), value: header.slice(colon + 1).trim(), line: header })
      }
      if (i + 1 < lines.length) i++ // the blank line after the headers
      parts.push({ kind: 'status', line, headers })
    } else {
      parts.push({ kind: 'line', line })
    }
  }
  return parts
}

/** Values of the doc and of this run, matched by their place: what later commands carry over. */
export type Carried = Map<string, string>

function carry(carried: Carried, expected: [string, string][], actual: [string, string][]): void {
  expected.forEach(([kind, value], i) => {
    const mine = actual[i]
    if (mine && mine[0] === kind && !carried.has(value)) carried.set(value, mine[1])
  })
}

/** What differs between what the doc prints and what the run printed; carries matched values over. */
export function compare(expected: string, actual: string, carried: Carried): string[] {
  const want = partsOf(expected)
  const got = partsOf(actual)
  const problems: string[] = []
  const count = Math.max(want.length, got.length)
  for (let i = 0; i < count; i++) {
    const w = want[i]
    const g = got[i]
    if (!w || !g) {
      problems.push(w ? `missing: ${w.line}` : `not in the doc: ${g!.line}`)
      continue
    }
    const [mw, mg] = [mask(w.line), mask(g.line)]
    carry(carried, mw.values, mg.values)
    if (mw.masked !== mg.masked) problems.push(`the doc prints\n      ${w.line}\n    the run printed\n      ${g.line}`)
    if (w.kind !== 'status' || g.kind !== 'status') continue
    const unused = new Set(g.headers)
    for (const header of w.headers) {
      const want = maskHeader(header.name, header.value)
      const same = g.headers.filter((h) => h.name === header.name)
      const match = same.find((h) => unused.has(h) && maskHeader(h.name, h.value).masked === want.masked)
      if (match) {
        unused.delete(match)
        carry(carried, want.values, maskHeader(match.name, match.value).values)
      } else {
        problems.push(same.length ? `header ${header.line}; the run sent ${same.map((h) => h.line).join(' / ')}` : `header ${header.name} is not sent (the doc shows ${header.line})`)
        if (same[0]) carry(carried, want.values, maskHeader(same[0].name, same[0].value).values)
      }
    }
    for (const header of unused) if (!LEFT_OUT.has(header.name)) problems.push(`header ${header.line} is sent but the doc leaves it out`)
  }
  return problems
}

/** The command with the values the doc printed before replaced by this run's. */
export function carriedOver(command: string, carried: Carried): string {
  return command.replace(COMBINED, (value) => carried.get(value) ?? value)
}

/** What the run printed, as a doc shows it: without the headers docs leave out. */
export function asDocShows(actual: string): string {
  const out: string[] = []
  for (const part of partsOf(actual)) {
    out.push(part.line)
    if (part.kind === 'status') out.push(...part.headers.filter((h) => !LEFT_OUT.has(h.name)).map((h) => h.line), '')
  }
  return out.join('\n')
}

/** How long one example may run. */
const EXAMPLE_LIMIT_MS = 30_000

/** How the shell reports a curl that failed: on standard error, a line of its own. */
const CURL_FAILED = 'doc-examples: curl exited '

/**
 * Every curl of a page runs through this function, so that one that fails (exit 3, "bad range in
 * URL", for brackets without -g; 7, nothing listens) fails its example even where the block prints
 * what the page shows, or where a later command of the block ends well. Exit 23, a write error, is
 * how curl ends when the reader of its pipe has read enough (`| head -n 7`): that one is expected.
 */
const CURL_WRAPPER = `curl() {
  command curl "$@"
  local code=$?
  if [ $code -ne 0 ] && ! { [ $code -eq 23 ] && [ -p /dev/stdout ]; }; then printf '${CURL_FAILED}%d: curl %s\\n' $code "$*" >&2; fi
  return $code
}
`

/** What one block printed, the exit status of its last command, and the curls in it that failed. */
export interface Ran {
  stdout: string
  stderr: string
  code: number
  /** `curl exited 3: curl -s ...`, one per curl of the block that failed. */
  failedCurls: string[]
}

/** One bash for a page's examples: variables and files carry from one block to the next. */
export function shell(cwd: string, env: Record<string, string>) {
  const bash: ChildProcessWithoutNullStreams = spawn('bash', ['--norc', '--noprofile'], { cwd, env: { PATH: process.env.PATH!, HOME: cwd, LANG: 'C.UTF-8', ...env } })
  bash.stdin.write(CURL_WRAPPER)
  let out = ''
  let err = ''
  let waiting: ((value: Ran) => void) | undefined
  // The block's end, on both streams: its status on stdout, and on stderr after its failed curls
  // (the two pipes arrive in either order; each keeps its own).
  const END = '\u001e'
  const settle = () => {
    const end = out.indexOf(END)
    const close = end >= 0 ? out.indexOf(END, end + 1) : -1
    const errEnd = err.indexOf(END)
    if (close < 0 || errEnd < 0 || !waiting) return
    const lines = err.slice(0, errEnd).split('\n')
    const failedCurls = lines.filter((line) => line.startsWith(CURL_FAILED)).map((line) => line.slice('doc-examples: '.length))
    const stderr = lines.filter((line) => !line.startsWith(CURL_FAILED)).join('\n')
    const result = { stdout: out.slice(0, end), stderr, code: Number(out.slice(end + 1, close)), failedCurls }
    out = out.slice(close + 1)
    err = err.slice(errEnd + 1)
    const done = waiting
    waiting = undefined
    done(result)
  }
  bash.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk
    settle()
  })
  bash.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk
    settle()
  })
  return {
    /** Runs a block; its output, the exit status of its last command, and the curls that failed. */
    run(command: string): Promise<Ran> {
      return new Promise((resolve, reject) => {
        // An example that never ends (a stream read to its end) ends the page, not the suite.
        const stuck = setTimeout(() => {
          bash.kill()
          reject(new Error(`the example did not end within ${EXAMPLE_LIMIT_MS / 1000} s:\n${command}`))
        }, EXAMPLE_LIMIT_MS)
        waiting = (result) => {
          clearTimeout(stuck)
          resolve(result)
        }
        bash.stdin.write(`set -o pipefail\n${command}\nexample_status=$?; printf '${END}' >&2; printf '${END}%d${END}' $example_status\n`)
      })
    },
    close: () => void bash.stdin.end(),
  }
}
