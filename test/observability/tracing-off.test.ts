// Without OTEL_EXPORTER_OTLP_ENDPOINT the service loads no OpenTelemetry module at all: a process
// whose module resolution refuses them starts and answers; with the variable, the same refusal
// stops it (so the check works).
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import t, { type Test } from 'tap'
import { childEnv, NODE_ARGS, sourceFile } from '../helpers/service-process.js'

const hex = (bytes: number) => randomBytes(bytes).toString('hex')

/** Runs the service in a process of its own where importing OpenTelemetry fails, and answers one request. */
function runRefusingOpenTelemetry(t: Test, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const refuse = `export async function resolve(specifier, context, next) {
    if (/^@opentelemetry\\/|^@fastify\\/otel/.test(specifier)) throw new Error('OpenTelemetry loaded: ' + specifier)
    return next(specifier, context)
  }`
  const script = path.join(tmpdir(), `refuse-otel-${hex(4)}.mjs`)
  t.teardown(() => rmSync(script, { force: true }))
  writeFileSync(
    script,
    `import { register } from 'node:module'
    register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(refuse)}))
    const { buildApp } = await import(${JSON.stringify(pathToFileURL(sourceFile('src/app.ts')).href)})
    const { loadConfig } = await import(${JSON.stringify(pathToFileURL(sourceFile('src/config.ts')).href)})
    const app = await buildApp(loadConfig({ ...process.env, DATA_DIR: 'memory://', LOG_LEVEL: 'silent' }))
    const answer = await app.inject({ method: 'GET', url: '/metrics' })
    await app.close()
    process.stdout.write(String(answer.statusCode))`,
  )
  const child = spawn(process.execPath, [...NODE_ARGS, script], { env: childEnv({ ADMIN_EMAIL: '', ADMIN_PASSWORD: '', ...env }), stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += String(chunk)))
  child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)))
  t.teardown(() => void child.kill())
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

t.test('without OTEL_EXPORTER_OTLP_ENDPOINT, no OpenTelemetry module is loaded', async (t) => {
  const plain = await runRefusingOpenTelemetry(t, { OTEL_EXPORTER_OTLP_ENDPOINT: '' })
  t.equal(plain.stdout, '200', plain.stderr)
  t.equal(plain.code, 0)
  const traced = await runRefusingOpenTelemetry(t, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })
  t.not(traced.code, 0, 'with it, the service does load them (the refusal works)')
  t.match(traced.stderr, /OpenTelemetry loaded: @/)
})
