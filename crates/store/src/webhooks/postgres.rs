//! Webhook deliveries on PostgreSQL: a batch of attempts is sent as arrays (`UNNEST`) in one statement and
//! trimmed in another, in one transaction.

use sqlx::postgres::PgPool;

use super::{DELIVERY_LOG_KEEP, NewDelivery, webhooks_in};
use crate::StoreResult;

/// The batch insert: one row per array position, in batch order (ids follow it), skipping registrations that no
/// longer exist.
const INSERT_DELIVERIES: &str = "INSERT INTO webhook_deliveries \
    (webhook_id, message_id, event_type, status_code, latency_ms, error, blocked, created_at) \
    SELECT u.webhook_id, u.message_id, u.event_type, u.status_code, u.latency_ms, u.error, u.blocked, u.created_at \
    FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::TEXT[], $4::BIGINT[], $5::BIGINT[], $6::TEXT[], $7::BIGINT[], $8::BIGINT[]) \
    WITH ORDINALITY AS u (webhook_id, message_id, event_type, status_code, latency_ms, error, blocked, created_at, n) \
    WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.id = u.webhook_id) ORDER BY u.n";

/// Deletes all but the newest attempts of every registration in `$1` in one statement.
fn trim_sql() -> String {
    format!(
        "DELETE FROM webhook_deliveries d USING (SELECT id, row_number() OVER (PARTITION BY webhook_id ORDER BY id DESC) \
         AS rn FROM webhook_deliveries WHERE webhook_id = ANY($1)) x WHERE d.id = x.id AND x.rn > {DELIVERY_LOG_KEEP}"
    )
}

pub(super) async fn record_deliveries(pool: &PgPool, batch: &[NewDelivery]) -> StoreResult<()> {
    let trim = trim_sql();
    let mut tx = pool.begin().await?;
    sqlx::query(INSERT_DELIVERIES)
        .bind(batch.iter().map(|d| d.webhook_id).collect::<Vec<_>>())
        .bind(batch.iter().map(|d| d.message_id.clone()).collect::<Vec<_>>())
        .bind(batch.iter().map(|d| d.event_type.clone()).collect::<Vec<_>>())
        .bind(batch.iter().map(|d| d.status_code.map(i64::from)).collect::<Vec<_>>())
        .bind(batch.iter().map(|d| d.latency_ms).collect::<Vec<_>>())
        .bind(batch.iter().map(|d| d.error.clone()).collect::<Vec<_>>())
        .bind(batch.iter().map(|d| i64::from(d.blocked)).collect::<Vec<_>>())
        .bind(batch.iter().map(|d| d.created_at.millis()).collect::<Vec<_>>())
        .execute(&mut *tx)
        .await?;
    sqlx::query(sqlx::AssertSqlSafe(trim.as_str()))
        .bind(webhooks_in(batch))
        .execute(&mut *tx)
        .await?;
    Ok(tx.commit().await?)
}
