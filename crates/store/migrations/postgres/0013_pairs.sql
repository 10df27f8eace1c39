-- What each market settles on, as its venue states it (venue_a: settlement sources or primary rules; venue_b:
-- `resolutionSource`), so `/v1/arbitrage/pairs` can tell whether a pair's legs pay on the same facts. NULL
-- until the next catalog sync fills it, and for markets whose venue states nothing.
ALTER TABLE markets ADD COLUMN resolution_source TEXT;

-- Pairs the operator rejected (`crossbook pairs reject`): the scanner never scans a venue_a/venue_b pair
-- listed here, whichever matcher formed it, and `/v1/arbitrage/pairs` lists it as `rejected`. Keyed by both
-- markets, not one, so rejecting a wrong pairing leaves either market free to pair correctly elsewhere.
CREATE TABLE IF NOT EXISTS arb_pair_rejections (
    venue_a_market_id TEXT   NOT NULL,
    venue_b_market_id TEXT   NOT NULL,
    reason            TEXT   NOT NULL DEFAULT '',
    created_at        BIGINT NOT NULL,
    PRIMARY KEY (venue_a_market_id, venue_b_market_id)
);
