//! Webhook deliveries on SQLite: a batch of attempts is one `BEGIN IMMEDIATE` transaction of per-row inserts
//! and trims on the writer connection.

use sqlx::sqlite::SqlitePool;

use super::{INSERT_DELIVERY, NewDelivery, trim_deliveries_sql, webhooks_in};
use crate::StoreResult;

pub(super) async fn record_deliveries(write: &SqlitePool, batch: &[NewDelivery]) -> StoreResult<()> {
    let trim = trim_deliveries_sql();
    let mut tx = crate::backend::sqlite_begin(write).await?;
    for d in batch {
        sqlx::query(INSERT_DELIVERY)
            .bind(d.webhook_id)
            .bind(&d.message_id)
            .bind(&d.event_type)
            .bind(d.status_code.map(i64::from))
            .bind(d.latency_ms)
            .bind(d.error.as_deref())
            .bind(i64::from(d.blocked))
            .bind(d.created_at.millis())
            .execute(&mut *tx)
            .await?;
    }
    for id in webhooks_in(batch) {
        sqlx::query(sqlx::AssertSqlSafe(trim.as_str()))
            .bind(id)
            .execute(&mut *tx)
            .await?;
    }
    Ok(tx.commit().await?)
}
