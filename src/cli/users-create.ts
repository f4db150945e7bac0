/**
 * `npm run users:create`: creates a user from answers to prompts. The password is typed at a
 * hidden prompt (or read from standard input when it is not a terminal), never passed as an
 * argument that would land in the shell's history or the process list.
 */
import { createInterface } from 'node:readline'
import { hashPassword, setPasswordCost } from '../auth/passwords.js'
import { ConfigError, loadConfig, MIN_PASSWORD_LENGTH } from '../config.js'
import { accounts } from '../db/accounts.js'
import { openDatabase } from '../db/client.js'
import { operatorMessage } from '../db/database-errors.js'
import { migrate } from '../db/migrate.js'
import { isApiError } from '../errors.js'

/** Answers to prompts, one line each; `hidden` ones are not echoed on a terminal. */
function prompter() {
  const terminal = process.stdin.isTTY === true
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal })
  const lines = rl[Symbol.asyncIterator]()
  let muted = false
  // readline echoes what is typed through this method; a hidden answer echoes nothing.
  const echo = (rl as unknown as { _writeToOutput(s: string): void })._writeToOutput.bind(rl)
  ;(rl as unknown as { _writeToOutput(s: string): void })._writeToOutput = (s) => {
    if (!muted) echo(s)
  }
  return {
    async ask(question: string, hidden = false): Promise<string> {
      process.stderr.write(question)
      muted = hidden && terminal
      const { value, done } = await lines.next()
      muted = false
      if (hidden && terminal) process.stderr.write('\n')
      if (done) throw new Error('no answer (standard input ended)')
      return String(value).trim()
    },
    close: () => rl.close(),
  }
}

/** The new user's email, name, password and whether it is an admin, checked as they are answered. */
async function askForUser(): Promise<{ email: string; name: string; password: string; admin: boolean }> {
  const prompt = prompter()
  try {
    const email = (await prompt.ask('Email: ')).toLowerCase()
    if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new Error('that is not an email address')
    const name = await prompt.ask('Name: ')
    if (name === '' || name.length > 120) throw new Error('the name must have 1 to 120 characters')
    const password = await prompt.ask('Password: ', true)
    if (password.length < MIN_PASSWORD_LENGTH) throw new Error(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`)
    if ((await prompt.ask('Password again: ', true)) !== password) throw new Error('the passwords differ')
    const admin = /^y(es)?$/i.test(await prompt.ask('Admin? (y/N): '))
    return { email, name, password, admin }
  } finally {
    prompt.close()
  }
}

async function main(): Promise<void> {
  const config = loadConfig()
  setPasswordCost(config.auth.passwordHashCost)
  // Before the first question: an embedded database that the running service holds refuses the
  // run before anything is typed (src/db/data-dir-lock.ts).
  const db = await openDatabase(config.database)
  try {
    const { email, name, password, admin } = await askForUser()
    if (config.migrateOnStart) await migrate(db)
    const user = await accounts(db).create({ email, name, passwordHash: await hashPassword(password), roles: admin ? ['admin'] : [] })
    process.stdout.write(`created ${admin ? 'admin' : 'user'} ${user.email} (${user.id})\n`)
  } finally {
    await db.close()
  }
}

main().catch((error: unknown) => {
  const message =
    error instanceof ConfigError
      ? `Invalid configuration: ${error.message}`
      : isApiError(error) && error.code === 'CONFLICT'
        ? 'A user with that email exists already.'
        : `Could not create the user: ${operatorMessage(error)}`
  process.stderr.write(`${message}\n`)
  process.exitCode = 1
})
