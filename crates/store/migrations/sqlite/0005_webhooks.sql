-- Outbound webhooks (spec 2.14, 4.5, 6; contracts §8): one registration per type per customer, and the log of
-- delivery attempts, of which the newest few per registration are kept.

-- AUTOINCREMENT so that an id is never reused after a delete: a re-created registration must not inherit the
-- delivery log of the one it replaces.
CREATE TABLE IF NOT EXISTS webhooks (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    customer_id INTEGER NOT NULL REFERENCES customers (id),
    kind        TEXT    NOT NULL CHECK (kind IN ('whale', 'arbitrage')),
    url         TEXT    NOT NULL,
    secret      TEXT    NOT NULL,
    enabled     INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (customer_id, kind)
) STRICT;

-- The dispatcher reads every enabled registration of a kind.
CREATE INDEX IF NOT EXISTS webhooks_enabled ON webhooks (kind, enabled);

-- No foreign key to `webhooks`: attempts are written in batches after the fact, and a registration deleted in
-- the meantime must not fail the batch. Inserts skip attempts of deleted registrations; deleting a registration
-- deletes its attempts.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id          INTEGER PRIMARY KEY,
    webhook_id  INTEGER NOT NULL,
    message_id  TEXT    NOT NULL,
    event_type  TEXT    NOT NULL,
    status_code INTEGER,
    latency_ms  INTEGER NOT NULL,
    error       TEXT,
    blocked     INTEGER NOT NULL CHECK (blocked IN (0, 1)),
    created_at  INTEGER NOT NULL
) STRICT;

CREATE INDEX IF NOT EXISTS webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, id);
