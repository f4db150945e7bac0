/** The collection factory's data functions: the only place outside db/ that calls Prisma. */
import type { PrismaClient } from '../db/generated/client.js'
import { translateDatabaseError, type ConflictContext } from '../db/prisma-errors.js'
import type { Field } from './fields.js'
import type { ListPlan } from './list-query/plan.js'
import { toPrismaArgs } from './list-query/to-prisma.js'
import type { Row } from './represent.js'

/** A Prisma model delegate's name on the client (`product`, `review`). */
export type ModelName = {
  [K in keyof PrismaClient]: PrismaClient[K] extends { findMany: unknown } ? K : never
}[keyof PrismaClient] & string

type Args = Record<string, unknown>

/** The part of a Prisma delegate the factory uses. */
interface Delegate {
  findMany(args: Args): Promise<Row[]>
  findUnique(args: Args): Promise<Row | null>
  count(args: Args): Promise<number>
  create(args: Args): Promise<Row>
  update(args: Args): Promise<Row>
  delete(args: Args): Promise<Row>
  aggregate(args: Args): Promise<Record<string, Record<string, unknown>>>
}

/** Related data computed in SQL from another model: a count or an average of its rows. */
export type RelatedData =
  | { kind: 'count'; model: ModelName; by: string }
  | { kind: 'average'; model: ModelName; by: string; of: string; decimals: number }

/** Conditions a row must meet: its id, and the parent of a nested collection. */
export type Scope = Record<string, unknown>

export interface Store {
  list(plan: ListPlan, scope: Scope): Promise<{ rows: Row[]; total: number }>
  find(scope: Scope): Promise<Row | null>
  exists(scope: Scope): Promise<boolean>
  create(data: Row): Promise<Row>
  /** Updates the row only if it still has `updatedAt`; null when another write came first. */
  updateIfUnchanged(scope: Scope, updatedAt: Date, data: Row): Promise<Row | null>
  remove(scope: Scope): Promise<boolean>
  related(id: string): Promise<Record<string, unknown>>
}

export interface StoreOptions {
  model: ModelName
  fields: readonly Field[]
  related: Readonly<Record<string, RelatedData>>
}

function relatedLoader(prisma: PrismaClient, related: Readonly<Record<string, RelatedData>>, conflict: ConflictContext) {
  // One aggregate query per (model, foreign key), computed at startup.
  const groups = new Map<string, { model: ModelName; by: string; entries: [string, RelatedData][] }>()
  for (const entry of Object.entries(related)) {
    const key = `${entry[1].model}.${entry[1].by}`
    const group = groups.get(key) ?? { model: entry[1].model, by: entry[1].by, entries: [] }
    group.entries.push(entry)
    groups.set(key, group)
  }
  const queries = [...groups.values()].map(({ model, by, entries }) => {
    const delegate = prisma[model] as unknown as Delegate
    const avg = Object.fromEntries(entries.flatMap(([, d]) => (d.kind === 'average' ? [[d.of, true]] : [])))
    return async (id: string, out: Record<string, unknown>) => {
      const result = await guard(conflict, () =>
        delegate.aggregate({ where: { [by]: id }, _count: { _all: true }, ...(Object.keys(avg).length ? { _avg: avg } : {}) }),
      )
      for (const [name, d] of entries) {
        if (d.kind === 'count') out[name] = result._count!._all
        else out[name] = roundOrNull(result._avg![d.of], d.decimals)
      }
    }
  })
  return async (id: string) => {
    const out: Record<string, unknown> = {}
    await Promise.all(queries.map((query) => query(id, out)))
    return out
  }
}

function roundOrNull(value: unknown, decimals: number): number | null {
  if (value === null || value === undefined) return null
  const factor = 10 ** decimals
  return Math.round(Number(value) * factor) / factor
}

async function guard<T>(context: ConflictContext, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    throw translateDatabaseError(error, context) ?? error
  }
}

const isNotFound = (error: unknown) => (error as { code?: string }).code === 'P2025'

export function createStore(prisma: PrismaClient, options: StoreOptions): Store {
  const delegate = prisma[options.model] as unknown as Delegate
  const columns = options.fields.filter((f) => !f.related)
  const select = Object.fromEntries(columns.map((f) => [f.column, true]))
  const context: ConflictContext = { fields: columns.map((f) => f.name) }
  const related = relatedLoader(prisma, options.related, context)
  return {
    async list(plan, scope) {
      const args = toPrismaArgs(plan, scope)
      const [rows, total] = await guard(context, () =>
        Promise.all([delegate.findMany({ ...args, select }), delegate.count({ where: args.where })]),
      )
      return { rows, total }
    },
    find: (scope) => guard(context, () => delegate.findUnique({ where: scope, select })),
    exists: async (scope) => (await guard(context, () => delegate.findUnique({ where: scope, select: { id: true } }))) !== null,
    create: (data) => guard(context, () => delegate.create({ data, select })),
    async updateIfUnchanged(scope, updatedAt, data) {
      try {
        return await guard(context, () => delegate.update({ where: { ...scope, updatedAt }, data, select }))
      } catch (error) {
        if (error instanceof Error && isNotFound(error.cause)) return null
        throw error
      }
    },
    async remove(scope) {
      try {
        await guard(context, () => delegate.delete({ where: scope, select: { id: true } }))
        return true
      } catch (error) {
        if (error instanceof Error && isNotFound(error.cause)) return false
        throw error
      }
    },
    related,
  }
}
