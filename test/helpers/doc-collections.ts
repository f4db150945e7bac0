/**
 * Collections a page's examples call besides the shop's, served when the page says
 * `<!-- examples: collection <name> -->`: what a guide builds, so that its examples run too.
 */
import { Type } from 'typebox'
import { migrationSql } from '../../scripts/new-collection.templates.js'
import { namesOf } from '../../scripts/new-collection.js'
import type { ModelName } from '../../src/db/models.js'
import { defineCollection, type Collection } from '../../src/resources/collection.js'
import { Money, Nullable, ServerFields } from '../../src/schema-types.js'

/** A collection and the SQL that makes its table on a migrated database. */
export interface DocCollection {
  collection: Collection
  sql: string
}

/**
 * docs/how-to/add-a-collection.md's gift cards: what `npm run new:collection -- gift-cards` writes,
 * with the guide's step 2 (a unique `code`, a `balance`). The table is the command's migration with
 * the guide's columns, index and check; the schema and options are the command's files with the
 * guide's fields, written out here as the guide shows them.
 */
function giftCards(): DocCollection {
  const name = Type.String({ minLength: 1, maxLength: 120, examples: ['An example'] })
  const notes = Type.String({ maxLength: 2000 })
  const active = Type.Boolean()
  const code = Type.String({ pattern: '^[A-Z0-9]{8,20}$', maxLength: 20, description: 'What the customer types: 8-20 of A-Z and 0-9.' })
  const balance = Money()
  const GiftCardCreate = Type.Object(
    {
      name,
      code,
      balance: Type.Optional(Nullable(balance, { default: 0 })),
      notes: Type.Optional(Nullable(notes)),
      active: Type.Optional(Nullable(active, { default: true })),
    },
    { additionalProperties: false },
  )
  const GiftCard = Type.Object({
    id: ServerFields.id,
    name,
    code,
    balance,
    notes: Nullable(notes),
    active,
    created_at: ServerFields.created_at,
    updated_at: ServerFields.updated_at,
  })
  const collection = defineCollection({
    name: 'gift-cards',
    // The guide's model is in the guide's copy of the project, not in this one's Prisma client;
    // the factory reads the table, and the model only types the plugin.
    model: 'giftCard' as ModelName,
    table: 'gift_cards',
    schemas: { create: GiftCardCreate, item: GiftCard, summary: Type.Pick(GiftCard, ['id', 'name', 'active']) },
    sortable: ['name', 'created_at'],
    filterable: ['name', 'notes', 'active', 'created_at', 'updated_at'],
    searchable: ['name'],
    access: { list: 'authenticated', read: 'authenticated', create: 'admin', update: 'admin', delete: 'admin' },
  })
  const generated = migrationSql(namesOf('gift-cards'))
  const columns = '    "name" VARCHAR(120) NOT NULL,\n'
  if (!generated.includes(columns)) throw new Error('the generated gift_cards migration no longer has the name column the guide adds its fields after')
  const sql =
    generated.replace(columns, `${columns}    "code" VARCHAR(20) NOT NULL,\n    "balance" DECIMAL(12,2) NOT NULL DEFAULT 0,\n`) +
    `CREATE UNIQUE INDEX "gift_cards_code_key" ON "gift_cards"("code");\n` +
    `ALTER TABLE "gift_cards" ADD CONSTRAINT "gift_cards_balance_check" CHECK ("balance" >= 0);\n`
  return { collection, sql }
}

/** By the name a page gives. */
export const DOC_COLLECTIONS: Record<string, () => DocCollection> = { 'gift-cards': giftCards }
