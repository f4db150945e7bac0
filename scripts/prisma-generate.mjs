#!/usr/bin/env node
// Generates the Prisma client (src/db/generated) offline.
// The Prisma CLI downloads its schema-engine binary before it does anything, even for `generate`,
// which does not use it. Where that binary cannot be downloaded, pointing PRISMA_SCHEMA_ENGINE_BINARY
// at any executable file skips the download; generation itself runs on WebAssembly.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1' }
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath
const cli = require.resolve('prisma/build/index.js')
const root = new URL('..', import.meta.url)
const result = spawnSync(process.execPath, [cli, 'generate'], { stdio: 'inherit', env, cwd: root })
process.exit(result.status ?? 1)
