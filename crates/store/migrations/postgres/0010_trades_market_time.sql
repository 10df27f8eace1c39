-- Replay and export read one market's trades in time order; the existing indexes are by event or by time alone.
CREATE INDEX IF NOT EXISTS trades_market_time ON trades (exchange, market_id, executed_at, id);
