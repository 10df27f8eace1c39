//! Outbound webhooks (spec 2.14, 4.5, 6; contracts §8): the registrations, one per type per customer, and the
//! log of delivery attempts.
//!
//! # Registrations
//! A registration belongs to a customer (not to a key, so rotating a key keeps it) and is identified by
//! `(customer_id, kind)`. Its signing secret is kept in clear: the dispatcher needs it to sign, and the API
//! returns it on every read (spec 2.14). Ids are never reused, so a registration deleted and created again
//! starts with an empty delivery log.
//!
//! # Delivery log
//! The dispatcher writes attempts in batches ([`WebhookStore::record_deliveries`]); each batch also trims the
//! log of every registration it touched to the newest [`DELIVERY_LOG_KEEP`] attempts. Attempts of a
//! registration deleted while they were in flight are dropped.
//!
//! The retention worker also bounds the log ([`WebhookStore::prune_deliveries`]): per registration, the newest
//! `keep` attempts and nothing older than a cutoff. It deletes in bounded batches, registration by
//! registration, each delete a short write of its own (SQLite has one writer), through the
//! `(webhook_id, id)` index of migration 0005.

use std::fmt;

use crossbook_core::Timestamp;

use crate::{
    StoreError, StoreResult,
    backend::{Backend, Exec, Pools},
    codec::Cols,
    retention::Pruned,
    sql::Sql,
};

mod postgres;
mod sqlite;

/// Attempts kept per registration (contracts §8: "the last 100 attempts").
pub const DELIVERY_LOG_KEEP: i64 = 100;

/// The two webhook types of spec 4.5, spelled `whale` and `arbitrage` on the wire and in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = WebhookTypeName, description = "A webhook type: `whale` or `arbitrage`."))]
pub enum WebhookKind {
    Whale,
    Arbitrage,
}

impl WebhookKind {
    pub const ALL: [WebhookKind; 2] = [WebhookKind::Whale, WebhookKind::Arbitrage];

    /// The path segment and stored value: `whale` or `arbitrage`.
    pub const fn as_str(self) -> &'static str {
        match self {
            WebhookKind::Whale => "whale",
            WebhookKind::Arbitrage => "arbitrage",
        }
    }

    /// The kind named `s` exactly (`whale` or `arbitrage`).
    pub fn parse(s: &str) -> Option<Self> {
        WebhookKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The event `type` delivered to this kind (spec 6.1).
    pub const fn event_type(self) -> &'static str {
        match self {
            WebhookKind::Whale => "whale.entry",
            WebhookKind::Arbitrage => "arbitrage.opportunity",
        }
    }

    /// The kind that receives events of `event_type` (spec 6.1).
    pub fn for_event_type(event_type: &str) -> Option<Self> {
        WebhookKind::ALL.into_iter().find(|k| k.event_type() == event_type)
    }
}

impl fmt::Display for WebhookKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stored registration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Webhook {
    pub id: i64,
    pub customer_id: i64,
    pub kind: WebhookKind,
    pub url: String,
    pub secret: String,
    pub enabled: bool,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// One delivery attempt, as the dispatcher reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDelivery {
    pub webhook_id: i64,
    /// The `Service-Webhook-Id` of the attempt.
    pub message_id: String,
    /// `whale.entry`, `arbitrage.opportunity` or `webhook.test`.
    pub event_type: String,
    /// The receiver's HTTP status, when it answered.
    pub status_code: Option<u16>,
    pub latency_ms: i64,
    /// Why the attempt failed (no answer, non-2xx, blocked); `None` on success.
    pub error: Option<String>,
    /// The target resolved only to forbidden addresses and was not contacted.
    pub blocked: bool,
    pub created_at: Timestamp,
}

/// A logged attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// Position in the log (increasing).
    pub seq: i64,
    pub attempt: NewDelivery,
}

/// The webhooks concern.
#[async_trait::async_trait]
pub trait WebhookStore: Send + Sync {
    /// Registers `url` for the customer's `kind`, delivering at once when `enabled`. `Ok(None)` when the
    /// customer already has one of that kind (409).
    async fn create_webhook(
        &self,
        customer_id: i64,
        kind: WebhookKind,
        url: &str,
        secret: &str,
        enabled: bool,
        at: Timestamp,
    ) -> StoreResult<Option<Webhook>>;

    /// The customer's registration of `kind`.
    async fn webhook(&self, customer_id: i64, kind: WebhookKind) -> StoreResult<Option<Webhook>>;

    /// The customer's registrations, in kind order (whale, arbitrage).
    async fn customer_webhooks(&self, customer_id: i64) -> StoreResult<Vec<Webhook>>;

    /// Changes the URL (and `enabled` when given); `Ok(None)` when the customer has no registration of `kind`.
    async fn update_webhook(
        &self,
        customer_id: i64,
        kind: WebhookKind,
        url: &str,
        enabled: Option<bool>,
        at: Timestamp,
    ) -> StoreResult<Option<Webhook>>;

    /// Deletes the registration and its delivery log; `false` when there was none.
    async fn delete_webhook(&self, customer_id: i64, kind: WebhookKind) -> StoreResult<bool>;

    /// Every enabled registration, by id (what the dispatcher delivers to).
    async fn enabled_webhooks(&self) -> StoreResult<Vec<Webhook>>;

    /// Appends attempts to the log (dropping those of deleted registrations) and trims the log of every
    /// registration in the batch to the newest [`DELIVERY_LOG_KEEP`].
    async fn record_deliveries(&self, batch: &[NewDelivery]) -> StoreResult<()>;

    /// The newest `limit` attempts of a registration, newest first.
    async fn deliveries(&self, webhook_id: i64, limit: u32) -> StoreResult<Vec<Delivery>>;

    /// Bounds the delivery log of every registration (and of any attempts left by a deleted one): removes the
    /// attempts beyond the newest `keep` (0: no count limit) and those created before `before` (`None`: no age
    /// limit). Deletes at most `max_rows` rows per call (each registration's oldest first), each delete its own
    /// short statement; call again until [`Pruned::done`]. `partitions` is always 0.
    async fn prune_deliveries(&self, keep: u32, before: Option<Timestamp>, max_rows: u32) -> StoreResult<Pruned>;
}

// ------------------------------------------------------------------------------------------------ shared SQL

const WEBHOOK_COLS: &str = "id, customer_id, kind, url, secret, enabled, created_at, updated_at";

fn webhook_row(r: &impl Cols) -> StoreResult<Webhook> {
    let kind = r.text("kind")?;
    Ok(Webhook {
        id: r.int("id")?,
        customer_id: r.int("customer_id")?,
        kind: WebhookKind::parse(&kind)
            .ok_or_else(|| StoreError::Config(format!("unknown webhook kind {kind:?} in the database")))?,
        url: r.text("url")?,
        secret: r.text("secret")?,
        enabled: r.int("enabled")? != 0,
        created_at: Timestamp::from_millis(r.int("created_at")?),
        updated_at: Timestamp::from_millis(r.int("updated_at")?),
    })
}

fn delivery_row(r: &impl Cols) -> StoreResult<Delivery> {
    Ok(Delivery {
        seq: r.int("id")?,
        attempt: NewDelivery {
            webhook_id: r.int("webhook_id")?,
            message_id: r.text("message_id")?,
            event_type: r.text("event_type")?,
            status_code: r.opt_int("status_code")?.and_then(|c| u16::try_from(c).ok()),
            latency_ms: r.int("latency_ms")?,
            error: r.opt_text("error")?,
            blocked: r.int("blocked")? != 0,
            created_at: Timestamp::from_millis(r.int("created_at")?),
        },
    })
}

fn rows_to_webhooks<R: Cols>(rows: Vec<R>) -> StoreResult<Vec<Webhook>> {
    rows.iter().map(webhook_row).collect()
}

async fn create_webhook<E: Exec>(
    ex: &E,
    customer_id: i64,
    kind: WebhookKind,
    url: &str,
    secret: &str,
    enabled: bool,
    at: Timestamp,
) -> StoreResult<Option<Webhook>> {
    let mut s =
        Sql::new("INSERT INTO webhooks (customer_id, kind, url, secret, enabled, created_at, updated_at) VALUES (");
    s.int(customer_id)
        .push(", ")
        .text(kind.as_str())
        .push(", ")
        .text(url)
        .push(", ")
        .text(secret);
    s.push(", ")
        .int(i64::from(enabled))
        .push(", ")
        .int(at.millis())
        .push(", ")
        .int(at.millis());
    s.push(&format!(
        ") ON CONFLICT (customer_id, kind) DO NOTHING RETURNING {WEBHOOK_COLS}"
    ));
    Ok(rows_to_webhooks(ex.rows(&s).await?)?.into_iter().next())
}

async fn webhook<E: Exec>(ex: &E, customer_id: i64, kind: WebhookKind) -> StoreResult<Option<Webhook>> {
    let mut s = Sql::new(&format!("SELECT {WEBHOOK_COLS} FROM webhooks WHERE customer_id = "));
    s.int(customer_id).push(" AND kind = ").text(kind.as_str());
    Ok(rows_to_webhooks(ex.rows(&s).await?)?.into_iter().next())
}

async fn customer_webhooks<E: Exec>(ex: &E, customer_id: i64) -> StoreResult<Vec<Webhook>> {
    let mut s = Sql::new(&format!("SELECT {WEBHOOK_COLS} FROM webhooks WHERE customer_id = "));
    s.int(customer_id);
    let mut hooks = rows_to_webhooks(ex.rows(&s).await?)?;
    hooks.sort_by_key(|w| w.kind);
    Ok(hooks)
}

async fn update_webhook<E: Exec>(
    ex: &E,
    customer_id: i64,
    kind: WebhookKind,
    url: &str,
    enabled: Option<bool>,
    at: Timestamp,
) -> StoreResult<Option<Webhook>> {
    let mut s = Sql::new("UPDATE webhooks SET url = ");
    s.text(url).push(", updated_at = ").int(at.millis());
    if let Some(e) = enabled {
        s.push(", enabled = ").int(i64::from(e));
    }
    s.push(" WHERE customer_id = ")
        .int(customer_id)
        .push(" AND kind = ")
        .text(kind.as_str());
    s.push(&format!(" RETURNING {WEBHOOK_COLS}"));
    Ok(rows_to_webhooks(ex.rows(&s).await?)?.into_iter().next())
}

async fn delete_webhook<E: Exec>(ex: &E, customer_id: i64, kind: WebhookKind) -> StoreResult<bool> {
    let mut s = Sql::new("DELETE FROM webhooks WHERE customer_id = ");
    s.int(customer_id)
        .push(" AND kind = ")
        .text(kind.as_str())
        .push(" RETURNING id");
    let rows = ex.rows(&s).await?;
    for r in &rows {
        let mut d = Sql::new("DELETE FROM webhook_deliveries WHERE webhook_id = ");
        d.int(r.int("id")?);
        ex.exec(&d).await?;
    }
    Ok(!rows.is_empty())
}

async fn enabled_webhooks<E: Exec>(ex: &E) -> StoreResult<Vec<Webhook>> {
    let s = Sql::new(&format!(
        "SELECT {WEBHOOK_COLS} FROM webhooks WHERE enabled = 1 ORDER BY id"
    ));
    rows_to_webhooks(ex.rows(&s).await?)
}

async fn deliveries<E: Exec>(ex: &E, webhook_id: i64, limit: u32) -> StoreResult<Vec<Delivery>> {
    let mut s = Sql::new(
        "SELECT id, webhook_id, message_id, event_type, status_code, latency_ms, error, blocked, created_at \
         FROM webhook_deliveries WHERE webhook_id = ",
    );
    s.int(webhook_id).push(" ORDER BY id DESC LIMIT ").int(i64::from(limit));
    ex.rows(&s).await?.iter().map(delivery_row).collect()
}

/// The first registration after `after` that has logged attempts (a skip over the `(webhook_id, id)` index).
async fn next_logged_webhook<E: Exec>(ex: &E, after: i64) -> StoreResult<Option<i64>> {
    let mut s = Sql::new("SELECT webhook_id FROM webhook_deliveries WHERE webhook_id > ");
    s.int(after).push(" ORDER BY webhook_id LIMIT 1");
    ex.rows(&s).await?.first().map(|r| r.int("webhook_id")).transpose()
}

/// `webhook_id = w AND (id <= bound OR created_at < before)`, with the absent parts left out (at least one is
/// present).
fn prunable(s: &mut Sql, webhook_id: i64, bound: Option<i64>, before: Option<Timestamp>) {
    s.push("webhook_id = ").int(webhook_id).push(" AND (");
    match (bound, before) {
        (Some(b), Some(t)) => s.push("id <= ").int(b).push(" OR created_at < ").int(t.millis()),
        (Some(b), None) => s.push("id <= ").int(b),
        (None, Some(t)) => s.push("created_at < ").int(t.millis()),
        (None, None) => s.push("FALSE"),
    };
    s.push(")");
}

/// [`WebhookStore::prune_deliveries`] on both backends: reads (which registrations, where the newest `keep`
/// start, whether anything is old) on `read`, deletes on `write`, one bounded statement per registration.
///
/// Per registration: the id of the `keep + 1`-th newest attempt is found with a backward scan of at most
/// `keep + 1` entries of the `(webhook_id, id)` index; every attempt at or below it goes. Age is checked on the
/// registration's rows in id order (there is no index on `created_at`; the log of a registration is short, at
/// most `keep` plus what arrived since the last pass, and the oldest rows, the likely expired ones, come first).
async fn prune_deliveries<R: Exec, W: Exec>(
    read: &R,
    write: &W,
    keep: u32,
    before: Option<Timestamp>,
    max_rows: u32,
) -> StoreResult<Pruned> {
    let mut report = Pruned {
        rows: 0,
        partitions: 0,
        done: true,
    };
    if keep == 0 && before.is_none() {
        return Ok(report);
    }
    let mut budget = i64::from(max_rows.max(1));
    let mut after = 0;
    while let Some(w) = next_logged_webhook(read, after).await? {
        after = w;
        let bound = if keep > 0 {
            let mut s = Sql::new("SELECT id FROM webhook_deliveries WHERE webhook_id = ");
            s.int(w).push(" ORDER BY id DESC LIMIT 1 OFFSET ").int(i64::from(keep));
            ex_first_id(read, &s).await?
        } else {
            None
        };
        if bound.is_none() {
            // Within `keep`: only the age rule can apply; look on the reader before taking the writer.
            let Some(t) = before else { continue };
            let mut s = Sql::new("SELECT id FROM webhook_deliveries WHERE ");
            prunable(&mut s, w, None, Some(t));
            s.push(" ORDER BY id LIMIT 1");
            if ex_first_id(read, &s).await?.is_none() {
                continue;
            }
        }
        let mut s = Sql::new("DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE ");
        prunable(&mut s, w, bound, before);
        s.push(" ORDER BY id LIMIT ").int(budget).push(")");
        let n = write.exec(&s).await?;
        report.rows += n;
        budget -= i64::try_from(n).unwrap_or(i64::MAX);
        if budget <= 0 {
            // The budget is spent: more may remain, here or in later registrations.
            report.done = false;
            return Ok(report);
        }
    }
    Ok(report)
}

async fn ex_first_id<E: Exec>(ex: &E, s: &Sql) -> StoreResult<Option<i64>> {
    ex.rows(s).await?.first().map(|r| r.int("id")).transpose()
}

/// Inserts one attempt unless its registration is gone (`$1` … `$9` in column order).
const INSERT_DELIVERY: &str = "INSERT INTO webhook_deliveries \
    (webhook_id, message_id, event_type, status_code, latency_ms, error, blocked, created_at) \
    SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = $1)";

/// Deletes all but the newest [`DELIVERY_LOG_KEEP`] attempts of registration `$1`.
fn trim_deliveries_sql() -> String {
    format!(
        "DELETE FROM webhook_deliveries WHERE webhook_id = $1 AND id <= \
         (SELECT id FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id DESC LIMIT 1 OFFSET {DELIVERY_LOG_KEEP})"
    )
}

/// The distinct registrations of a batch, in first-seen order.
fn webhooks_in(batch: &[NewDelivery]) -> Vec<i64> {
    let mut ids: Vec<i64> = batch.iter().map(|d| d.webhook_id).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// Reads on the reader pool, writes on the writer; pruning reads on the reader and deletes in short statements
/// on the writer, so ingestion's writes interleave. Only the batch of attempts is written per dialect.
#[async_trait::async_trait]
impl<B: Backend> WebhookStore for B {
    async fn create_webhook(
        &self,
        customer_id: i64,
        kind: WebhookKind,
        url: &str,
        secret: &str,
        enabled: bool,
        at: Timestamp,
    ) -> StoreResult<Option<Webhook>> {
        create_webhook(self.writer(), customer_id, kind, url, secret, enabled, at).await
    }

    async fn webhook(&self, customer_id: i64, kind: WebhookKind) -> StoreResult<Option<Webhook>> {
        webhook(self.reader(), customer_id, kind).await
    }

    async fn customer_webhooks(&self, customer_id: i64) -> StoreResult<Vec<Webhook>> {
        customer_webhooks(self.reader(), customer_id).await
    }

    async fn update_webhook(
        &self,
        customer_id: i64,
        kind: WebhookKind,
        url: &str,
        enabled: Option<bool>,
        at: Timestamp,
    ) -> StoreResult<Option<Webhook>> {
        update_webhook(self.writer(), customer_id, kind, url, enabled, at).await
    }

    async fn delete_webhook(&self, customer_id: i64, kind: WebhookKind) -> StoreResult<bool> {
        delete_webhook(self.writer(), customer_id, kind).await
    }

    async fn enabled_webhooks(&self) -> StoreResult<Vec<Webhook>> {
        enabled_webhooks(self.reader()).await
    }

    async fn record_deliveries(&self, batch: &[NewDelivery]) -> StoreResult<()> {
        if batch.is_empty() {
            return Ok(());
        }
        match self.pools() {
            Pools::Sqlite { write, .. } => sqlite::record_deliveries(write, batch).await,
            Pools::Postgres(pool) => postgres::record_deliveries(pool, batch).await,
        }
    }

    async fn deliveries(&self, webhook_id: i64, limit: u32) -> StoreResult<Vec<Delivery>> {
        deliveries(self.reader(), webhook_id, limit).await
    }

    async fn prune_deliveries(&self, keep: u32, before: Option<Timestamp>, max_rows: u32) -> StoreResult<Pruned> {
        prune_deliveries(self.reader(), self.writer(), keep, before, max_rows).await
    }
}
