-- crossbook schema, PostgreSQL flavour.
--
-- Conventions shared with the SQLite schema: times are BIGINT Unix milliseconds, money and sizes are BIGINT
-- micro-units (1e-6), and every identifier a venue gives us stays TEXT (venue_b token ids have 78 digits).
-- Identifier columns use the "C" collation so that ties sort bytewise, exactly as on SQLite.
--
-- Text search: one pg_trgm GIN index per table over its searchable columns joined by newlines, queried with
-- `<same expression> ILIKE '%needle%'` and rechecked column by column (so a needle never matches across two
-- fields). One index scan per search, where an OR over per-column indexes would cost one scan per column. The
-- expressions below must stay identical to the ones in src/sql.rs, or the planner cannot use the indexes
-- (a test checks the plan).
--
-- Every statement is idempotent (IF NOT EXISTS), so replaying this file is harmless.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE IF NOT EXISTS series (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    exchange      TEXT COLLATE "C" NOT NULL,
    series_id     TEXT COLLATE "C" NOT NULL,
    title         TEXT   NOT NULL,
    slug          TEXT,
    url           TEXT,
    category      TEXT,
    status        TEXT   NOT NULL,
    discovered_at BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    UNIQUE (exchange, series_id)
);

CREATE INDEX IF NOT EXISTS series_status_discovered ON series (status, discovered_at DESC);
CREATE INDEX IF NOT EXISTS series_trgm ON series USING gin (
    ((series_id COLLATE "default") || E'\n' || title) gin_trgm_ops
);

CREATE TABLE IF NOT EXISTS events (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    exchange      TEXT COLLATE "C" NOT NULL,
    event_id      TEXT COLLATE "C" NOT NULL,
    series_id     TEXT COLLATE "C" NOT NULL,
    title         TEXT   NOT NULL,
    subtitle      TEXT,
    slug          TEXT,
    url           TEXT,
    image_url     TEXT,
    category      TEXT,
    status        TEXT   NOT NULL,
    interval_code TEXT,
    window_start  BIGINT,
    window_end    BIGINT,
    volume_24h    BIGINT,
    discovered_at BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    UNIQUE (exchange, event_id)
);

CREATE INDEX IF NOT EXISTS events_series ON events (exchange, series_id, status, window_start, window_end);
CREATE INDEX IF NOT EXISTS events_event_id ON events (event_id);
CREATE INDEX IF NOT EXISTS events_status_discovered ON events (status, discovered_at DESC, event_id, exchange);
CREATE INDEX IF NOT EXISTS events_trgm ON events USING gin (
    ((event_id COLLATE "default") || E'\n' || title || E'\n' || coalesce(subtitle, '')) gin_trgm_ops
);

CREATE TABLE IF NOT EXISTS markets (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    exchange       TEXT COLLATE "C" NOT NULL,
    market_id      TEXT COLLATE "C" NOT NULL,
    event_id       TEXT COLLATE "C" NOT NULL,
    series_id      TEXT COLLATE "C" NOT NULL,
    title          TEXT,
    subtitle       TEXT,
    question       TEXT   NOT NULL,
    description    TEXT,
    slug           TEXT,
    url            TEXT,
    category       TEXT,
    status         TEXT   NOT NULL,
    interval_code  TEXT,
    window_start   BIGINT,
    window_end     BIGINT,
    volume         BIGINT NOT NULL,
    volume_24h     BIGINT NOT NULL,
    liquidity      BIGINT NOT NULL,
    open_interest  BIGINT NOT NULL,
    last_yes_price BIGINT,
    last_no_price  BIGINT,
    settled_at     BIGINT,
    source_id      TEXT COLLATE "C",
    yes_token_id   TEXT COLLATE "C",
    no_token_id    TEXT COLLATE "C",
    discovered_at  BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    UNIQUE (exchange, market_id)
);

CREATE INDEX IF NOT EXISTS markets_event ON markets (exchange, event_id);
CREATE INDEX IF NOT EXISTS markets_series ON markets (series_id, status, discovered_at DESC);
CREATE INDEX IF NOT EXISTS markets_source ON markets (exchange, source_id) WHERE source_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS markets_interval ON markets (interval_code) WHERE interval_code IS NOT NULL;
CREATE INDEX IF NOT EXISTS markets_market_id_lower ON markets (lower(market_id));
CREATE INDEX IF NOT EXISTS markets_status_volume ON markets (status, volume DESC, market_id, exchange);
CREATE INDEX IF NOT EXISTS markets_status_liquidity ON markets (status, liquidity DESC, market_id, exchange);
CREATE INDEX IF NOT EXISTS markets_status_discovered ON markets (status, discovered_at DESC, market_id, exchange);
CREATE INDEX IF NOT EXISTS markets_trgm ON markets USING gin (
    ((market_id COLLATE "default") || E'\n' || coalesce(title, '') || E'\n' || coalesce(subtitle, '') || E'\n'
        || question || E'\n' || coalesce(description, '') || E'\n' || coalesce(slug, '')) gin_trgm_ops
);

CREATE TABLE IF NOT EXISTS customers (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       TEXT   NOT NULL UNIQUE,
    created_at BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS api_keys (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id BIGINT NOT NULL REFERENCES customers (id),
    key_hash    BYTEA  NOT NULL UNIQUE,
    prefix      TEXT COLLATE "C" NOT NULL,
    plan        TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    revoked_at  BIGINT
);

CREATE INDEX IF NOT EXISTS api_keys_prefix ON api_keys (prefix);
CREATE INDEX IF NOT EXISTS api_keys_customer ON api_keys (customer_id);

-- One row per book and millisecond. `asset_id` is '' for venue_a books, which have no token. Ladders are
-- compact binary blobs (see codec.rs), not JSON.
CREATE TABLE IF NOT EXISTS book_snapshots (
    exchange  TEXT COLLATE "C" NOT NULL,
    market_id TEXT COLLATE "C" NOT NULL,
    asset_id  TEXT COLLATE "C" NOT NULL,
    ts        BIGINT NOT NULL,
    bids      BYTEA  NOT NULL,
    asks      BYTEA  NOT NULL,
    no_bids   BYTEA  NOT NULL,
    PRIMARY KEY (exchange, market_id, asset_id, ts)
);

CREATE INDEX IF NOT EXISTS book_snapshots_ts ON book_snapshots (ts);

CREATE TABLE IF NOT EXISTS trades (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    exchange        TEXT COLLATE "C" NOT NULL,
    source_trade_id TEXT COLLATE "C" NOT NULL,
    market_id       TEXT COLLATE "C" NOT NULL,
    event_id        TEXT COLLATE "C" NOT NULL,
    executed_at     BIGINT NOT NULL,
    taker_side      TEXT   NOT NULL,
    outcome         TEXT   NOT NULL,
    price           BIGINT NOT NULL,
    size            BIGINT NOT NULL,
    notional        BIGINT NOT NULL,
    UNIQUE (exchange, source_trade_id)
);

CREATE INDEX IF NOT EXISTS trades_executed_at ON trades (executed_at);
CREATE INDEX IF NOT EXISTS trades_event_time ON trades (exchange, event_id, executed_at);
