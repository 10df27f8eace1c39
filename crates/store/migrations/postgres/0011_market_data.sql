-- OHLCV candles as stored aggregates: one row per market, span (a minute, an hour or a UTC day, in ms) and span
-- start, updated in the same transaction as the trades it sums, so a year of daily candles reads 365 rows.
-- Prices are YES prices in micro-dollars (a NO trade at p counts at 1 - p); open_at / close_at say which trade
-- opened and closed the span, so a trade stored late (a backfill) still lands in order.
CREATE TABLE IF NOT EXISTS trade_candles (
    exchange     TEXT    NOT NULL,
    market_id    TEXT    NOT NULL,
    bucket_ms    BIGINT NOT NULL,
    bucket_start BIGINT NOT NULL,
    open_price   BIGINT NOT NULL,
    open_at      BIGINT NOT NULL,
    high_price   BIGINT NOT NULL,
    low_price    BIGINT NOT NULL,
    close_price  BIGINT NOT NULL,
    close_at     BIGINT NOT NULL,
    volume       BIGINT NOT NULL,
    notional     BIGINT NOT NULL,
    trade_count  BIGINT NOT NULL,
    PRIMARY KEY (exchange, market_id, bucket_ms, bucket_start)
);

-- The trades stored before this table existed, aggregated once. Open and close are the first and last trade of
-- each span by (executed_at, id), the order later inserts keep.
INSERT INTO trade_candles (exchange, market_id, bucket_ms, bucket_start, open_price, open_at, high_price,
                           low_price, close_price, close_at, volume, notional, trade_count)
SELECT exchange, market_id, bucket_ms, bucket_start, MIN(first_yes), MIN(executed_at), MAX(yes), MIN(yes),
       MIN(last_yes), MAX(executed_at), SUM(size), SUM(notional), COUNT(*)
FROM (
    SELECT exchange, market_id, bucket_ms, bucket_start, executed_at, size, notional, yes,
           FIRST_VALUE(yes) OVER w AS first_yes,
           LAST_VALUE(yes) OVER w AS last_yes
    FROM (
        SELECT t.exchange, t.market_id, s.bucket_ms, (t.executed_at / s.bucket_ms) * s.bucket_ms AS bucket_start,
               t.executed_at, t.id, t.size, t.notional,
               CASE t.outcome WHEN 'NO' THEN 1000000 - t.price ELSE t.price END AS yes
        FROM trades t
        CROSS JOIN (SELECT 60000 AS bucket_ms UNION ALL SELECT 3600000 UNION ALL SELECT 86400000) s
    ) spans
    WINDOW w AS (PARTITION BY exchange, market_id, bucket_ms, bucket_start ORDER BY executed_at, id
                 ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
) ordered
GROUP BY exchange, market_id, bucket_ms, bucket_start;

-- A venue_b event is also found by its slug, the last part of its web address (the watchlist's add-by-URL).
CREATE INDEX IF NOT EXISTS events_slug ON events (exchange, slug);
