// The drift test's comparison knows every column type schema.prisma can give a PostgreSQL column:
// a model with each native type of Prisma's PostgreSQL connector against a table made with the SQL
// Prisma's migrations write for it. Before, `@db.Char(2)` stopped the drift test with "native type
// Char is not mapped yet", and it ran no test.
import t from 'tap'
import { openDatabase } from '../../src/db/client.js'
import { createTestDatabase, databaseKinds } from '../helpers/databases.js'
import { databaseFacts, expectedFacts, parseDatamodel } from '../helpers/schema-diff.js'

/** A field's type and attributes in the model, and its column in `CREATE TABLE`, as `prisma migrate` writes it. */
const COLUMNS: [prisma: string, sql: string][] = [
  ['String @db.Text', 'TEXT NOT NULL'],
  ['String? @db.Char(2)', 'CHAR(2)'],
  ['String @db.Char', 'CHAR NOT NULL'],
  ['String @default("US") @db.Char(2)', "CHAR(2) NOT NULL DEFAULT 'US'"],
  ['String @db.VarChar', 'VARCHAR NOT NULL'],
  ['String @default("x") @db.VarChar(5)', "VARCHAR(5) NOT NULL DEFAULT 'x'"],
  ['String @db.Bit', 'BIT NOT NULL'],
  ['String @default("101") @db.Bit(3)', "BIT(3) NOT NULL DEFAULT '101'"],
  ['String @db.VarBit', 'VARBIT NOT NULL'],
  ['String? @db.VarBit(4)', 'VARBIT(4)'],
  ['String @db.Uuid', 'UUID NOT NULL'],
  ['String @db.Xml', 'XML NOT NULL'],
  ['Json @db.Json', 'JSON NOT NULL'],
  ['Json @default("{}") @db.JsonB', "JSONB NOT NULL DEFAULT '{}'"],
  ['Json', 'JSONB NOT NULL'],
  ['String @default("10.0.0.1") @db.Inet', "INET NOT NULL DEFAULT '10.0.0.1'"],
  ['String? @db.Citext', 'CITEXT'],
  ['Decimal @db.Money', 'MONEY NOT NULL'],
  ['Int @db.Oid', 'OID NOT NULL'],
  ['Int @default(1) @db.SmallInt', 'SMALLINT NOT NULL DEFAULT 1'],
  ['Int @db.Integer', 'INTEGER NOT NULL'],
  ['Int', 'INTEGER NOT NULL'],
  ['BigInt @db.BigInt', 'BIGINT NOT NULL'],
  ['Float @db.Real', 'REAL NOT NULL'],
  ['Float @default(1.5) @db.DoublePrecision', 'DOUBLE PRECISION NOT NULL DEFAULT 1.5'],
  ['Float', 'DOUBLE PRECISION NOT NULL'],
  ['Decimal @db.Decimal', 'DECIMAL NOT NULL'],
  ['Decimal @default(0) @db.Decimal(12, 2)', 'DECIMAL(12,2) NOT NULL DEFAULT 0'],
  ['Decimal', 'DECIMAL(65,30) NOT NULL'],
  ['DateTime @db.Timestamp', 'TIMESTAMP NOT NULL'],
  ['DateTime @default(now()) @db.Timestamp(2)', 'TIMESTAMP(2) NOT NULL DEFAULT CURRENT_TIMESTAMP'],
  ['DateTime', 'TIMESTAMP(3) NOT NULL'],
  ['DateTime @db.Timestamptz', 'TIMESTAMPTZ NOT NULL'],
  ['DateTime @default(now()) @db.Timestamptz(3)', 'TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP'],
  ['DateTime? @db.Date', 'DATE'],
  ['DateTime @db.Time', 'TIME NOT NULL'],
  ['DateTime @db.Time(1)', 'TIME(1) NOT NULL'],
  ['DateTime @db.Timetz', 'TIMETZ NOT NULL'],
  ['DateTime @db.Timetz(4)', 'TIMETZ(4) NOT NULL'],
  ['Boolean @default(true) @db.Boolean', 'BOOLEAN NOT NULL DEFAULT true'],
  ['Bytes? @db.ByteA', 'BYTEA'],
  // Lists: an empty default is cast to the type without its modifier first.
  ['String[] @default([]) @db.Char(2)', 'CHAR(2)[] DEFAULT ARRAY[]::CHAR(2)[]'],
  ['String[] @default([]) @db.VarChar(3)', 'VARCHAR(3)[] DEFAULT ARRAY[]::VARCHAR(3)[]'],
  ['String[] @default([])', 'TEXT[] DEFAULT ARRAY[]::TEXT[]'],
  ['Decimal[] @default([]) @db.Decimal(5, 1)', 'DECIMAL(5,1)[] DEFAULT ARRAY[]::DECIMAL(5,1)[]'],
  ['DateTime[] @db.Timestamptz(3)', 'TIMESTAMPTZ(3)[]'],
]

const column = (i: number) => `c${i}`
const schema = (columns: typeof COLUMNS) =>
  [
    'datasource db {',
    '  provider = "postgresql"',
    '}',
    'model NativeType {',
    '  id Int @id',
    ...columns.map(([prisma], i) => `  ${column(i)} ${prisma}`),
    '  @@map("native_types")',
    '}',
  ].join('\n')
const createTable = (columns: typeof COLUMNS) =>
  `CREATE TABLE "native_types" ("id" INTEGER NOT NULL, ${columns.map(([, sql], i) => `"${column(i)}" ${sql}`).join(', ')}, CONSTRAINT "native_types_pkey" PRIMARY KEY ("id"))`

for (const kind of databaseKinds()) {
  t.test(`${kind}: every native type of Prisma's PostgreSQL connector is compared, as its migrations create it`, async (t) => {
    const database = await createTestDatabase(kind)
    const db = await openDatabase(database.config)
    t.teardown(async () => {
      await db.close()
      await database.drop()
    })
    // citext is an extension: where the database does not have it, that one column is left out.
    const citext = await db.query('CREATE EXTENSION IF NOT EXISTS citext', []).then(() => true, () => false)
    if (!citext) t.comment(`${kind} has no citext extension here: @db.Citext is not compared`)
    const columns = COLUMNS.filter(([prisma]) => citext || !prisma.includes('@db.Citext'))
    await db.query(createTable(columns), [])
    const expected = expectedFacts(parseDatamodel(schema(columns)), schema(columns))
    const actual = await db.withSession(databaseFacts)
    t.same(actual.columns, expected.columns, 'each column: type, nullability, default')
    t.same(actual.indexes, expected.indexes)

    const char = columns.findIndex(([prisma]) => prisma === 'String? @db.Char(2)')
    await db.query(`ALTER TABLE native_types ALTER COLUMN ${column(char)} TYPE CHAR(3)`, [])
    const drifted = await db.withSession(databaseFacts)
    t.ok(drifted.columns.includes(`native_types.${column(char)} character(3) DEFAULT null`), 'another length is drift')
    t.notSame(drifted.columns, expected.columns)
  })
}

t.test('a type the comparison does not know stops it with a message naming the field and the type', async (t) => {
  const text = schema([['String @db.Text', 'TEXT NOT NULL']])
  const model = parseDatamodel(text)
  // A native type a later Prisma may add (prisma-engines has Geometry on a branch).
  model.models[0]!.fields.find((f) => f.name === 'c0')!.nativeType = ['Geometry', []]
  t.throws(() => expectedFacts(model, text), { message: /^schema-diff: NativeType\.c0 has the native type @db\.Geometry, which test\/helpers\/schema-diff\.ts does not map/ })
})
