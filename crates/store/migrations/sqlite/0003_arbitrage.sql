-- Arbitrage: recorded opportunity episodes (spec 2.10, contracts §6) and operator pair overrides.
--
-- An episode is one row per (key, first_seen_at); the scanner extends it in place. `opportunity` is the
-- latest observation as JSON (exact integers); the filter columns beside it are copies of its fields. Every
-- history filter is served by an index that starts with the filter and continues in the page order
-- (last_seen_at DESC, id DESC), so a page is a short index walk and `total` a count over one index range.

CREATE TABLE IF NOT EXISTS arb_episodes (
    id             INTEGER PRIMARY KEY,
    event_id       TEXT    NOT NULL,
    outcome_key    TEXT    NOT NULL,
    buy_yes_market TEXT    NOT NULL,
    buy_no_market  TEXT    NOT NULL,
    first_seen_at  INTEGER NOT NULL,
    last_seen_at   INTEGER NOT NULL,
    interval_code  TEXT,
    category       TEXT    NOT NULL,
    net_micros     INTEGER NOT NULL,
    peak_micros    INTEGER NOT NULL,
    opportunity    TEXT    NOT NULL,
    UNIQUE (event_id, outcome_key, buy_yes_market, buy_no_market, first_seen_at)
) STRICT;

CREATE INDEX IF NOT EXISTS arb_episodes_last_seen ON arb_episodes (last_seen_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS arb_episodes_interval ON arb_episodes (interval_code, last_seen_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS arb_episodes_category ON arb_episodes (category, last_seen_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS arb_episodes_net ON arb_episodes (net_micros, last_seen_at DESC);

CREATE TABLE IF NOT EXISTS arb_pair_overrides (
    id                INTEGER PRIMARY KEY,
    venue_a_market_id TEXT    NOT NULL UNIQUE,
    venue_b_market_id TEXT    NOT NULL UNIQUE,
    created_at        INTEGER NOT NULL
) STRICT;
