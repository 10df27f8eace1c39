-- Arbitrage episodes name the fee rates their figures were computed at (`fee_model`, e.g.
-- `venue_a:0.07;venue_b:crypto=0.07`), so that a figure can be checked after the operator changes a rate.
-- The opportunity JSON carries the label too; the column is the authoritative copy and lets an operator find
-- the episodes of one fee model with SQL.
--
-- Episodes recorded before this were all priced at the spec's rates (0.07 on both venues in every category),
-- so they are labelled with those rates and the category their row already records.

ALTER TABLE arb_episodes ADD COLUMN fee_model TEXT NOT NULL DEFAULT '';

UPDATE arb_episodes SET fee_model = 'venue_a:0.07;venue_b:' || category || '=0.07' WHERE fee_model = '';
