-- Whale tracking (spec §2.13, §4.4; contracts §7): watchlists, the daily public pool, and the index the whale
-- feeds read.
--
-- Whales are not a table: every trade is stored once (0001 `trades`, with its exact `notional` in micro-dollars)
-- and a whale is a filter, `notional >= threshold` on tracked events. `trades_event_notional` serves that filter:
-- per tracked event, a range on `notional` yields exactly the whale trades, and `executed_at` and `id` in the
-- index let the feed count, aggregate and order them (index-only scans) and read only the page's rows.

CREATE INDEX IF NOT EXISTS trades_event_notional ON trades (exchange, event_id, notional, executed_at, id);

-- One row per customer and tracked event. The threshold is in micro-dollars.
CREATE TABLE IF NOT EXISTS whale_watchlist (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id BIGINT NOT NULL REFERENCES customers (id),
    exchange    TEXT COLLATE "C" NOT NULL,
    event_id    TEXT COLLATE "C" NOT NULL,
    threshold   BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    UNIQUE (customer_id, exchange, event_id)
);

-- The public pool of each UTC day (`YYYY-MM-DD`), in unlock order. Written once per day by whichever process
-- draws it first; every replica then reads the same rows.
CREATE TABLE IF NOT EXISTS whale_pool (
    pool_date TEXT COLLATE "C" NOT NULL,
    rank      INTEGER NOT NULL,
    exchange  TEXT COLLATE "C" NOT NULL,
    event_id  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (pool_date, rank)
);
