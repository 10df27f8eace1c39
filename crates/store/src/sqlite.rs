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
//! # Market search
//! See `SqliteStore::search_markets_indexed`: FTS5 trigram candidates when they are few, a walk of an
//! ordered index when they are many, so a page never needs to rank every match.

use std::{path::Path, str::FromStr, time::Duration};

use crossbook_core::{BookSnapshot, Event, Exchange, Market, Plan, Series, Timestamp, Trade};
use sqlx::{
    AssertSqlSafe, Row, Sqlite,
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous},
};

use crate::{
    ApiKeyInfo, CatalogStore, EventQuery, EventSummary, KeyOwner, MarketQuery, MarketSort, NewKey, RecentQuery,
    SeriesQuery, SeriesSummary, Store, StoreError, StoreResult,
    accounts::{self, AccountStore, PREFIX_LEN},
    books::{BookStore, SnapshotQuery},
    catalog::StoredMarket,
    codec::{self, Cols},
    backend::{self, Backend, Exec, Pools},
    common::{self, market_insert_cols, market_update_set},
    sql::{self, Dialect, Needle, Sql, Tier},
    trades::TradeStore,
};

mod history;
mod lock;

const D: Dialect = Dialect::Sqlite;

/// Most text matches ranked directly. Below it, the candidates named by the FTS index are filtered, ranked and
/// paged in one statement. Above it, matches make up a sizeable share of the catalog, so walking an index in
/// the requested order meets a page of them after a few thousand rows; see `search_markets_indexed`.
const SPARSE_LIMIT: i64 = 2_000;

/// How long a connection waits for a lock held by another process before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The SQLite store: one writer connection, a pool of readers.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    write: SqlitePool,
    read: SqlitePool,
}

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

/// Starts a write transaction on the single writer connection.
pub(crate) async fn begin(write: &SqlitePool) -> StoreResult<sqlx::Transaction<'static, Sqlite>> {
    Ok(write.begin_with("BEGIN IMMEDIATE").await?)
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
            });
        }

        if let Some(dir) = base.get_filename().parent().filter(|d| !d.as_os_str().is_empty()) {
            create_dir(dir)?;
        }
        // The writer first: it creates the file and switches it to WAL (a persistent setting) before any
        // reader opens it.
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .acquire_timeout(Duration::from_secs(60))
            .idle_timeout(None)
            .max_lifetime(None)
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
        Ok(SqliteStore { write, read })
    }

    /// Starts a write transaction on the single writer connection.
    async fn begin(&self) -> StoreResult<sqlx::Transaction<'static, Sqlite>> {
        begin(&self.write).await
    }

    async fn count(&self, sql: &Sql) -> StoreResult<i64> {
        let rows = self.read.rows(sql).await?;
        rows.first().map_or(Ok(0), |r| r.int("n"))
    }

    /// The sum of the (capped) candidate counts of `sources`.
    async fn count_all(&self, sources: &[Source], n: &Needle) -> StoreResult<i64> {
        let mut total = 0;
        for src in sources {
            total += self.count(&count(*src, n)).await?;
        }
        Ok(total)
    }

    /// The indexed market search (needle of 3+ characters).
    ///
    /// 1. Count the candidates each index names (headline FTS, other-fields FTS, interval code), each count
    ///    stopping at `SPARSE_LIMIT + 1`. If there are at most `SPARSE_LIMIT` in all, one statement filters,
    ///    ranks and pages exactly those rows.
    /// 2. Otherwise the needle is common. For `newest`/`volume`/`liquidity` one statement walks the index of that
    ///    order and stops after the page: with matches this dense, a page is met after a few thousand rows.
    /// 3. For `relevance` the result is the concatenation of four tiers (exact id, headline prefix, headline
    ///    substring, other field), each ordered by volume. Tiers are filled in order until the page is full;
    ///    each tier is read from its own index when that index names few rows (the market id index, a
    ///    case-insensitive range on the headline index, the headline FTS, the other-fields FTS), or by walking
    ///    the volume index when it names many.
    ///
    /// Every tier predicate is exclusive and computed in SQL, so a page is the same slice a full ranking of
    /// every match would give, without ranking every match. Case folding: FTS folds Unicode, LIKE only ASCII,
    /// so a row matching only through non-ASCII case folding ranks as "other field" (or, on the walk of a very
    /// common needle, is missed); ASCII text is exact.
    async fn search_markets_indexed(&self, q: &MarketQuery, n: &Needle) -> StoreResult<Vec<StoredMarket>> {
        let sort = sql::market_sort(q, Some(n));
        let mut rest_sources = vec![Source::Rest];
        if n.interval.is_some() {
            rest_sources.push(Source::Interval);
        }
        // The other-fields count is only needed when the headline count leaves the total open, or when the page
        // reaches the "other field" tier; common needles skip it.
        let head = self.count(&count(Source::Head, n)).await?;
        let mut rest = None;
        if head <= SPARSE_LIMIT {
            let r = self.count_all(&rest_sources, n).await?;
            if head + r <= SPARSE_LIMIT {
                return common::markets_of(&self.read.rows(&rank_candidates(q, n, sort)).await?);
            }
            rest = Some(r);
        }
        tracing::debug!(needle = %n.raw, head, ?rest, ?sort, "common needle: walking ordered indexes");
        if sort != MarketSort::Relevance {
            let mut s = select(codec::MARKET_COLS, walk(q, sort));
            s.push(" AND ");
            sql::market_match(&mut s, D, n);
            sql::market_order(&mut s, D, sort, Some(n));
            sql::page(&mut s, q.limit, q.offset);
            return common::markets_of(&self.read.rows(&s).await?);
        }

        // Tiers are read in order. Rows before `offset` are counted, never loaded: a deep page costs a walk, not
        // memory.
        let mut skip = i64::from(q.offset);
        let mut out: Vec<StoredMarket> = Vec::new();
        for tier in [Tier::ExactId, Tier::Prefix, Tier::Contains, Tier::Other] {
            let missing = i64::from(q.limit) - out.len() as i64;
            if missing <= 0 {
                break;
            }
            // `indexed`: the statement reads candidates from an index that already checked the text.
            let (mut s, indexed) = match tier {
                Tier::ExactId => (from_markets(q, " INDEXED BY markets_market_id_nocase"), true),
                Tier::Prefix if self.count(&count(Source::Prefix, n)).await? <= SPARSE_LIMIT => {
                    let mut s = from_markets(q, " INDEXED BY markets_headline_nocase");
                    s.push(" AND ");
                    headline_range(&mut s, "m.", n);
                    (s, true)
                }
                Tier::Contains if head <= SPARSE_LIMIT => {
                    let mut s = from_markets(q, NOT_INDEXED);
                    candidates_in(&mut s, &[Source::Head], n);
                    (s, true)
                }
                Tier::Other
                    if match rest {
                        Some(r) => r,
                        None => self.count_all(&rest_sources, n).await?,
                    } <= SPARSE_LIMIT =>
                {
                    let mut s = from_markets(q, NOT_INDEXED);
                    candidates_in(&mut s, &rest_sources, n);
                    (s, true)
                }
                Tier::Prefix | Tier::Contains | Tier::Other => (walk(q, MarketSort::Volume), false),
            };
            s.push(" AND ");
            sql::market_tier_predicate(&mut s, D, n, tier, indexed);
            if skip > 0 {
                // How many rows of this tier the offset skips, counting no further than the offset.
                let mut c = select("1", s.clone());
                c.text.insert_str(0, "SELECT count(*) AS n FROM (");
                c.push(" LIMIT ").int(skip).push(")");
                let rows = self.count(&c).await?;
                if rows < skip {
                    skip -= rows;
                    continue;
                }
            }
            let mut s = select(codec::MARKET_COLS, s);
            s.push(" ORDER BY m.volume DESC, m.market_id, m.exchange LIMIT ")
                .int(missing)
                .push(" OFFSET ")
                .int(skip);
            skip = 0;
            out.extend(common::markets_of(&self.read.rows(&s).await?)?);
        }
        Ok(out)
    }

    /// `EXPLAIN QUERY PLAN` of the statements a market search with `q` starts with, one line per plan step.
    /// For tests and diagnostics: they show which index serves the search.
    pub async fn explain_market_search(&self, q: &MarketQuery) -> StoreResult<Vec<String>> {
        let needle = Needle::new(q.q.as_deref());
        let statements = match &needle {
            Some(n) if n.indexed && q.event_id.is_none() => {
                vec![
                    count(Source::Head, n),
                    count(Source::Rest, n),
                    rank_candidates(q, n, sql::market_sort(q, Some(n))),
                ]
            }
            n => vec![sql::market_search(D, q, n.as_ref())],
        };
        let mut lines = Vec::new();
        for mut s in statements {
            s.text.insert_str(0, "EXPLAIN QUERY PLAN ");
            for r in self.read.rows(&s).await? {
                lines.push(r.text("detail")?);
            }
        }
        Ok(lines)
    }
}

/// An index naming the markets that match a needle in one way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The headline contains the needle (FTS).
    Head,
    /// Another searchable field contains the needle (FTS).
    Rest,
    /// The interval code equals the needle.
    Interval,
    /// The headline starts with the needle (range on the headline index).
    Prefix,
}

/// `SELECT <rowid> FROM …`: the markets `src` names for `n`.
fn source_select(s: &mut Sql, src: Source, n: &Needle) {
    match src {
        Source::Head => {
            s.push("SELECT rowid FROM markets_head_fts WHERE markets_head_fts MATCH ")
                .text(&n.fts(&[], false));
        }
        Source::Rest => {
            s.push("SELECT rowid FROM markets_rest_fts WHERE markets_rest_fts MATCH ")
                .text(&n.fts(&[], false));
        }
        Source::Interval => {
            let code = n.interval.map_or("", |c| c.as_str());
            s.push("SELECT id FROM markets WHERE interval_code = ").text(code);
        }
        Source::Prefix => {
            s.push("SELECT id FROM markets INDEXED BY markets_headline_nocase WHERE ");
            headline_range(s, "", n);
        }
    }
}

/// `coalesce(title, question)` starts with the needle, ignoring ASCII case, as a range the headline index
/// serves: `[needle, needle + U+10FFFF)` under NOCASE, which compares ASCII-lowercased bytes.
fn headline_range(s: &mut Sql, alias: &str, n: &Needle) {
    let head = format!("coalesce({alias}title, {alias}question) COLLATE NOCASE");
    s.push(&head)
        .push(" >= ")
        .text(&n.raw)
        .push(" AND ")
        .push(&head)
        .push(" < ")
        .text(&format!("{}{}", n.raw, char::MAX));
}

/// `SELECT count(*) AS n` of the markets `src` names, stopping at `SPARSE_LIMIT + 1`.
fn count(src: Source, n: &Needle) -> Sql {
    let mut s = Sql::new("SELECT count(*) AS n FROM (");
    source_select(&mut s, src, n);
    s.push(" LIMIT ").int(SPARSE_LIMIT + 1).push(")");
    s
}

/// ` AND m.id IN (…)`: restricts to the markets the sources name.
fn candidates_in(s: &mut Sql, sources: &[Source], n: &Needle) {
    s.push(" AND m.id IN (");
    for (i, src) in sources.iter().enumerate() {
        if i > 0 {
            s.push(" UNION ALL ");
        }
        source_select(s, *src, n);
    }
    s.push(")");
}

fn create_dir(dir: &Path) -> StoreResult<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| StoreError::Config(format!("cannot create the database folder {}: {e}", dir.display())))
}

/// Statements driven by a list of FTS candidates must look each one up by rowid. Without this hint the planner
/// may prefer an index that matches the `ORDER BY` and scan the whole catalog; `NOT INDEXED` still allows
/// rowid lookups.
const NOT_INDEXED: &str = " NOT INDEXED";

/// ` FROM markets AS m <hint> WHERE <filters>`; [`select`] puts a column list in front.
fn from_markets(q: &MarketQuery, hint: &str) -> Sql {
    let mut s = Sql::new(" FROM markets AS m");
    s.push(hint);
    sql::market_filters(&mut s, q);
    s
}

/// `SELECT <cols>` + `from` (the column list holds no placeholders, so prepending keeps `$N` numbering valid).
fn select(cols: &str, mut from: Sql) -> Sql {
    from.text.insert_str(0, &format!("SELECT {cols}"));
    from
}

/// Filters, ranks and pages the (few) candidates the indexes name for `n`, in one statement.
fn rank_candidates(q: &MarketQuery, n: &Needle, sort: MarketSort) -> Sql {
    let mut s = select(codec::MARKET_COLS, from_markets(q, NOT_INDEXED));
    let sources: &[Source] = if n.interval.is_some() {
        &[Source::Head, Source::Rest, Source::Interval]
    } else {
        &[Source::Head, Source::Rest]
    };
    candidates_in(&mut s, sources, n);
    sql::market_order(&mut s, D, sort, Some(n));
    sql::page(&mut s, q.limit, q.offset);
    s
}

/// ` FROM markets m INDEXED BY <the index of sort> WHERE <filters>`: a scan in the requested order that
/// stops as soon as the `LIMIT` is met. Forced because the planner cannot know that the text predicate added
/// after it matches densely, and would otherwise sort every match.
fn walk(q: &MarketQuery, sort: MarketSort) -> Sql {
    let index = match sort {
        MarketSort::Relevance | MarketSort::Volume => "markets_status_volume",
        MarketSort::Newest => "markets_status_discovered",
        MarketSort::Liquidity => "markets_status_liquidity",
    };
    from_markets(q, &format!(" INDEXED BY {index}"))
}

const UPSERT_MARKET: &str = concat!(
    "INSERT INTO markets (",
    market_insert_cols!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, \
     $23, $24, $25, $26, $26) ON CONFLICT (exchange, market_id) DO UPDATE SET ",
    market_update_set!()
);

const INSERT_TRADE: &str = "INSERT INTO trades (exchange, source_trade_id, market_id, event_id, executed_at, taker_side, \
     outcome, price, size, notional) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
     ON CONFLICT (exchange, source_trade_id) DO NOTHING";

/// Snapshot rows per `INSERT` (7 parameters each, far below SQLite's 32,766-parameter limit).
const SNAPSHOT_ROWS_PER_STATEMENT: usize = 256;

/// The upsert of a full chunk of [`SNAPSHOT_ROWS_PER_STATEMENT`] rows.
static FULL_SNAPSHOT_UPSERT: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| upsert_snapshots_sql(SNAPSHOT_ROWS_PER_STATEMENT));

/// The snapshot upsert for `rows` rows.
fn upsert_snapshots_sql(rows: usize) -> String {
    let mut sql =
        String::from("INSERT INTO book_snapshots (exchange, market_id, asset_id, ts, bids, asks, no_bids) VALUES ");
    for i in 0..rows {
        if i > 0 {
            sql.push(',');
        }
        sql.push_str("(?,?,?,?,?,?,?)");
    }
    sql.push_str(
        " ON CONFLICT (exchange, market_id, asset_id, ts) DO UPDATE SET \
         bids = excluded.bids, asks = excluded.asks, no_bids = excluded.no_bids",
    );
    sql
}

#[async_trait::async_trait]
impl CatalogStore for SqliteStore {
    async fn upsert_series(&self, items: &[Series], seen_at: Timestamp) -> StoreResult<()> {
        let mut tx = self.begin().await?;
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
        let mut tx = self.begin().await?;
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
        let mut tx = self.begin().await?;
        for m in items {
            sqlx::query(UPSERT_MARKET)
                .bind(m.exchange.as_str())
                .bind(&m.market_id)
                .bind(&m.event_id)
                .bind(&m.series_id)
                .bind(m.title.as_deref())
                .bind(m.subtitle.as_deref())
                .bind(&m.question)
                .bind(m.description.as_deref())
                .bind(m.slug.as_deref())
                .bind(m.url.as_deref())
                .bind(m.category.as_deref())
                .bind(m.status.as_str())
                .bind(m.interval_code.map(|c| c.as_str()))
                .bind(m.window_start.map(Timestamp::millis))
                .bind(m.window_end.map(Timestamp::millis))
                .bind(m.volume.micros())
                .bind(m.volume_24h.micros())
                .bind(m.liquidity.micros())
                .bind(m.open_interest.micros())
                .bind(m.last_yes_price.map(|p| p.micros()))
                .bind(m.last_no_price.map(|p| p.micros()))
                .bind(m.settled_at.map(Timestamp::millis))
                .bind(m.source_id.as_deref())
                .bind(m.yes_token_id.as_deref())
                .bind(m.no_token_id.as_deref())
                .bind(seen_at.millis())
                .execute(&mut *tx)
                .await?;
        }
        Ok(tx.commit().await?)
    }

    async fn get_event(&self, exchange: Exchange, event_id: &str) -> StoreResult<Option<EventSummary>> {
        common::get_event(&self.read, exchange, event_id).await
    }

    async fn find_event(&self, event_id: &str) -> StoreResult<Option<EventSummary>> {
        common::find_event(&self.read, event_id).await
    }

    async fn get_market(&self, exchange: Exchange, market_id: &str) -> StoreResult<Option<StoredMarket>> {
        common::get_market(&self.read, exchange, market_id).await
    }

    async fn active_markets(&self) -> StoreResult<Vec<Market>> {
        common::active_markets(&self.read).await
    }

    async fn search_series(&self, q: &SeriesQuery) -> StoreResult<Vec<SeriesSummary>> {
        common::search_series(&self.read, D, q).await
    }

    async fn search_events(&self, q: &EventQuery) -> StoreResult<Vec<EventSummary>> {
        common::search_events(&self.read, D, q).await
    }

    async fn search_markets(&self, q: &MarketQuery) -> StoreResult<Vec<StoredMarket>> {
        match Needle::new(q.q.as_deref()) {
            // One event holds a handful of markets: scanning them beats any index.
            Some(n) if n.indexed && q.event_id.is_none() => self.search_markets_indexed(q, &n).await,
            n => common::search_markets_scan(&self.read, D, q, n.as_ref()).await,
        }
    }

    async fn recent_events(&self, q: &RecentQuery) -> StoreResult<Vec<EventSummary>> {
        common::recent_events(&self.read, q).await
    }

    async fn recent_markets(&self, q: &RecentQuery) -> StoreResult<Vec<StoredMarket>> {
        common::recent_markets(&self.read, q).await
    }
}

#[async_trait::async_trait]
impl AccountStore for SqliteStore {
    async fn create_key(&self, name: &str, plan: Plan) -> StoreResult<NewKey> {
        let key = accounts::generate_key();
        let prefix: String = key.chars().take(PREFIX_LEN).collect();
        let now = Timestamp::now();
        let mut tx = self.begin().await?;
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
        common::list_keys(&self.read).await
    }

    async fn revoke_key(&self, prefix: &str) -> StoreResult<u64> {
        common::revoke_key(&self.write, prefix).await
    }

    async fn find_key(&self, key_hash: &[u8]) -> StoreResult<Option<KeyOwner>> {
        common::find_key(&self.read, key_hash).await
    }
}

#[async_trait::async_trait]
impl BookStore for SqliteStore {
    async fn insert_snapshots(&self, batch: &[BookSnapshot]) -> StoreResult<()> {
        if batch.is_empty() {
            return Ok(());
        }
        // Rows go in in key order, many per statement: each statement is one round trip to sqlx's SQLite
        // thread, and ordered inserts touch each B-tree page once. A key repeated in the batch keeps its last
        // state (the upsert applies rows in order).
        let mut rows: Vec<&BookSnapshot> = batch.iter().collect();
        rows.sort_by(|a, b| {
            (a.exchange.as_str(), &a.market_id, &a.asset_id, a.timestamp).cmp(&(
                b.exchange.as_str(),
                &b.market_id,
                &b.asset_id,
                b.timestamp,
            ))
        });
        let mut tx = self.begin().await?;
        for chunk in rows.chunks(SNAPSHOT_ROWS_PER_STATEMENT) {
            // Every chunk but the last has the full size: its statement text is built once per process.
            let text = if chunk.len() == SNAPSHOT_ROWS_PER_STATEMENT {
                FULL_SNAPSHOT_UPSERT.clone()
            } else {
                upsert_snapshots_sql(chunk.len())
            };
            let mut q = sqlx::query(AssertSqlSafe(text));
            for s in chunk {
                q = q
                    .bind(s.exchange.as_str())
                    .bind(s.market_id.as_str())
                    .bind(codec::asset_key(s.asset_id.as_deref()))
                    .bind(s.timestamp.millis())
                    .bind(codec::encode_ladder(&s.bids))
                    .bind(codec::encode_ladder(&s.asks))
                    .bind(codec::encode_ladder(&s.no_bids));
            }
            q.execute(&mut *tx).await?;
        }
        Ok(tx.commit().await?)
    }

    async fn snapshots(&self, q: &SnapshotQuery) -> StoreResult<Vec<BookSnapshot>> {
        common::snapshots(&self.read, D, q).await
    }

    async fn delete_snapshots_before(&self, cutoff: Timestamp) -> StoreResult<u64> {
        common::delete_snapshots_before(&self.write, cutoff).await
    }

    async fn snapshots_as_of(
        &self,
        exchange: Exchange,
        market_id: &str,
        asset_id: Option<&str>,
        at: &[Timestamp],
    ) -> StoreResult<Vec<Option<BookSnapshot>>> {
        common::snapshots_as_of(&self.read, exchange, market_id, asset_id, at).await
    }

    async fn prune_snapshots(&self, cutoff: Timestamp, max_rows: u32) -> StoreResult<crate::Pruned> {
        history::prune(&self.read, &self.write, cutoff, max_rows).await
    }
}

#[async_trait::async_trait]
impl TradeStore for SqliteStore {
    async fn insert_trades(&self, batch: &[Trade]) -> StoreResult<Vec<Trade>> {
        let mut tx = self.begin().await?;
        let mut new = Vec::new();
        for t in batch {
            let done = sqlx::query(INSERT_TRADE)
                .bind(t.exchange.as_str())
                .bind(&t.source_trade_id)
                .bind(&t.market_id)
                .bind(&t.event_id)
                .bind(t.executed_at.millis())
                .bind(codec::side_str(t.taker_side))
                .bind(codec::outcome_str(t.outcome))
                .bind(t.price.micros())
                .bind(t.size.micros())
                .bind(codec::trade_notional(t))
                .execute(&mut *tx)
                .await?;
            if done.rows_affected() == 1 {
                new.push(t.clone());
            }
        }
        tx.commit().await?;
        Ok(new)
    }
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

    async fn close(&self) {
        // Lets SQLite refresh its planner statistics for the indexes the session used, then releases the
        // connections; the writer last, so that it checkpoints the WAL into the main file.
        let _ = sqlx::query("PRAGMA optimize").execute(&self.write).await;
        self.read.close().await;
        self.write.close().await;
    }
}
