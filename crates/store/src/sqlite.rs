//! The embedded SQLite backend (the default: `sqlite://./data/crossbook.db`).
//!
//! # Connections
//! SQLite allows one writer at a time. Writes go through a pool of exactly one connection, so concurrent
//! writers of this process queue in the pool instead of failing with `SQLITE_BUSY`; reads go through a
//! separate pool of `query_only` connections, which in WAL mode never wait for the writer. Write transactions
//! start with `BEGIN IMMEDIATE` so that another process (the `keys` command next to a running server) waits for
//! the lock through `busy_timeout` instead of failing half-way through a transaction.
//!
//! An in-memory database (`sqlite::memory:`) lives only as long as its connection, so it gets a single
//! connection that both reads and writes and is never recycled.
//!
//! This file opens the database and names the pools; each concern's SQL is in its own folder.

use std::{
    path::Path,
    str::FromStr,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use sqlx::{
    AssertSqlSafe, Connection, Executor,
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous},
};

use crate::{
    Store, StoreError, StoreResult, WriteHealth,
    backend::{self, Backend, Pools},
    sql::Dialect,
};

const D: Dialect = Dialect::Sqlite;

/// How long a connection waits for a lock held by another process before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The SQLite store: one writer connection, a pool of readers.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pub(crate) write: SqlitePool,
    pub(crate) read: SqlitePool,
    health: Arc<WriteHealth>,
    /// The writer's page cap ([`SqliteStore::set_page_limit`]); 0 when none is set.
    page_limit: Arc<AtomicU64>,
}

/// What `PRAGMA max_page_count` is set to when a cap is lifted: SQLite's largest page count.
const NO_PAGE_LIMIT: u64 = 0xffff_fffe;

/// This backend's migrations, in order. Each later concern adds its own numbered file here; a migration once
/// released is never edited (sqlx checks its checksum).
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "init", include_str!("../migrations/sqlite/0001_init.sql")),
    (3, "arbitrage", include_str!("../migrations/sqlite/0003_arbitrage.sql")),
    (4, "whales", include_str!("../migrations/sqlite/0004_whales.sql")),
    (5, "webhooks", include_str!("../migrations/sqlite/0005_webhooks.sql")),
    (
        6,
        "snapshots_without_ts_index",
        include_str!("../migrations/sqlite/0006_snapshots_without_ts_index.sql"),
    ),
    (7, "book_log", include_str!("../migrations/sqlite/0007_book_log.sql")),
    (
        8,
        "book_log_chunk_ends",
        include_str!("../migrations/sqlite/0008_book_log_chunk_ends.sql"),
    ),
    (
        9,
        "book_log_hot_index_seq",
        include_str!("../migrations/sqlite/0009_book_log_hot_index_seq.sql"),
    ),
    (
        10,
        "trades_market_time",
        include_str!("../migrations/sqlite/0010_trades_market_time.sql"),
    ),
    (
        11,
        "market_data",
        include_str!("../migrations/sqlite/0011_market_data.sql"),
    ),
    (
        12,
        "arbitrage_fee_model",
        include_str!("../migrations/sqlite/0012_arbitrage_fee_model.sql"),
    ),
    (13, "pairs", include_str!("../migrations/sqlite/0013_pairs.sql")),
    (14, "backtests", include_str!("../migrations/sqlite/0014_backtests.sql")),
];

impl Backend for SqliteStore {
    type Exec = SqlitePool;
    const DIALECT: Dialect = D;
    fn reader(&self) -> &SqlitePool {
        &self.read
    }
    fn writer(&self) -> &SqlitePool {
        &self.write
    }
    fn pools(&self) -> Pools<'_> {
        Pools::Sqlite {
            read: &self.read,
            write: &self.write,
        }
    }
}

impl SqliteStore {
    /// Opens `sqlite://path` (creating the file and its folder if absent) or `sqlite::memory:`. Does not migrate.
    pub async fn open(url: &str) -> StoreResult<Self> {
        let base = SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::Config(format!("invalid SQLite URL {url}: {e}")))?
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT)
            .synchronous(SqliteSynchronous::Normal)
            .pragma("temp_store", "memory");

        if url.contains(":memory:") || url.contains("mode=memory") {
            let pool = SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .connect_with(base)
                .await?;
            return Ok(SqliteStore {
                write: pool.clone(),
                read: pool,
                health: Arc::default(),
                page_limit: Arc::default(),
            });
        }

        if let Some(dir) = base.get_filename().parent().filter(|d| !d.as_os_str().is_empty()) {
            create_dir(dir)?;
        }
        // The writer first: it creates the file and switches it to WAL (a persistent setting) before any
        // reader opens it.
        let page_limit = Arc::new(AtomicU64::new(0));
        let limit = page_limit.clone();
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .acquire_timeout(Duration::from_secs(60))
            .idle_timeout(None)
            .max_lifetime(None)
            // A connection opened to replace one closed below keeps the page cap of the one it replaces.
            .after_connect(move |conn, _| {
                let pages = limit.load(Ordering::Relaxed);
                Box::pin(async move {
                    if pages > 0 {
                        conn.execute(AssertSqlSafe(format!("PRAGMA max_page_count = {pages}")))
                            .await?;
                    }
                    Ok(())
                })
            })
            // A statement that fails inside a transaction for want of space or I/O (SQLITE_FULL, SQLITE_IOERR)
            // can make SQLite roll the transaction back by itself. sqlx's rollback on drop then fails ("no
            // transaction is active") and leaves the connection's transaction depth at 1, after which every
            // `BEGIN IMMEDIATE` fails with "non-zero transaction depth" until a restart. The round trip lets
            // the queued rollback run first; a connection still inside a transaction is then closed, and the
            // pool opens a fresh one for the next write.
            .after_release(|conn, _| {
                Box::pin(async move {
                    conn.ping().await?;
                    if conn.is_in_transaction() {
                        tracing::warn!("the writer connection was left inside a failed transaction; reopening it");
                        return Ok(false);
                    }
                    Ok(true)
                })
            })
            .connect_with(
                base.clone()
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    .pragma("cache_size", "-32768"),
            )
            .await?;
        let readers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 8) as u32 * 2;
        let read = SqlitePoolOptions::new()
            .max_connections(readers)
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(
                base.pragma("query_only", "ON")
                    .pragma("cache_size", "-16384")
                    // Map as much of the file as SQLite allows (2 GiB in the bundled build): a search walking an
                    // index reads table rows in random order, and through the map that is a memory read rather
                    // than a system call (measured: 58 ms → 1.3 ms median on 1M markets at 256 MiB → 2 GiB).
                    .pragma("mmap_size", "2147418112"),
            )
            .await?;
        Ok(SqliteStore {
            write,
            read,
            health: Arc::default(),
            page_limit,
        })
    }

    /// Caps the database at `pages` pages (SQLite's `max_page_count`, in pages of `PRAGMA page_size`), or
    /// lifts the cap with `None`. Writes past the cap fail as on a full disk (`SQLITE_FULL`). The cap holds
    /// for the writer connection and any that replaces it, for the life of this store; SQLite never sets it
    /// below the current size. The tests of full storage use it.
    pub async fn set_page_limit(&self, pages: Option<u64>) -> StoreResult<()> {
        let pages = pages.unwrap_or(NO_PAGE_LIMIT).max(1);
        self.page_limit
            .store(if pages == NO_PAGE_LIMIT { 0 } else { pages }, Ordering::Relaxed);
        sqlx::query(AssertSqlSafe(format!("PRAGMA max_page_count = {pages}")))
            .execute(&self.write)
            .await?;
        Ok(())
    }

    /// The database's size in pages now (`PRAGMA page_count`).
    pub async fn page_count(&self) -> StoreResult<u64> {
        let n: i64 = sqlx::query_scalar("PRAGMA page_count").fetch_one(&self.write).await?;
        Ok(n as u64)
    }
}

fn create_dir(dir: &Path) -> StoreResult<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| StoreError::Config(format!("cannot create the database folder {}: {e}", dir.display())))
}

#[async_trait::async_trait]
impl Store for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1").execute(&self.read).await?;
        Ok(())
    }

    async fn migrate(&self) -> StoreResult<()> {
        Ok(backend::migrator(MIGRATIONS).run(&self.write).await?)
    }

    fn write_health(&self) -> &WriteHealth {
        &self.health
    }

    async fn close(&self) {
        // Lets SQLite refresh its planner statistics for the indexes the session used, then releases the
        // connections; the writer last, so that it checkpoints the WAL into the main file.
        let _ = sqlx::query("PRAGMA optimize").execute(&self.write).await;
        self.read.close().await;
        self.write.close().await;
    }
}
