-- Backtests (`POST /v1/backtests`, `crossbook backtest`): one row per run. A run writes its report once, in
-- the same statement that marks it done, so a run that stops part-way leaves no partial report. `updated_at`
-- moves while the run works; a running row whose `updated_at` stops moving belongs to a process that stopped.
CREATE TABLE IF NOT EXISTS backtests (
    id          TEXT    PRIMARY KEY,
    customer_id INTEGER NOT NULL,
    params      TEXT    NOT NULL,
    status      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    finished_at INTEGER,
    progress_at INTEGER,
    error       TEXT,
    report      BLOB
) STRICT;
CREATE INDEX IF NOT EXISTS backtests_customer ON backtests (customer_id, created_at);
