//! The PostgreSQL backend (`postgres://…`), for several API processes sharing one database.
//!
//! Same behaviour as SQLite, written with the same statements where the dialects agree (see `backend.rs`).
//! Differences: bulk writes send whole batches as arrays (`UNNEST`) in one round trip, since a network round
//! trip per row would dominate ingestion; text search relies on `pg_trgm` GIN indexes and the planner, so
//! every search is a single statement.

use std::{collections::HashMap, str::FromStr, sync::Arc, time::Duration};

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

use crate::{
    Store, StoreError, StoreResult, WriteHealth,
    backend::{self, Backend, Pools},
    sql::Dialect,
};

const D: Dialect = Dialect::Postgres;

/// How long opening the pool or waiting for a connection may take before the database counts as unavailable.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The PostgreSQL store: one pool for reads and writes (PostgreSQL has row-level locking).
#[derive(Debug, Clone)]
pub struct PgStore {
    pub(crate) pool: PgPool,
    health: Arc<WriteHealth>,
}

/// This backend's migrations, in order. Each later concern adds its own numbered file here; a migration once
/// released is never edited (sqlx checks its checksum).
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "init", include_str!("../migrations/postgres/0001_init.sql")),
    (
        2,
        "historical",
        include_str!("../migrations/postgres/0002_historical.sql"),
    ),
    (
        3,
        "arbitrage",
        include_str!("../migrations/postgres/0003_arbitrage.sql"),
    ),
    (4, "whales", include_str!("../migrations/postgres/0004_whales.sql")),
    (5, "webhooks", include_str!("../migrations/postgres/0005_webhooks.sql")),
    (
        6,
        "search_tiers",
        include_str!("../migrations/postgres/0006_search_tiers.sql"),
    ),
    (7, "book_log", include_str!("../migrations/postgres/0007_book_log.sql")),
    (
        8,
        "book_log_chunk_ends",
        include_str!("../migrations/postgres/0008_book_log_chunk_ends.sql"),
    ),
    (
        9,
        "book_log_hot_index_seq",
        include_str!("../migrations/postgres/0009_book_log_hot_index_seq.sql"),
    ),
    (
        10,
        "trades_market_time",
        include_str!("../migrations/postgres/0010_trades_market_time.sql"),
    ),
    (
        11,
        "market_data",
        include_str!("../migrations/postgres/0011_market_data.sql"),
    ),
    (
        12,
        "arbitrage_fee_model",
        include_str!("../migrations/postgres/0012_arbitrage_fee_model.sql"),
    ),
    (13, "pairs", include_str!("../migrations/postgres/0013_pairs.sql")),
    (
        14,
        "backtests",
        include_str!("../migrations/postgres/0014_backtests.sql"),
    ),
];

impl Backend for PgStore {
    type Exec = PgPool;
    const DIALECT: Dialect = D;
    fn reader(&self) -> &PgPool {
        &self.pool
    }
    fn writer(&self) -> &PgPool {
        &self.pool
    }
    fn pools(&self) -> Pools<'_> {
        Pools::Postgres(&self.pool)
    }
}

impl PgStore {
    /// Connects to `postgres://…`. An unreachable server fails within a few seconds with
    /// [`StoreError::Unavailable`]. Does not migrate.
    pub async fn open(url: &str) -> StoreResult<Self> {
        Self::open_with(url, &crate::OpenOptions::default()).await
    }

    /// [`open`](Self::open) with `options` (the pool's acquire timeout).
    pub async fn open_with(url: &str, options: &crate::OpenOptions) -> StoreResult<Self> {
        let opts = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::Config(format!("invalid PostgreSQL URL {}: {e}", crate::redact_url(url))))?
            .application_name("crossbook")
            // Searches and page reads are short: compiling a plan (estimated costs of a fallback search can
            // pass `jit_above_cost`) takes longer than running it.
            .options([("jit", "off")]);
        // One connection of its own first: when the server cannot be reached the pool would only say that it
        // timed out; this says why (connection refused, authentication failed, no such database).
        let probe = tokio::time::timeout(
            CONNECT_TIMEOUT,
            <sqlx::PgConnection as sqlx::Connection>::connect_with(&opts),
        )
        .await
        .map_err(|_| {
            StoreError::Unavailable(format!(
                "no answer from {} within {CONNECT_TIMEOUT:?}",
                crate::redact_url(url)
            ))
        })?
        .map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let _ = sqlx::Connection::close(probe).await;
        let connect = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(options.acquire_timeout)
            .connect_with(opts);
        // The pool's own deadline covers acquiring; this one also covers a TCP connect that never completes.
        let pool = tokio::time::timeout(
            options.acquire_timeout.max(CONNECT_TIMEOUT) + Duration::from_secs(1),
            connect,
        )
        .await
        .map_err(|_| StoreError::Unavailable(format!("no answer from {}", crate::redact_url(url))))??;
        Ok(PgStore {
            pool,
            health: Arc::default(),
        })
    }
}

#[async_trait::async_trait]
impl Store for PgStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    async fn migrate(&self) -> StoreResult<()> {
        Ok(backend::migrator(MIGRATIONS).run(&self.pool).await?)
    }

    fn write_health(&self) -> &WriteHealth {
        &self.health
    }

    async fn close(&self) {
        self.pool.close().await;
    }
}

/// The last occurrence of each key wins, the order of first appearance is kept: a batch that names one item
/// twice means "the later state".
pub(crate) fn last_per_key<T, K: std::hash::Hash + Eq>(items: &[T], key: impl Fn(&T) -> K) -> Vec<&T> {
    let mut index: HashMap<K, usize> = HashMap::with_capacity(items.len());
    let mut out: Vec<&T> = Vec::with_capacity(items.len());
    for it in items {
        match index.entry(key(it)) {
            std::collections::hash_map::Entry::Occupied(o) => out[*o.get()] = it,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(out.len());
                out.push(it);
            }
        }
    }
    out
}
