//! [`WebhookStore`] on SQLite: reads on the reader pool through the shared SQL of [`crate::webhooks`], writes
//! on the single writer connection; a batch of attempts is one `BEGIN IMMEDIATE` transaction. Pruning
//! ([`WebhookStore::prune_deliveries`]) reads on the reader pool and deletes in short statements on the writer,
//! so ingestion's writes interleave.

use crossbook_core::Timestamp;

use super::SqliteStore;
use crate::{
    Pruned, StoreResult,
    webhooks::{self, Delivery, NewDelivery, Webhook, WebhookKind, WebhookStore},
};

#[async_trait::async_trait]
impl WebhookStore for SqliteStore {
    async fn create_webhook(
        &self,
        customer_id: i64,
        kind: WebhookKind,
        url: &str,
        secret: &str,
        at: Timestamp,
    ) -> StoreResult<Option<Webhook>> {
        webhooks::create_webhook(&self.write, customer_id, kind, url, secret, at).await
    }

    async fn webhook(&self, customer_id: i64, kind: WebhookKind) -> StoreResult<Option<Webhook>> {
        webhooks::webhook(&self.read, customer_id, kind).await
    }

    async fn customer_webhooks(&self, customer_id: i64) -> StoreResult<Vec<Webhook>> {
        webhooks::customer_webhooks(&self.read, customer_id).await
    }

    async fn update_webhook(
        &self,
        customer_id: i64,
        kind: WebhookKind,
        url: &str,
        enabled: Option<bool>,
        at: Timestamp,
    ) -> StoreResult<Option<Webhook>> {
        webhooks::update_webhook(&self.write, customer_id, kind, url, enabled, at).await
    }

    async fn delete_webhook(&self, customer_id: i64, kind: WebhookKind) -> StoreResult<bool> {
        webhooks::delete_webhook(&self.write, customer_id, kind).await
    }

    async fn enabled_webhooks(&self) -> StoreResult<Vec<Webhook>> {
        webhooks::enabled_webhooks(&self.read).await
    }

    async fn record_deliveries(&self, batch: &[NewDelivery]) -> StoreResult<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let trim = webhooks::trim_deliveries_sql();
        let mut tx = self.begin().await?;
        for d in batch {
            sqlx::query(webhooks::INSERT_DELIVERY)
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
        for id in webhooks::webhooks_in(batch) {
            sqlx::query(sqlx::AssertSqlSafe(trim.as_str()))
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        Ok(tx.commit().await?)
    }

    async fn deliveries(&self, webhook_id: i64, limit: u32) -> StoreResult<Vec<Delivery>> {
        webhooks::deliveries(&self.read, webhook_id, limit).await
    }

    async fn prune_deliveries(&self, keep: u32, before: Option<Timestamp>, max_rows: u32) -> StoreResult<Pruned> {
        webhooks::prune_deliveries(&self.read, &self.write, keep, before, max_rows).await
    }
}
