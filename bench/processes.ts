/** Starting, pinning, timing and measuring the processes of a benchmark run. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { cpus } from 'node:os'
import { createInterface } from 'node:readline'

const HAS_TASKSET = spawnSync('taskset', ['--version']).status === 0
/** The service and the floors run on the first core, the load generator on the last. */
export const SERVER_CORE = '0'
export const LOAD_CORE = String(cpus().length - 1)
export const PINNED = HAS_TASKSET && cpus().length > 1

/** `command args...`, pinned to `core` where taskset exists. */
export function pinned(core: string, command: string, args: string[]): [string, string[]] {
  return PINNED ? ['taskset', ['-c', core, command, ...args]] : [command, args]
}

export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise((resolve) => server.close(resolve))
  return port
}

export interface Started {
  child: ChildProcess
  origin: string
  /** Milliseconds from spawn to the first answered request. */
  startMs: number
  stop(): Promise<void>
}

/** Spawns a server and polls `probe` until it answers 2xx. */
export async function startServer(command: string, args: string[], env: NodeJS.ProcessEnv, port: number, probe: string): Promise<Started> {
  const began = performance.now()
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] })
  const origin = `http://127.0.0.1:${port}`
  let exited = false
  child.once('exit', () => (exited = true))
  for (;;) {
    if (exited) throw new Error(`${args.join(' ')} exited before answering`)
    const ok = await fetch(origin + probe).then((r) => r.ok, () => false)
    if (ok) break
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  const startMs = performance.now() - began
  const stop = async () => {
    if (exited) return
    const done = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await done
  }
  return { child, origin, startMs, stop }
}

/** A floor server that prints `listening <port>` when ready. */
export async function startFloor(args: string[]): Promise<Started> {
  const [command, argv] = pinned(SERVER_CORE, process.execPath, ['--import', 'tsx', ...args])
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] })
  const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve))
  const stop = async () => {
    const done = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await done
  }
  return { child, origin: `http://127.0.0.1:${line.split(' ')[1]}`, startMs: 0, stop }
}

/** The peak resident set size of a live process, in MiB (Linux). */
export function peakRssMiB(pid: number): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Math.round(Number(match[1]) / 1024) : undefined
  } catch {
    return undefined
  }
}

/** Runs bench/load.ts on its own core and returns its JSON line. */
export async function runLoad<T>(config: object): Promise<T> {
  const [command, argv] = pinned(LOAD_CORE, process.execPath, ['--import', 'tsx', 'bench/load.ts', JSON.stringify(config)])
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout!.on('data', (chunk) => (out += chunk))
  const code = await new Promise((resolve) => child.on('exit', resolve))
  if (code !== 0) throw new Error(`load generator failed (${String(code)})`)
  return JSON.parse(out.trim().split('\n').pop()!)
}
