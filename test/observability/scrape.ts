/** Reads a Prometheus text exposition (format 0.0.4) as a test would look at it: samples by name and labels. */

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

/** Every sample line of `text`; a line that is neither a sample, a comment nor empty fails the test. */
export function samples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = LINE.exec(line)
      if (!match) throw new Error(`not a sample line: ${line}`)
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(LABEL)].map(([, name, value]) => [name!, value!]))
      return { name: match[1]!, labels, value: Number(match[3]) }
    })
}

/** The value of the one sample named `name` with (at least) these labels; undefined when there is none. */
export function valueOf(all: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = all.filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value))
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return found[0]?.value
}
