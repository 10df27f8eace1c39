-- Outbound webhooks (spec 2.14, 4.5, 6; contracts §8): one registration per type per customer, and the log of
-- delivery attempts, of which the newest few per registration are kept. Flags are 0/1 BIGINTs so both
-- backends decode rows with the same code.

CREATE TABLE IF NOT EXISTS webhooks (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id BIGINT NOT NULL REFERENCES customers (id),
    kind        TEXT   NOT NULL CHECK (kind IN ('whale', 'arbitrage')),
    url         TEXT   NOT NULL,
    secret      TEXT   NOT NULL,
    enabled     BIGINT NOT NULL CHECK (enabled IN (0, 1)),
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    UNIQUE (customer_id, kind)
);

CREATE INDEX IF NOT EXISTS webhooks_enabled ON webhooks (kind, enabled);

-- No foreign key to `webhooks`: attempts are written in batches after the fact, and a registration deleted in
-- the meantime must not fail the batch. Inserts skip attempts of deleted registrations; deleting a registration
-- deletes its attempts.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id  BIGINT NOT NULL,
    message_id  TEXT   NOT NULL,
    event_type  TEXT   NOT NULL,
    status_code BIGINT,
    latency_ms  BIGINT NOT NULL,
    error       TEXT,
    blocked     BIGINT NOT NULL CHECK (blocked IN (0, 1)),
    created_at  BIGINT NOT NULL
);

CREATE INDEX IF NOT EXISTS webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, id);
