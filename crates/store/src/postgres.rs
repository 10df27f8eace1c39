//! The PostgreSQL backend (`postgres://…`), for several API processes sharing one database.
//!
//! Same behaviour as SQLite, written with the same statements where the dialects agree (see `common.rs`).
//! Differences: bulk writes send whole batches as arrays (`UNNEST`) in one round trip, since a network round
//! trip per row would dominate ingestion; text search relies on `pg_trgm` GIN indexes and the planner, so
//! every search is a single statement.

use std::{collections::HashSet, str::FromStr, time::Duration};

use crossbook_core::{BookSnapshot, Event, Exchange, Market, Plan, Series, Timestamp, Trade};
use sqlx::{
    Row,
    postgres::{PgConnectOptions, PgPool, PgPoolOptions},
};

use crate::{
    ApiKeyInfo, CatalogStore, EventQuery, EventSummary, KeyOwner, MarketQuery, NewKey, RecentQuery, SeriesQuery,
    SeriesSummary, Store, StoreError, StoreResult,
    accounts::{self, AccountStore, PREFIX_LEN},
    books::{BookStore, SnapshotQuery},
    catalog::StoredMarket,
    codec,
    backend::{self, Backend, Pools},
    common::{self, market_insert_cols, market_update_set},
    sql::{self, Dialect, Needle},
    trades::TradeStore,
};

mod history;
mod lock;
mod search;

const D: Dialect = Dialect::Postgres;

/// How long opening the pool or waiting for a connection may take before the database counts as unavailable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The PostgreSQL store: one pool for reads and writes (PostgreSQL has row-level locking).
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
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
        let opts = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::Config(format!("invalid PostgreSQL URL {}: {e}", crate::redact_url(url))))?
            .application_name("crossbook")
            // Searches and page reads are short: compiling a plan (estimated costs of a fallback search can
            // pass `jit_above_cost`) takes longer than running it.
            .options([("jit", "off")]);
        let connect = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_with(opts);
        // The pool's own deadline covers acquiring; this one also covers a TCP connect that never completes.
        let pool = tokio::time::timeout(CONNECT_TIMEOUT + Duration::from_secs(1), connect)
            .await
            .map_err(|_| StoreError::Unavailable(format!("no answer from {}", crate::redact_url(url))))??;
        Ok(PgStore { pool })
    }

    /// `EXPLAIN` of the statement a market search with `q` runs, one line per plan node. For tests and
    /// diagnostics: it shows whether the trigram indexes serve the search.
    pub async fn explain_market_search(&self, q: &MarketQuery) -> StoreResult<Vec<String>> {
        let needle = Needle::new(q.q.as_deref());
        let mut s = sql::market_search(D, q, needle.as_ref());
        s.text.insert_str(0, "EXPLAIN ");
        // Planner settings are per session: run on one connection, inside a transaction so `SET LOCAL` ends
        // with it. Sequential scans are discouraged so the answer does not depend on how few rows a test has.
        let mut tx = self.pool.begin().await?;
        sqlx::query("SET LOCAL enable_seqscan = off").execute(&mut *tx).await?;
        let rows = backend::query(&s).fetch_all(&mut *tx).await?;
        tx.rollback().await?;
        rows.iter().map(|r| Ok(r.try_get::<String, _>(0)?)).collect()
    }
}

const UPSERT_MARKETS: &str = concat!(
    "INSERT INTO markets (",
    market_insert_cols!(),
    ") SELECT u.*, $26, $26 FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], \
     $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::int8[], \
     $15::int8[], $16::int8[], $17::int8[], $18::int8[], $19::int8[], $20::int8[], $21::int8[], $22::int8[], \
     $23::text[], $24::text[], $25::text[]) AS u ON CONFLICT (exchange, market_id) DO UPDATE SET ",
    market_update_set!()
);

const INSERT_TRADES: &str = "INSERT INTO trades (exchange, source_trade_id, market_id, event_id, executed_at, \
     taker_side, outcome, price, size, notional) \
     SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[], $6::text[], $7::text[], \
     $8::int8[], $9::int8[], $10::int8[]) \
     ON CONFLICT (exchange, source_trade_id) DO NOTHING RETURNING exchange, source_trade_id";

#[async_trait::async_trait]
impl CatalogStore for PgStore {
    async fn upsert_series(&self, items: &[Series], seen_at: Timestamp) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        for s in items {
            sqlx::query(common::UPSERT_SERIES)
                .bind(s.exchange.as_str())
                .bind(&s.series_id)
                .bind(&s.title)
                .bind(s.slug.as_deref())
                .bind(s.url.as_deref())
                .bind(s.category.as_deref())
                .bind(s.status.as_str())
                .bind(seen_at.millis())
                .execute(&mut *tx)
                .await?;
        }
        Ok(tx.commit().await?)
    }

    async fn upsert_events(&self, items: &[Event], seen_at: Timestamp) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        for e in items {
            sqlx::query(common::UPSERT_EVENT)
                .bind(e.exchange.as_str())
                .bind(&e.event_id)
                .bind(&e.series_id)
                .bind(&e.title)
                .bind(e.subtitle.as_deref())
                .bind(e.slug.as_deref())
                .bind(e.url.as_deref())
                .bind(e.image_url.as_deref())
                .bind(e.category.as_deref())
                .bind(e.status.as_str())
                .bind(e.interval_code.map(|c| c.as_str()))
                .bind(e.window_start.map(Timestamp::millis))
                .bind(e.window_end.map(Timestamp::millis))
                .bind(e.volume_24h.map(|v| v.micros()))
                .bind(seen_at.millis())
                .execute(&mut *tx)
                .await?;
        }
        Ok(tx.commit().await?)
    }

    async fn upsert_markets(&self, items: &[Market], seen_at: Timestamp) -> StoreResult<()> {
        if items.is_empty() {
            return Ok(());
        }
        // One statement may not update a row twice, so a batch naming a market twice keeps its last state.
        let items = common::last_per_key(items, |m| (m.exchange, m.market_id.clone()));
        let col = |f: fn(&Market) -> Option<String>| items.iter().map(|m| f(m)).collect::<Vec<_>>();
        let int = |f: fn(&Market) -> Option<i64>| items.iter().map(|m| f(m)).collect::<Vec<_>>();
        sqlx::query(UPSERT_MARKETS)
            .bind(col(|m| Some(m.exchange.as_str().to_string())))
            .bind(col(|m| Some(m.market_id.clone())))
            .bind(col(|m| Some(m.event_id.clone())))
            .bind(col(|m| Some(m.series_id.clone())))
            .bind(col(|m| m.title.clone()))
            .bind(col(|m| m.subtitle.clone()))
            .bind(col(|m| Some(m.question.clone())))
            .bind(col(|m| m.description.clone()))
            .bind(col(|m| m.slug.clone()))
            .bind(col(|m| m.url.clone()))
            .bind(col(|m| m.category.clone()))
            .bind(col(|m| Some(m.status.as_str().to_string())))
            .bind(col(|m| m.interval_code.map(|c| c.as_str().to_string())))
            .bind(int(|m| m.window_start.map(Timestamp::millis)))
            .bind(int(|m| m.window_end.map(Timestamp::millis)))
            .bind(int(|m| Some(m.volume.micros())))
            .bind(int(|m| Some(m.volume_24h.micros())))
            .bind(int(|m| Some(m.liquidity.micros())))
            .bind(int(|m| Some(m.open_interest.micros())))
            .bind(int(|m| m.last_yes_price.map(|p| p.micros())))
            .bind(int(|m| m.last_no_price.map(|p| p.micros())))
            .bind(int(|m| m.settled_at.map(Timestamp::millis)))
            .bind(col(|m| m.source_id.clone()))
            .bind(col(|m| m.yes_token_id.clone()))
            .bind(col(|m| m.no_token_id.clone()))
            .bind(seen_at.millis())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn get_event(&self, exchange: Exchange, event_id: &str) -> StoreResult<Option<EventSummary>> {
        common::get_event(&self.pool, exchange, event_id).await
    }

    async fn find_event(&self, event_id: &str) -> StoreResult<Option<EventSummary>> {
        common::find_event(&self.pool, event_id).await
    }

    async fn get_market(&self, exchange: Exchange, market_id: &str) -> StoreResult<Option<StoredMarket>> {
        common::get_market(&self.pool, exchange, market_id).await
    }

    async fn active_markets(&self) -> StoreResult<Vec<Market>> {
        common::active_markets(&self.pool).await
    }

    async fn search_series(&self, q: &SeriesQuery) -> StoreResult<Vec<SeriesSummary>> {
        common::search_series(&self.pool, D, q).await
    }

    async fn search_events(&self, q: &EventQuery) -> StoreResult<Vec<EventSummary>> {
        common::search_events(&self.pool, D, q).await
    }

    async fn search_markets(&self, q: &MarketQuery) -> StoreResult<Vec<StoredMarket>> {
        match Needle::new(q.q.as_deref()) {
            // Within one event the event index narrows the rows to a handful: one statement is best.
            Some(n) if n.indexed && q.event_id.is_none() => self.search_markets_tiered(q, &n).await,
            n => common::search_markets_scan(&self.pool, D, q, n.as_ref()).await,
        }
    }

    async fn recent_events(&self, q: &RecentQuery) -> StoreResult<Vec<EventSummary>> {
        common::recent_events(&self.pool, q).await
    }

    async fn recent_markets(&self, q: &RecentQuery) -> StoreResult<Vec<StoredMarket>> {
        common::recent_markets(&self.pool, q).await
    }
}

#[async_trait::async_trait]
impl AccountStore for PgStore {
    async fn create_key(&self, name: &str, plan: Plan) -> StoreResult<NewKey> {
        let key = accounts::generate_key();
        let prefix: String = key.chars().take(PREFIX_LEN).collect();
        let now = Timestamp::now();
        let mut tx = self.pool.begin().await?;
        sqlx::query(common::INSERT_CUSTOMER)
            .bind(name)
            .bind(now.millis())
            .execute(&mut *tx)
            .await?;
        let customer_id: i64 = sqlx::query(common::SELECT_CUSTOMER)
            .bind(name)
            .fetch_one(&mut *tx)
            .await?
            .try_get("id")?;
        let id: i64 = sqlx::query(common::INSERT_KEY)
            .bind(customer_id)
            .bind(accounts::hash_key(&key))
            .bind(&prefix)
            .bind(plan.as_str())
            .bind(now.millis())
            .fetch_one(&mut *tx)
            .await?
            .try_get("id")?;
        tx.commit().await?;
        let info = ApiKeyInfo {
            id,
            prefix,
            customer_id,
            customer_name: name.to_string(),
            plan,
            created_at: now,
            revoked_at: None,
        };
        Ok(NewKey { key, info })
    }

    async fn list_keys(&self) -> StoreResult<Vec<ApiKeyInfo>> {
        common::list_keys(&self.pool).await
    }

    async fn revoke_key(&self, prefix: &str) -> StoreResult<u64> {
        common::revoke_key(&self.pool, prefix).await
    }

    async fn find_key(&self, key_hash: &[u8]) -> StoreResult<Option<KeyOwner>> {
        common::find_key(&self.pool, key_hash).await
    }
}

#[async_trait::async_trait]
impl BookStore for PgStore {
    async fn insert_snapshots(&self, batch: &[BookSnapshot]) -> StoreResult<()> {
        history::insert_snapshots(&self.pool, batch).await
    }

    async fn snapshots(&self, q: &SnapshotQuery) -> StoreResult<Vec<BookSnapshot>> {
        common::snapshots(&self.pool, D, q).await
    }

    async fn delete_snapshots_before(&self, cutoff: Timestamp) -> StoreResult<u64> {
        common::delete_snapshots_before(&self.pool, cutoff).await
    }

    async fn snapshots_as_of(
        &self,
        exchange: Exchange,
        market_id: &str,
        asset_id: Option<&str>,
        at: &[Timestamp],
    ) -> StoreResult<Vec<Option<BookSnapshot>>> {
        common::snapshots_as_of(&self.pool, exchange, market_id, asset_id, at).await
    }

    async fn prune_snapshots(&self, cutoff: Timestamp, _max_rows: u32) -> StoreResult<crate::Pruned> {
        history::prune(&self.pool, cutoff).await
    }

    async fn prepare_snapshots(&self, from: Timestamp, until: Timestamp) -> StoreResult<()> {
        history::prepare(&self.pool, from, until).await
    }
}

#[async_trait::async_trait]
impl TradeStore for PgStore {
    async fn insert_trades(&self, batch: &[Trade]) -> StoreResult<Vec<Trade>> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let text = |f: fn(&Trade) -> String| batch.iter().map(f).collect::<Vec<_>>();
        let int = |f: fn(&Trade) -> i64| batch.iter().map(f).collect::<Vec<_>>();
        // A trade repeated inside the batch conflicts with its own first copy and is skipped by DO NOTHING.
        let rows = sqlx::query(INSERT_TRADES)
            .bind(text(|t| t.exchange.as_str().to_string()))
            .bind(text(|t| t.source_trade_id.clone()))
            .bind(text(|t| t.market_id.clone()))
            .bind(text(|t| t.event_id.clone()))
            .bind(int(|t| t.executed_at.millis()))
            .bind(text(|t| codec::side_str(t.taker_side).to_string()))
            .bind(text(|t| codec::outcome_str(t.outcome).to_string()))
            .bind(int(|t| t.price.micros()))
            .bind(int(|t| t.size.micros()))
            .bind(int(codec::trade_notional))
            .fetch_all(&self.pool)
            .await?;
        let mut inserted: HashSet<(String, String)> = HashSet::with_capacity(rows.len());
        for r in &rows {
            inserted.insert((r.try_get("exchange")?, r.try_get("source_trade_id")?));
        }
        // Input order, each new trade once (removing the key makes a repeated copy count as old).
        Ok(batch
            .iter()
            .filter(|t| inserted.remove(&(t.exchange.as_str().to_string(), t.source_trade_id.clone())))
            .cloned()
            .collect())
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

    async fn close(&self) {
        self.pool.close().await;
    }
}
