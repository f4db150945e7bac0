/**
 * The Prisma models as the statements see them: each field is named as its column (no `@map`),
 * so a model's fields, its table's columns and the rows the statements return have one set of
 * names, and the JSON fields of a collection are the same names again.
 */
import { Prisma as Models } from './generated/browser.js'
import type { Prisma, PrismaClient } from './generated/client.js'

/** A Prisma model delegate's name on the client (`product`, `orderItem`). */
export type ModelName = {
  [K in keyof PrismaClient]: PrismaClient[K] extends { findMany: unknown } ? K : never
}[keyof PrismaClient] & string

type Scalars<M extends ModelName> = Prisma.TypeMap['model'][Capitalize<M>]['payload']['scalars']

/** The columns of a model's table, by the generated model type (of each model, when `M` is a union). */
export type ColumnOf<M extends ModelName> = M extends ModelName ? keyof Scalars<M> & string : never

/** The columns of a model's table, from the generated client: for the checks made at startup. */
export function columnsOf(model: ModelName): ReadonlySet<string> {
  const fields = (Models as unknown as Record<string, Record<string, string>>)[`${model[0]!.toUpperCase()}${model.slice(1)}ScalarFieldEnum`]
  return new Set(Object.keys(fields ?? {}))
}

/**
 * A row of a model's table as the statements return it: the generated model type with the values
 * node-postgres and PGlite give (a DECIMAL as its text, a BIGINT as its text; Prisma's own client
 * would make them Decimal and bigint objects).
 */
export type RowOf<M extends ModelName> = {
  [Column in keyof Scalars<M>]: Scalars<M>[Column] extends infer Value ? AsReturned<Value> : never
}

type AsReturned<Value> = Value extends Prisma.Decimal ? string : Value extends bigint ? string : Value
