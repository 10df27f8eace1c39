-- crossbook schema, SQLite flavour.
--
-- Conventions shared with the PostgreSQL schema: times are INTEGER Unix milliseconds, money and sizes are
-- INTEGER micro-units (1e-6), and every identifier a venue gives us stays TEXT (venue_b token ids have 78
-- digits). Tables are STRICT so a wrongly typed bind fails loudly instead of being stored as text.
--
-- Text search uses FTS5 with the trigram tokenizer: case-insensitive substring search served by an index.
-- The FTS tables are kept in sync by the triggers below. The update triggers fire only when a searchable
-- column really changed, because ingestion re-upserts every market each sync cycle to refresh prices and volumes.
--
-- Every statement is idempotent (IF NOT EXISTS), so replaying this file is harmless.

CREATE TABLE IF NOT EXISTS series (
    id            INTEGER PRIMARY KEY,
    exchange      TEXT    NOT NULL,
    series_id     TEXT    NOT NULL,
    title         TEXT    NOT NULL,
    slug          TEXT,
    url           TEXT,
    category      TEXT,
    status        TEXT    NOT NULL,
    discovered_at INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    UNIQUE (exchange, series_id)
) STRICT;

CREATE INDEX IF NOT EXISTS series_status_discovered ON series (status, discovered_at DESC);

CREATE VIRTUAL TABLE IF NOT EXISTS series_fts USING fts5(
    series_id, title,
    content = 'series', content_rowid = 'id', tokenize = 'trigram'
);

CREATE TRIGGER IF NOT EXISTS series_fts_ai AFTER INSERT ON series BEGIN
    INSERT INTO series_fts (rowid, series_id, title) VALUES (new.id, new.series_id, new.title);
END;
CREATE TRIGGER IF NOT EXISTS series_fts_ad AFTER DELETE ON series BEGIN
    INSERT INTO series_fts (series_fts, rowid, series_id, title) VALUES ('delete', old.id, old.series_id, old.title);
END;
CREATE TRIGGER IF NOT EXISTS series_fts_au AFTER UPDATE ON series
WHEN old.series_id IS NOT new.series_id OR old.title IS NOT new.title
BEGIN
    INSERT INTO series_fts (series_fts, rowid, series_id, title) VALUES ('delete', old.id, old.series_id, old.title);
    INSERT INTO series_fts (rowid, series_id, title) VALUES (new.id, new.series_id, new.title);
END;

CREATE TABLE IF NOT EXISTS events (
    id            INTEGER PRIMARY KEY,
    exchange      TEXT    NOT NULL,
    event_id      TEXT    NOT NULL,
    series_id     TEXT    NOT NULL,
    title         TEXT    NOT NULL,
    subtitle      TEXT,
    slug          TEXT,
    url           TEXT,
    image_url     TEXT,
    category      TEXT,
    status        TEXT    NOT NULL,
    interval_code TEXT,
    window_start  INTEGER,
    window_end    INTEGER,
    volume_24h    INTEGER,
    discovered_at INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    UNIQUE (exchange, event_id)
) STRICT;

-- Series aggregates (counts, first window start, last window end) are answered from this index alone.
CREATE INDEX IF NOT EXISTS events_series ON events (exchange, series_id, status, window_start, window_end);
CREATE INDEX IF NOT EXISTS events_event_id ON events (event_id);
CREATE INDEX IF NOT EXISTS events_status_discovered ON events (status, discovered_at DESC, event_id, exchange);

CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5(
    event_id, title, subtitle,
    content = 'events', content_rowid = 'id', tokenize = 'trigram'
);

CREATE TRIGGER IF NOT EXISTS events_fts_ai AFTER INSERT ON events BEGIN
    INSERT INTO events_fts (rowid, event_id, title, subtitle) VALUES (new.id, new.event_id, new.title, new.subtitle);
END;
CREATE TRIGGER IF NOT EXISTS events_fts_ad AFTER DELETE ON events BEGIN
    INSERT INTO events_fts (events_fts, rowid, event_id, title, subtitle)
    VALUES ('delete', old.id, old.event_id, old.title, old.subtitle);
END;
CREATE TRIGGER IF NOT EXISTS events_fts_au AFTER UPDATE ON events
WHEN old.event_id IS NOT new.event_id OR old.title IS NOT new.title OR old.subtitle IS NOT new.subtitle
BEGIN
    INSERT INTO events_fts (events_fts, rowid, event_id, title, subtitle)
    VALUES ('delete', old.id, old.event_id, old.title, old.subtitle);
    INSERT INTO events_fts (rowid, event_id, title, subtitle) VALUES (new.id, new.event_id, new.title, new.subtitle);
END;

CREATE TABLE IF NOT EXISTS markets (
    id             INTEGER PRIMARY KEY,
    exchange       TEXT    NOT NULL,
    market_id      TEXT    NOT NULL,
    event_id       TEXT    NOT NULL,
    series_id      TEXT    NOT NULL,
    title          TEXT,
    subtitle       TEXT,
    question       TEXT    NOT NULL,
    description    TEXT,
    slug           TEXT,
    url            TEXT,
    category       TEXT,
    status         TEXT    NOT NULL,
    interval_code  TEXT,
    window_start   INTEGER,
    window_end     INTEGER,
    volume         INTEGER NOT NULL,
    volume_24h     INTEGER NOT NULL,
    liquidity      INTEGER NOT NULL,
    open_interest  INTEGER NOT NULL,
    last_yes_price INTEGER,
    last_no_price  INTEGER,
    settled_at     INTEGER,
    source_id      TEXT,
    yes_token_id   TEXT,
    no_token_id    TEXT,
    discovered_at  INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    UNIQUE (exchange, market_id)
) STRICT;

CREATE INDEX IF NOT EXISTS markets_event ON markets (exchange, event_id);
CREATE INDEX IF NOT EXISTS markets_series ON markets (series_id, status, discovered_at DESC);
CREATE INDEX IF NOT EXISTS markets_source ON markets (exchange, source_id) WHERE source_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS markets_interval ON markets (interval_code) WHERE interval_code IS NOT NULL;
-- Exact id matches rank first in search, case-insensitively.
-- Exact id matches rank first in search, case-insensitively.
CREATE INDEX IF NOT EXISTS markets_market_id_nocase ON markets (market_id COLLATE NOCASE);
-- The headline (title, or the question when there is none) ranks second when it starts with the needle: a
-- case-insensitive range on this index finds those rows.
CREATE INDEX IF NOT EXISTS markets_headline_nocase ON markets (coalesce(title, question) COLLATE NOCASE);
-- One index per sort order of the market search and the recent route: a search whose text matches many
-- markets walks one of these in order and stops after a page instead of sorting every match. The volume
-- order (relevance ties break on volume) also carries the headline, so that walking it for a relevance tier
-- tests the headline from the index and reads a table row only for the rows that match.
CREATE INDEX IF NOT EXISTS markets_status_volume
    ON markets (status, volume DESC, market_id, exchange, coalesce(title, question));
CREATE INDEX IF NOT EXISTS markets_status_liquidity ON markets (status, liquidity DESC, market_id, exchange);
CREATE INDEX IF NOT EXISTS markets_status_discovered ON markets (status, discovered_at DESC, market_id, exchange);

-- Market text lives in two contentless FTS tables (rowid = markets.id), split along the relevance tiers so
-- that "how many markets have the needle in their headline" is answered from headline text alone:
-- - markets_head_fts: the headline, coalesce(title, question);
-- - markets_rest_fts: every other searchable field; `question` holds the question only when the market has
--   a title (otherwise the question is the headline and already indexed there).
CREATE VIRTUAL TABLE IF NOT EXISTS markets_head_fts USING fts5(
    headline,
    content = '', contentless_delete = 1, tokenize = 'trigram'
);
CREATE VIRTUAL TABLE IF NOT EXISTS markets_rest_fts USING fts5(
    market_id, subtitle, question, description, slug,
    content = '', contentless_delete = 1, tokenize = 'trigram'
);

CREATE TRIGGER IF NOT EXISTS markets_fts_ai AFTER INSERT ON markets BEGIN
    INSERT INTO markets_head_fts (rowid, headline) VALUES (new.id, coalesce(new.title, new.question));
    INSERT INTO markets_rest_fts (rowid, market_id, subtitle, question, description, slug)
    VALUES (new.id, new.market_id, new.subtitle, CASE WHEN new.title IS NULL THEN NULL ELSE new.question END,
            new.description, new.slug);
END;
CREATE TRIGGER IF NOT EXISTS markets_fts_ad AFTER DELETE ON markets BEGIN
    DELETE FROM markets_head_fts WHERE rowid = old.id;
    DELETE FROM markets_rest_fts WHERE rowid = old.id;
END;
CREATE TRIGGER IF NOT EXISTS markets_fts_au AFTER UPDATE ON markets
WHEN old.market_id IS NOT new.market_id OR old.title IS NOT new.title OR old.subtitle IS NOT new.subtitle
  OR old.question IS NOT new.question OR old.description IS NOT new.description OR old.slug IS NOT new.slug
BEGIN
    DELETE FROM markets_head_fts WHERE rowid = old.id;
    DELETE FROM markets_rest_fts WHERE rowid = old.id;
    INSERT INTO markets_head_fts (rowid, headline) VALUES (new.id, coalesce(new.title, new.question));
    INSERT INTO markets_rest_fts (rowid, market_id, subtitle, question, description, slug)
    VALUES (new.id, new.market_id, new.subtitle, CASE WHEN new.title IS NULL THEN NULL ELSE new.question END,
            new.description, new.slug);
END;

CREATE TABLE IF NOT EXISTS customers (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS api_keys (
    id          INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers (id),
    key_hash    BLOB    NOT NULL UNIQUE,
    prefix      TEXT    NOT NULL,
    plan        TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    revoked_at  INTEGER
) STRICT;

CREATE INDEX IF NOT EXISTS api_keys_prefix ON api_keys (prefix);
CREATE INDEX IF NOT EXISTS api_keys_customer ON api_keys (customer_id);

-- One row per book and millisecond; clustered by book then time (WITHOUT ROWID), so reading a time range of
-- one book touches contiguous pages. `asset_id` is '' for venue_a books, which have no token. Ladders are
-- compact binary blobs (see codec.rs), not JSON.
CREATE TABLE IF NOT EXISTS book_snapshots (
    exchange  TEXT    NOT NULL,
    market_id TEXT    NOT NULL,
    asset_id  TEXT    NOT NULL,
    ts        INTEGER NOT NULL,
    bids      BLOB    NOT NULL,
    asks      BLOB    NOT NULL,
    no_bids   BLOB    NOT NULL,
    PRIMARY KEY (exchange, market_id, asset_id, ts)
) STRICT, WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS book_snapshots_ts ON book_snapshots (ts);

CREATE TABLE IF NOT EXISTS trades (
    id              INTEGER PRIMARY KEY,
    exchange        TEXT    NOT NULL,
    source_trade_id TEXT    NOT NULL,
    market_id       TEXT    NOT NULL,
    event_id        TEXT    NOT NULL,
    executed_at     INTEGER NOT NULL,
    taker_side      TEXT    NOT NULL,
    outcome         TEXT    NOT NULL,
    price           INTEGER NOT NULL,
    size            INTEGER NOT NULL,
    notional        INTEGER NOT NULL,
    UNIQUE (exchange, source_trade_id)
) STRICT;

CREATE INDEX IF NOT EXISTS trades_executed_at ON trades (executed_at);
CREATE INDEX IF NOT EXISTS trades_event_time ON trades (exchange, event_id, executed_at);
