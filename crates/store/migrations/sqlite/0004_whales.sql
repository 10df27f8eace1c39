-- Whale tracking (spec §2.13, §4.4; contracts §7): watchlists, the daily public pool, and the index the whale
-- feeds read.
--
-- Whales are not a table: every trade is stored once (0001 `trades`, with its exact `notional` in micro-dollars)
-- and a whale is a filter, `notional >= threshold` on tracked events. `trades_event_notional` serves that filter:
-- per tracked event, a range on `notional` yields exactly the whale trades, and `executed_at` and `id` in the
-- index let the feed count, aggregate and order them (then read only the page's rows) without touching the table.

CREATE INDEX IF NOT EXISTS trades_event_notional ON trades (exchange, event_id, notional, executed_at, id);

-- One row per customer and tracked event. The threshold is in micro-dollars.
CREATE TABLE IF NOT EXISTS whale_watchlist (
    id            INTEGER PRIMARY KEY,
    customer_id   INTEGER NOT NULL REFERENCES customers (id),
    exchange      TEXT    NOT NULL,
    event_id      TEXT    NOT NULL,
    threshold     INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    UNIQUE (customer_id, exchange, event_id)
) STRICT;

-- The public pool of each UTC day (`YYYY-MM-DD`), in unlock order. Written once per day by whichever process
-- draws it first; every replica then reads the same rows.
CREATE TABLE IF NOT EXISTS whale_pool (
    pool_date TEXT    NOT NULL,
    rank      INTEGER NOT NULL,
    exchange  TEXT    NOT NULL,
    event_id  TEXT    NOT NULL,
    PRIMARY KEY (pool_date, rank)
) STRICT, WITHOUT ROWID;
