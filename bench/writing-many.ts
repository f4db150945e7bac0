/**
 * Writing many (DESIGN "Writing many"), measured against one item at a time in the same run: the
 * rate of products created by POSTs of 1,000-item arrays against 1,000 single POSTs (10 at a
 * time, as a client with a connection pool sends them), and the time of a batch of 10 creates
 * against one POST, each sent alone.
 */
import { BENCH_ADMIN_TOKEN } from './scenarios.js'

export interface WritingMany {
  /** Products a second: 1,000 single POSTs, 10 at a time. */
  singlesPerSecond: number
  /** Products a second: POSTs of 1,000-item arrays, one after the other (the median run). */
  arrayPerSecond: number
  /** One POST alone, and one batch of 10 creates alone: median ms. */
  postMs: number
  batchMs: number
}

const headers = { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'content-type': 'application/json' }
const product = (sku: string) => ({ name: `Many ${sku}`, sku, price: 4.5, stock: 3, tags: ['bench'] })

async function post(origin: string, path: string, body: unknown, status: number): Promise<void> {
  const response = await fetch(origin + path, { method: 'POST', headers, body: JSON.stringify(body) })
  const text = await response.text()
  if (response.status !== status) throw new Error(`POST ${path}: ${response.status} ${text.slice(0, 300)}`)
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/** `runs` of each; `run` makes the skus unique to this bench run. */
export async function measureWritingMany(origin: string, run: string, runs: number): Promise<WritingMany> {
  const singles = 1_000
  let next = 0
  const began = performance.now()
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < singles) await post(origin, '/api/v1/products', product(`M${run}-S${(next += 1)}`), 201)
    }),
  )
  const singlesPerSecond = singles / ((performance.now() - began) / 1000)
  const arrays: number[] = []
  for (let r = 0; r < runs; r++) {
    const items = Array.from({ length: 1_000 }, (_, i) => product(`M${run}-A${r}-${i}`))
    const start = performance.now()
    await post(origin, '/api/v1/products', items, 201)
    arrays.push(items.length / ((performance.now() - start) / 1000))
  }
  const posts: number[] = []
  const batches: number[] = []
  for (let r = 0; r < runs * 4; r++) {
    let start = performance.now()
    await post(origin, '/api/v1/products', product(`M${run}-P${r}`), 201)
    posts.push(performance.now() - start)
    const operations = Array.from({ length: 10 }, (_, i) => ({ method: 'POST', path: '/products', body: product(`M${run}-B${r}-${i}`) }))
    start = performance.now()
    await post(origin, '/api/v1/batch', { operations }, 200)
    batches.push(performance.now() - start)
  }
  return { singlesPerSecond, arrayPerSecond: median(arrays), postMs: median(posts), batchMs: median(batches) }
}
