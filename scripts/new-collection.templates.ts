/**
 * What `npm run new:collection` writes for a collection: the schema and plugin files, the Prisma
 * model and the migration, alike in their fields (name, notes, active), as the drift test wants.
 */

/** The names of one collection (scripts/new-collection.ts derives them from the one given). */
export interface Names {
  /** The path segment and the folder: `gift-cards`. */
  path: string
  /** The table, which events are named after: `gift_cards`. */
  table: string
  /** The plugin's export: `giftCards`. */
  variable: string
  /** The Prisma model, and the schemas' names: `GiftCard`. */
  model: string
  /** The model on the Prisma client, the plugin's `model`: `giftCard`. */
  delegate: string
}

/** `gift_cards` → `Gift cards`: how comments name the collection. */
const title = (names: Names) => {
  const words = names.table.replace(/_/g, ' ')
  return words[0]!.toUpperCase() + words.slice(1)
}

function schemaFile(names: Names): string {
  const { model } = names
  return `/** ${title(names)}: TODO what one is. Written by npm run new:collection; the fields are examples to edit. */
import { Type, type Static } from 'typebox'
import { Nullable, ServerFields } from '../../schema-types.js'

// Each field once, used by the schemas below. A field is alike in three places: here, in the
// model ${model} in prisma/schema.prisma (field and column named as the JSON field) and in
// the migration's table (the JSON name): maxLength as the VARCHAR's length, the same default.
// The factory understands strings (format 'date-time' or 'uuid'), integers (Int32), numbers
// (Money), booleans, StringEnum([...]) and arrays of strings, each optionally Nullable; see
// docs/how-to/add-a-collection.md and src/schema-types.ts.
const name = Type.String({ minLength: 1, maxLength: 120, examples: ['An example'] })
const notes = Type.String({ maxLength: 2000 })
const active = Type.Boolean()

/**
 * The body of a POST: what a client may write. Required fields are plain; optional ones are
 * Type.Optional(Nullable(schema, { default })), absent and null both meaning the default (the
 * column's), or null without one.
 */
export const ${model}Create = Type.Object(
  {
    name,
    notes: Type.Optional(Nullable(notes)),
    active: Type.Optional(Nullable(active, { default: true })),
  },
  { additionalProperties: false },
)

/** The detail: every field, in the order of the representation; one not in the create schema is read-only. */
export const ${model} = Type.Object({
  id: ServerFields.id,
  name,
  notes: Nullable(notes),
  active,
  created_at: ServerFields.created_at,
  updated_at: ServerFields.updated_at,
})

/** The list representation: some of the detail's fields, id among them. */
export const ${model}Summary = Type.Pick(${model}, ['id', 'name', 'active'])

export type ${model} = Static<typeof ${model}>
`
}

function pluginFile(names: Names): string {
  const { model } = names
  const table = names.table === names.path ? '' : `\n  // Its table; events are named after it (${names.table}.created, ...).\n  table: '${names.table}',`
  return `/** The ${names.path} collection: signed-in callers read, admins write. Written by npm run new:collection. */
import { defineCollection } from '../../resources/collection.js'
import { ${model}, ${model}Create, ${model}Summary } from './schema.js'

// Every option of defineCollection (owner, fieldAccess, hooks, states, versions, cacheMaxAge...)
// is in docs/how-to/add-a-collection.md.
export const ${names.variable} = defineCollection({
  // The path: /api/v{n}/${names.path}.
  name: '${names.path}',
  model: '${names.delegate}',${table}
  schemas: { create: ${model}Create, item: ${model}, summary: ${model}Summary },
  // What sort accepts; each key has an index ([field, id]) in the model and the migration.
  sortable: ['name', 'created_at'],
  filterable: ['name', 'notes', 'active', 'created_at', 'updated_at'],
  // name[contains]=..., served by the trigram index on name.
  searchable: ['name'],
  // Per action: 'public', 'authenticated', 'admin', 'owner-or-admin' (with an owner field) or 'nobody'.
  access: { list: 'authenticated', read: 'authenticated', create: 'admin', update: 'admin', delete: 'admin' },
})
`
}

/** The schema and plugin files, by name in the collection's folder. */
export function collectionFiles(names: Names): { file: string; content: string }[] {
  return [
    { file: 'schema.ts', content: schemaFile(names) },
    { file: 'index.ts', content: pluginFile(names) },
  ]
}

/** The model appended to prisma/schema.prisma, formatted as \`prisma format\` would. */
export function prismaModel(names: Names): string {
  return `/// ${title(names)} (src/collections/${names.path}), written by npm run new:collection. Its migration
/// creates the same table: test/db/migrations-drift.test.ts compares the two.
model ${names.model} {
  id         String   @id @db.Uuid
  name       String   @db.VarChar(120)
  notes      String?
  active     Boolean  @default(true)
  created_at DateTime @default(now()) @db.Timestamptz(3)
  updated_at DateTime @default(now()) @db.Timestamptz(3)

  @@index([name, id])
  @@index([created_at, id])
  // The searchable fields: \`[contains]\` is served by trigram indexes (pg_trgm).
  @@index([name(ops: raw("gin_trgm_ops"))], type: Gin)
  @@map("${names.table}")
}
`
}

/** The migration that creates the model's table, as \`prisma migrate\` would write it, and the row count every top-level collection keeps. */
export function migrationSql(names: Names): string {
  const t = names.table
  return `-- ${title(names)} (src/collections/${names.path}), written by npm run new:collection: the table of the
-- model ${names.model}. Edit it with the model until it is applied anywhere; after that, add a migration.

-- CreateTable
CREATE TABLE "${t}" (
    "id" UUID NOT NULL,
    "name" VARCHAR(120) NOT NULL,
    "notes" TEXT,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "${t}_pkey" PRIMARY KEY ("id")
);

-- CreateIndex: sorting by name.
CREATE INDEX "${t}_name_id_idx" ON "${t}"("name", "id");

-- CreateIndex: sorting by created_at.
CREATE INDEX "${t}_created_at_id_idx" ON "${t}"("created_at", "id");

-- CreateIndex: name[contains]=... (pg_trgm, created by 20261126090000_trigram_search).
CREATE INDEX "${t}_name_idx" ON "${t}" USING GIN ("name" gin_trgm_ops);

-- The row count (20261126100000_row_counts): a list without filters has its exact X-Total-Count
-- at any size without counting the table. A collection nested under another keeps none: drop these.
CREATE TRIGGER "${t}_count_inserts" AFTER INSERT ON "${t}" REFERENCING NEW TABLE AS "inserted" FOR EACH STATEMENT EXECUTE FUNCTION "row_counts_track"();
CREATE TRIGGER "${t}_count_deletes" AFTER DELETE ON "${t}" REFERENCING OLD TABLE AS "deleted" FOR EACH STATEMENT EXECUTE FUNCTION "row_counts_track"();
CREATE TRIGGER "${t}_count_truncates" AFTER TRUNCATE ON "${t}" FOR EACH STATEMENT EXECUTE FUNCTION "row_counts_track"();
INSERT INTO "row_counts" VALUES ('${t}', 0, 0);
`
}
