-- Indexes for reading market search one relevance tier at a time (see `postgres/search.rs`).
--
-- The headline is coalesce(title, question). A common needle ("bitcoin") matches a large share of the catalog;
-- ranking every match by tier and volume then costs a sort of all of them. Instead each tier is read in volume
-- order and the reading stops when the page is full; a tier that names few rows is read from the index that
-- names them:
-- - markets_head_trgm: "the headline contains the needle" (tier 3 candidates, and their count);
-- - markets_head_lower_prefix: "the headline starts with the needle" (tier 2), as a byte range on lower(headline).
CREATE INDEX IF NOT EXISTS markets_head_trgm ON markets USING gin (coalesce(title, question) gin_trgm_ops);
CREATE INDEX IF NOT EXISTS markets_head_lower_prefix ON markets (lower(coalesce(title, question)) text_pattern_ops);
