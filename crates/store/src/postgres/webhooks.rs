//! [`WebhookStore`] on PostgreSQL: the shared SQL of [`crate::webhooks`] on the pool; a batch of attempts is
//! sent as arrays (`UNNEST`) in one statement and trimmed in another, in one transaction. Pruning
//! ([`WebhookStore::prune_deliveries`]) is the shared bounded per-registration delete, on the pool.

use crossbook_core::Timestamp;

use super::PgStore;
use crate::{
    Pruned, StoreResult,
    webhooks::{self, Delivery, NewDelivery, Webhook, WebhookKind, WebhookStore},
};

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
         AS rn FROM webhook_deliveries WHERE webhook_id = ANY($1)) x WHERE d.id = x.id AND x.rn > {}",
        webhooks::DELIVERY_LOG_KEEP
    )
}

#[async_trait::async_trait]
impl WebhookStore for PgStore {
    async fn create_webhook(
        &self,
        customer_id: i64,
        kind: WebhookKind,
        url: &str,
        secret: &str,
        at: Timestamp,
    ) -> StoreResult<Option<Webhook>> {
        webhooks::create_webhook(&self.pool, customer_id, kind, url, secret, at).await
    }

    async fn webhook(&self, customer_id: i64, kind: WebhookKind) -> StoreResult<Option<Webhook>> {
        webhooks::webhook(&self.pool, customer_id, kind).await
    }

    async fn customer_webhooks(&self, customer_id: i64) -> StoreResult<Vec<Webhook>> {
        webhooks::customer_webhooks(&self.pool, customer_id).await
    }

    async fn update_webhook(
        &self,
        customer_id: i64,
        kind: WebhookKind,
        url: &str,
        enabled: Option<bool>,
        at: Timestamp,
    ) -> StoreResult<Option<Webhook>> {
        webhooks::update_webhook(&self.pool, customer_id, kind, url, enabled, at).await
    }

    async fn delete_webhook(&self, customer_id: i64, kind: WebhookKind) -> StoreResult<bool> {
        webhooks::delete_webhook(&self.pool, customer_id, kind).await
    }

    async fn enabled_webhooks(&self) -> StoreResult<Vec<Webhook>> {
        webhooks::enabled_webhooks(&self.pool).await
    }

    async fn record_deliveries(&self, batch: &[NewDelivery]) -> StoreResult<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let trim = trim_sql();
        let mut tx = self.pool.begin().await?;
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
            .bind(webhooks::webhooks_in(batch))
            .execute(&mut *tx)
            .await?;
        Ok(tx.commit().await?)
    }

    async fn deliveries(&self, webhook_id: i64, limit: u32) -> StoreResult<Vec<Delivery>> {
        webhooks::deliveries(&self.pool, webhook_id, limit).await
    }

    async fn prune_deliveries(&self, keep: u32, before: Option<Timestamp>, max_rows: u32) -> StoreResult<Pruned> {
        webhooks::prune_deliveries(&self.pool, &self.pool, keep, before, max_rows).await
    }
}
