-- Historical order books: `book_snapshots` becomes a table partitioned by day, so that retention drops whole
-- partitions (DETACH CONCURRENTLY + DROP) instead of deleting rows one by one.
--
-- Partition of day d (days since the Unix epoch, UTC): "book_snapshots_d<d>", for ts in
-- [d * 86400000, (d + 1) * 86400000). The server creates them ahead of time and on demand (postgres/history.rs);
-- there is no default partition (it would forbid creating a day's partition once it held rows of that day, and
-- would prevent DETACH CONCURRENTLY).
--
-- Rows already stored are moved into the new table, one partition per day they cover.

ALTER TABLE book_snapshots RENAME TO book_snapshots_unpartitioned;
ALTER TABLE book_snapshots_unpartitioned RENAME CONSTRAINT book_snapshots_pkey TO book_snapshots_unpartitioned_pkey;
-- The ts index served row-by-row retention; partitions make it unnecessary.
DROP INDEX IF EXISTS book_snapshots_ts;

-- One row per book and millisecond; `asset_id` is '' for venue_a books. Ladders are compact binary blobs.
CREATE TABLE book_snapshots (
    exchange  TEXT COLLATE "C" NOT NULL,
    market_id TEXT COLLATE "C" NOT NULL,
    asset_id  TEXT COLLATE "C" NOT NULL,
    ts        BIGINT NOT NULL,
    bids      BYTEA  NOT NULL,
    asks      BYTEA  NOT NULL,
    no_bids   BYTEA  NOT NULL,
    PRIMARY KEY (exchange, market_id, asset_id, ts)
) PARTITION BY RANGE (ts);

DO $$
DECLARE
    d BIGINT;
BEGIN
    FOR d IN SELECT DISTINCT floor(ts::numeric / 86400000)::bigint FROM book_snapshots_unpartitioned LOOP
        EXECUTE format(
            'CREATE TABLE %I PARTITION OF book_snapshots FOR VALUES FROM (%s) TO (%s)',
            'book_snapshots_d' || d, d * 86400000, (d + 1) * 86400000
        );
    END LOOP;
END
$$;

INSERT INTO book_snapshots (exchange, market_id, asset_id, ts, bids, asks, no_bids)
SELECT exchange, market_id, asset_id, ts, bids, asks, no_bids FROM book_snapshots_unpartitioned;

DROP TABLE book_snapshots_unpartitioned;
