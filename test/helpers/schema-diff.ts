/**
 * Compares a migrated database with prisma/schema.prisma: tables, columns (type, nullability,
 * default), enums, primary keys, unique constraints, indexes and foreign keys. Prisma's schema
 * engine does this with `migrate diff`; it cannot be downloaded here, so the test reads Prisma's
 * own DMMF (from its WebAssembly schema library) and the PostgreSQL catalogue. CHECK constraints
 * are not compared: schema.prisma cannot express them.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { SqlSession } from '../../src/db/client.js'

interface DmmfField {
  name: string
  dbName?: string | null
  kind: 'scalar' | 'enum' | 'object'
  type: string
  isList: boolean
  isRequired: boolean
  hasDefaultValue: boolean
  default?: unknown
  nativeType?: [string, string[]] | null
  relationFromFields?: string[]
  relationToFields?: string[]
  relationOnDelete?: string
  relationOnUpdate?: string
}
interface DmmfModel { name: string; dbName: string | null; fields: DmmfField[] }
interface DmmfIndex { model: string; type: 'id' | 'unique' | 'normal' | 'fulltext'; fields: { name: string }[] }
export interface Datamodel { models: DmmfModel[]; enums: { name: string; dbName: string | null; values: { name: string }[] }[]; indexes: DmmfIndex[] }

const require = createRequire(import.meta.url)

/** Prisma's own view (the DMMF) of a schema's text. */
export function parseDatamodel(prismaSchema: string): Datamodel {
  const wasm = require('@prisma/prisma-schema-wasm') as { get_dmmf(params: string): string }
  return JSON.parse(wasm.get_dmmf(JSON.stringify({ prismaSchema }))).datamodel
}

export const readDatamodel = (schemaPath = 'prisma/schema.prisma'): Datamodel => parseDatamodel(readFileSync(schemaPath, 'utf8'))

/**
 * A column type twice: as `format_type` prints the column (`character(2)`), and as PostgreSQL
 * prints a constant cast to it in a default (`'US'::bpchar`: the type's own name, no modifier).
 */
interface ColumnType {
  type: string
  cast: string
}

const plain = (type: string): ColumnType => ({ type, cast: type })
/** A type with an optional length or precision: `name(n)suffix`, or `name suffix` without one. */
const sized = (name: string, cast: string, suffix = '') => ([n]: string[]): ColumnType => ({
  type: n === undefined ? `${name}${suffix ? ` ${suffix}` : ''}` : `${name}(${n})${suffix ? ` ${suffix}` : ''}`,
  cast,
})

/**
 * Every native type of Prisma's PostgreSQL connector (prisma-engines, psl's
 * `postgres_datamodel_connector/native_types.rs`), as its migrations create it: the schema engine
 * writes `CHAR(2)`, `VARBIT`, `TIMESTAMPTZ(3)`, arguments only where the schema gives them.
 * Without an argument PostgreSQL takes its own default: `CHAR` and `BIT` are one long, the others
 * unbounded or at full precision (`format_type` then prints no modifier).
 */
const NATIVE_TYPES: Record<string, (args: string[]) => ColumnType> = {
  Text: () => plain('text'),
  Char: ([n = '1']) => ({ type: `character(${n})`, cast: 'bpchar' }),
  VarChar: sized('character varying', 'character varying'),
  Bit: ([n = '1']) => ({ type: `bit(${n})`, cast: '"bit"' }),
  VarBit: sized('bit varying', 'bit varying'),
  Uuid: () => plain('uuid'),
  Xml: () => plain('xml'),
  Json: () => plain('json'),
  JsonB: () => plain('jsonb'),
  Inet: () => plain('inet'),
  Citext: () => plain('citext'),
  Money: () => plain('money'),
  Oid: () => plain('oid'),
  SmallInt: () => plain('smallint'),
  Integer: () => plain('integer'),
  BigInt: () => plain('bigint'),
  Real: () => plain('real'),
  DoublePrecision: () => plain('double precision'),
  Decimal: (args) => ({ type: args.length > 0 ? `numeric(${args.join(',')})` : 'numeric', cast: 'numeric' }),
  Timestamp: sized('timestamp', 'timestamp without time zone', 'without time zone'),
  Timestamptz: sized('timestamp', 'timestamp with time zone', 'with time zone'),
  Date: () => plain('date'),
  Time: sized('time', 'time without time zone', 'without time zone'),
  Timetz: sized('time', 'time with time zone', 'with time zone'),
  Boolean: () => plain('boolean'),
  ByteA: () => plain('bytea'),
}

/** The native type of each Prisma scalar without `@db.*`, as Prisma's PostgreSQL connector chooses it. */
const SCALAR_DEFAULTS: Record<string, [string, string[]]> = {
  String: ['Text', []],
  Int: ['Integer', []],
  BigInt: ['BigInt', []],
  Float: ['DoublePrecision', []],
  Boolean: ['Boolean', []],
  Decimal: ['Decimal', ['65', '30']],
  DateTime: ['Timestamp', ['3']],
  Json: ['JsonB', []],
  Bytes: ['ByteA', []],
}

/** The column type Prisma's migrations give `field`; a type this file does not know stops the comparison, naming it. */
function columnType(model: DmmfModel, field: DmmfField, enums: Map<string, string>): ColumnType {
  if (field.kind === 'enum') return plain(enums.get(field.type)!)
  const [native, args] = field.nativeType ?? SCALAR_DEFAULTS[field.type] ?? []
  const mapped = native === undefined ? undefined : NATIVE_TYPES[native]
  if (!mapped) {
    const what = native === undefined ? `the scalar type ${field.type}` : `the native type @db.${native}`
    throw new Error(`schema-diff: ${model.name}.${field.name} has ${what}, which test/helpers/schema-diff.ts does not map to a PostgreSQL type; add it there`)
  }
  return mapped(args ?? [])
}

/** `type` of a list column: `character(2)[]`. */
const listOf = ({ type, cast }: ColumnType): ColumnType => ({ type: `${type}[]`, cast: `${cast}[]` })

function columnDefault(field: DmmfField, column: ColumnType, sequence: string): string | null {
  if (!field.hasDefaultValue) return null
  const value = field.default as { name?: string } | string | number | boolean | unknown[]
  // PostgreSQL casts an empty array to the type without its modifier, then to the column's type.
  if (Array.isArray(value)) return column.type === column.cast ? `ARRAY[]::${column.type}` : `(ARRAY[]::${column.cast})::${column.type}`
  if (typeof value === 'object' && value !== null && value.name === 'now') return 'CURRENT_TIMESTAMP'
  if (typeof value === 'object' && value !== null && value.name === 'autoincrement') return `nextval('${sequence}'::regclass)`
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return `'${String(value)}'::${column.cast}`
}

const ACTIONS: Record<string, string> = { Cascade: 'CASCADE', Restrict: 'RESTRICT', SetNull: 'SET NULL', SetDefault: 'SET DEFAULT', NoAction: 'NO ACTION' }

export interface SchemaFacts {
  columns: string[]
  indexes: string[]
  foreignKeys: string[]
  enums: string[]
}

/**
 * Columns of types Prisma does not support (`tx Unsupported("xid8") @default(dbgenerated("..."))`),
 * which the DMMF omits, read from the schema's text: `<column> <type> NOT NULL DEFAULT <expr>` by model.
 */
function unsupportedColumns(schema: string): Map<string, string[]> {
  const byModel = new Map<string, string[]>()
  for (const block of schema.matchAll(/^model (\w+) \{([^}]*)\}/gm)) {
    for (const field of block[2]!.matchAll(/^\s+(\w+)\s+Unsupported\("(\w+)"\)(\?)?(.*)$/gm)) {
      const [, fieldName, type, optional, rest] = field
      const name = /@map\("(\w+)"\)/.exec(rest!)?.[1] ?? fieldName
      const expression = /dbgenerated\("([^"]*)"\)/.exec(rest!)?.[1] ?? 'null'
      byModel.set(block[1]!, [...(byModel.get(block[1]!) ?? []), `${name} ${type}${optional ? '' : ' NOT NULL'} DEFAULT ${expression}`])
    }
  }
  return byModel
}

/** The facts schema.prisma says the database must have, one line each. */
export function expectedFacts(model: Datamodel, schema = readFileSync('prisma/schema.prisma', 'utf8')): SchemaFacts {
  const unsupported = unsupportedColumns(schema)
  const enums = new Map(model.enums.map((e) => [e.name, e.dbName ?? e.name]))
  const tables = new Map(model.models.map((m) => [m.name, m]))
  const table = (m: DmmfModel) => m.dbName ?? m.name
  // The DMMF leaves out Unsupported("...") fields: they are indexed under their own name.
  const column = (m: DmmfModel, name: string) => {
    const field = m.fields.find((f) => f.name === name)
    return field?.dbName ?? name
  }
  const facts: SchemaFacts = { columns: [], indexes: [], foreignKeys: [], enums: [] }
  for (const e of model.enums) facts.enums.push(`${e.dbName ?? e.name}: ${e.values.map((v) => v.name).join(', ')}`)
  for (const m of model.models) {
    for (const field of m.fields) {
      if (field.kind === 'object') {
        if (!field.relationFromFields?.length) continue
        const target = tables.get(field.type)!
        const from = field.relationFromFields.map((f) => column(m, f)).join(', ')
        const to = field.relationToFields!.map((f) => column(target, f)).join(', ')
        const onUpdate = ACTIONS[field.relationOnUpdate ?? 'Cascade']
        const onDelete = ACTIONS[field.relationOnDelete ?? (field.isRequired ? 'Restrict' : 'SetNull')]
        facts.foreignKeys.push(`${table(m)}: FOREIGN KEY (${from}) REFERENCES ${table(target)}(${to}) ON UPDATE ${onUpdate} ON DELETE ${onDelete}`)
        continue
      }
      const scalar = columnType(m, field, enums)
      const type = field.isList ? listOf(scalar) : scalar
      const notNull = field.isRequired && !field.isList
      const name = field.dbName ?? field.name
      facts.columns.push(`${table(m)}.${name} ${type.type}${notNull ? ' NOT NULL' : ''} DEFAULT ${columnDefault(field, type, `${table(m)}_${name}_seq`)}`)
    }
    for (const field of unsupported.get(m.name) ?? []) facts.columns.push(`${table(m)}.${field}`)
  }
  for (const index of model.indexes) {
    const m = tables.get(index.model)!
    const kind = index.type === 'id' ? 'PRIMARY KEY' : index.type === 'unique' ? 'UNIQUE' : 'INDEX'
    facts.indexes.push(`${table(m)}: ${kind} (${index.fields.map((f) => column(m, f.name)).join(', ')})`)
  }
  return sorted(facts)
}

const sorted = (facts: SchemaFacts): SchemaFacts => ({
  columns: facts.columns.sort(),
  indexes: facts.indexes.sort(),
  foreignKeys: facts.foreignKeys.sort(),
  enums: facts.enums.sort(),
})

/** The same facts, read from the database's catalogue. */
export async function databaseFacts(session: SqlSession): Promise<SchemaFacts> {
  const columns = await session.query<{ line: string }>(`
    SELECT c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
           || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
           || ' DEFAULT ' || coalesce(pg_get_expr(d.adbin, d.adrelid), 'null') AS line
      FROM pg_attribute a
      JOIN pg_class c ON c.oid = a.attrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
       AND c.relname <> '_prisma_migrations'`)
  const indexes = await session.query<{ line: string }>(`
    SELECT t.relname || ': ' || CASE WHEN ix.indisprimary THEN 'PRIMARY KEY' WHEN ix.indisunique THEN 'UNIQUE' ELSE 'INDEX' END
           || ' (' || string_agg(a.attname, ', ' ORDER BY k.n) || ')' AS line
      FROM pg_index ix
      JOIN pg_class t ON t.oid = ix.indrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
      CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, n)
      JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
     WHERE n.nspname = 'public' AND t.relname <> '_prisma_migrations'
     GROUP BY t.relname, ix.indexrelid, ix.indisprimary, ix.indisunique`)
  const foreignKeys = await session.query<{ line: string }>(`
    SELECT c.relname || ': ' || pg_get_constraintdef(k.oid) AS line
      FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE k.contype = 'f' AND n.nspname = 'public'`)
  const enums = await session.query<{ line: string }>(`
    SELECT t.typname || ': ' || string_agg(e.enumlabel, ', ' ORDER BY e.enumsortorder) AS line
      FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace n ON n.oid = t.typnamespace
     WHERE n.nspname = 'public' GROUP BY t.typname`)
  const lines = (rows: { line: string }[]) => rows.map((r) => r.line)
  return sorted({ columns: lines(columns), indexes: lines(indexes), foreignKeys: lines(foreignKeys), enums: lines(enums) })
}
