//! Storage of crossbook: one folder per concern, each implemented once for both backends.
//!
//! # Layout
//! - [`catalog`]: series, events, markets (and venue_b tokens) with `discovered_at`, and catalog search.
//! - [`keys`]: customers and API keys (stored hashed).
//! - [`books`]: the book event log: every book change as chunks of compact events ([`books::chunk`]),
//!   appended in time order (`write`), read by book and time (`read`, and the order-book rows of
//!   [`books::history`]), compacted in the background (`compact`).
//! - [`snapshots`]: the sampled order-book snapshots that databases written before the log hold.
//! - [`trades`]: trades, stored once per venue trade id.
//! - [`arbitrage`]: recorded opportunity episodes, pair overrides, the scanner's catalog view.
//! - [`whales`]: whale watchlists, the whale-trade reads of the feeds and stats, the daily public pool.
//! - [`webhooks`]: webhook registrations and their delivery log.
//! - [`backtests`]: backtest runs, their status and their reports.
//! - [`lock`]: the ingest leader lock (one ingesting process at a time).
//! - [`health`]: whether writes succeed, as the writers report it (for `/readyz` and `/metrics`).
//! - `retention` (private): how old rows leave, which differs per backend (batched deletes on SQLite, daily
//!   partitions dropped whole on PostgreSQL), for the log's chunks and the snapshots.
//! - [`sqlite`] / [`postgres`]: opening each backend (pools, connection options, migrations under
//!   `migrations/`) and the [`Store`] methods that are not a concern (ping, migrate, close).
//! - `backend`, `sql`, `codec` (private): the mechanism below (pools, running statements, transactions), the
//!   statement builder, typed column access with the value decoders, and the compact ladder encoding. Each
//!   concern decodes its own rows (the catalog's in `catalog/rows.rs`).
//! - `testing` (feature `testing`): the harness that runs one test body against both backends.
//!
//! # One way to share SQL
//! Both stores implement the private `backend::Backend` trait: the dialect, the pool reads run on, the pool
//! writes run on (SQLite has one writer connection, PostgreSQL one pool for both), and `pools()`, the typed
//! pools. Each concern is a folder whose `mod.rs` holds the trait, its types, the SQL and the one
//! implementation of the trait, `impl<B: Backend> XStore for B`. Statements the dialects agree on are built
//! with the `sql` builder and run through `backend::Exec` (`rows`, `exec`, `transaction`); a method whose SQL
//! differs matches on `pools()` and calls the concern's `sqlite.rs` or `postgres.rs`, which hold only that.
//! A new concern is one more folder of the same shape; the backend files only list its migrations.
//!
//! Every backend stores times as `i64` Unix milliseconds and money as `i64` micro-units, so the SQL of the two
//! backends differs only where the dialects do (bulk writes, full-text search, partitions).
//!
//! # Search
//! Text search is served by indexes on both backends: FTS5 trigram tables on SQLite, `pg_trgm` GIN indexes on
//! PostgreSQL. Needles shorter than three characters cannot use trigrams and scan instead. A common needle
//! would make "rank every match" slow, so the market search reads relevance tiers one at a time, each from the
//! index that serves it (`catalog/sqlite.rs`, `catalog/postgres.rs`).
#![forbid(unsafe_code)]

use std::sync::Arc;

// Lets `testing.rs` name this crate as `crossbook_store::…` both when compiled here and when an integration
// test includes it directly.
extern crate self as crossbook_store;

pub mod arbitrage;
mod backend;
pub mod backtests;
pub mod books;
pub mod catalog;
mod codec;
mod error;
pub mod health;
pub mod keys;
/// The keys concern under its earlier name, which callers still use.
pub use keys as accounts;
pub mod lock;
pub mod postgres;
mod retention;
pub mod snapshots;
mod sql;
pub mod sqlite;
#[cfg(feature = "testing")]
pub mod testing;
pub mod trades;
pub mod webhooks;
pub mod whales;

pub use arbitrage::{ArbitrageStore, HistoryPage, HistoryQuery, StoredOverride, StoredRejection};
pub use backtests::{BacktestStatus, BacktestStore, StoredBacktest};
pub use books::history::{BookHistoryQuery, HistoryWindow};
pub use books::{
    BookLogStore, ChunkEnd, ChunkOutline, Compacted, CorruptChunk, EndState, LogHead, LogOutline, LogPage, LogRead,
    LogRun, StoredGap,
};
pub use catalog::{
    CatalogStore, EventQuery, EventSort, EventSummary, MarketQuery, MarketSort, RecentQuery, SeriesQuery, SeriesSort,
    SeriesSummary, StoredMarket,
};
pub use codec::{decode_ladder, encode_ladder};
pub use error::{StoreError, StoreResult};
pub use health::{WriteHealth, WriteKind, WriteStatus};
pub use keys::{AccountStore, ApiKeyInfo, KeyOwner, NewKey};
pub use lock::{LeaderGuard, LeaderLock};
pub use retention::{DAY_MS, Pruned};
pub use snapshots::SnapshotStore;
pub use trades::{StoredTrade, TradeCursor, TradeQuery, TradeStore};
pub use webhooks::{Delivery, NewDelivery, Webhook, WebhookKind, WebhookStore};
pub use whales::{
    EventActivity, MarketWhales, MarketWhalesPage, PoolCandidate, TargetStats, WatchEntry, WhaleAggregate, WhalePage,
    WhaleQuery, WhaleStore, WhaleTarget, WhaleTrade,
};

/// The whole store: every concern, one backend. Handlers and workers hold an `Arc<dyn Store>`.
#[async_trait::async_trait]
pub trait Store:
    CatalogStore
    + AccountStore
    + SnapshotStore
    + BookLogStore
    + TradeStore
    + ArbitrageStore
    + LeaderLock
    + WhaleStore
    + WebhookStore
    + BacktestStore
    + Send
    + Sync
    + 'static
{
    /// `"sqlite"` or `"postgres"`.
    fn backend(&self) -> &'static str;
    /// Cheap round trip to the database (for `/readyz`).
    async fn ping(&self) -> StoreResult<()>;
    /// Applies this backend's migrations; safe to run again.
    async fn migrate(&self) -> StoreResult<()>;
    /// Closes the pools after pending writes.
    async fn close(&self);
    /// What this store's writers report about their writes (see [`health`]).
    fn write_health(&self) -> &WriteHealth;
}

/// How [`open_with`] opens a store.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// How long a statement waits for a PostgreSQL connection before it fails with
    /// [`StoreError::Unavailable`]. While the server is down every wait runs to this deadline, so it bounds how
    /// long a request takes to answer 503 then. (SQLite connections are local and never unreachable.)
    pub acquire_timeout: std::time::Duration,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            acquire_timeout: postgres::CONNECT_TIMEOUT,
        }
    }
}

/// Opens the store named by `url`: `sqlite://path` (file and folder created if absent; `sqlite::memory:` for
/// a private in-memory database) or `postgres://…`. Does not migrate.
pub async fn open(url: &str) -> StoreResult<Arc<dyn Store>> {
    open_with(url, &OpenOptions::default()).await
}

/// [`open`] with `options`.
pub async fn open_with(url: &str, options: &OpenOptions) -> StoreResult<Arc<dyn Store>> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(sqlite::SqliteStore::open(url).await?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(postgres::PgStore::open_with(url, options).await?))
    } else {
        Err(StoreError::Config(format!(
            "unsupported database URL {} (expected sqlite://… or postgres://…)",
            redact_url(url)
        )))
    }
}

/// The URL without its password, for messages.
pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => url.to_string(),
    }
}
