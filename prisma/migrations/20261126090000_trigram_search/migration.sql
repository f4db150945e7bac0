-- `field[contains]=text` is an ILIKE '%text%', which a B-tree cannot serve: on a million products a
-- sequential scan took 1.2 s. Trigram indexes (pg_trgm, trusted since PostgreSQL 13, so a database
-- owner may create it) serve it on the fields the collections declare searchable.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE INDEX "products_name_idx" ON "products" USING GIN ("name" gin_trgm_ops);
CREATE INDEX "products_sku_idx" ON "products" USING GIN ("sku" gin_trgm_ops);
CREATE INDEX "products_description_idx" ON "products" USING GIN ("description" gin_trgm_ops);
CREATE INDEX "users_name_idx" ON "users" USING GIN ("name" gin_trgm_ops);
CREATE INDEX "users_email_idx" ON "users" USING GIN ("email" gin_trgm_ops);
