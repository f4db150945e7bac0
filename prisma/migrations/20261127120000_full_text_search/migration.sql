-- `q=` searches the words of a product (DESIGN "Reading"): name weighted A, description B, tags C,
-- as the products collection declares them (`textSearch`). The words are kept in a column, filled
-- by a trigger on every insert and on every update of those fields, and served by a GIN index: a
-- search reads the index, never every row. A trigger rather than a generated column: Prisma's
-- schema describes neither, and a trigger's column is a plain one its drift check can compare.
ALTER TABLE "products" ADD COLUMN "search" tsvector;

CREATE FUNCTION products_search() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.search :=
    setweight(to_tsvector('english', coalesce(NEW.name, '')), 'A') ||
    setweight(to_tsvector('english', coalesce(NEW.description, '')), 'B') ||
    setweight(to_tsvector('english', coalesce(array_to_string(NEW.tags, ' '), '')), 'C');
  RETURN NEW;
END $$;

CREATE TRIGGER products_search BEFORE INSERT OR UPDATE OF "name", "description", "tags" ON "products"
  FOR EACH ROW EXECUTE FUNCTION products_search();

-- The rows already there: the trigger fills the column as each is rewritten.
UPDATE "products" SET "name" = "name";

CREATE INDEX "products_search_idx" ON "products" USING GIN ("search");
