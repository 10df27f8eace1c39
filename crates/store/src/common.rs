//! Behaviour identical on both backends, written once.
//!
//! Most reads differ between SQLite and PostgreSQL only in the pool that runs them, so they are written here
//! against [`Exec`], which each backend implements for its pool. What really differs (opening, writes in
//! bulk, the indexed market search on SQLite) stays in `sqlite.rs` / `postgres.rs`.

use std::collections::HashMap;

use crossbook_core::{Amount, BookSnapshot, Event, Exchange, Series, Timestamp};

use crate::{
    StoreResult,
    accounts::{ApiKeyInfo, KeyOwner},
    books::{SnapshotQuery, SnapshotWindow},
    catalog::{EventQuery, EventSummary, MarketQuery, RecentQuery, SeriesQuery, SeriesSummary, StoredMarket},
    backend::Exec,
    codec::{self, Cols},
    sql::{self, Dialect, Needle, Sql},
};

/// Builds `EventSummary`s: the aggregates and questions of each event come from one query over the markets of
/// the whole page (a handful of index lookups), so no aggregate is computed for rows that are not returned.
pub(crate) async fn summarize_events<E: Exec>(
    ex: &E,
    events: Vec<(Event, Timestamp)>,
) -> StoreResult<Vec<EventSummary>> {
    #[derive(Default)]
    struct Agg {
        count: i64,
        volume: Amount,
        liquidity: Amount,
        questions: Vec<String>,
    }
    let mut aggs: HashMap<(String, String), Agg> = HashMap::new();
    if let Some(q) = sql::markets_of_events(events.iter().map(|(e, _)| (e.exchange.as_str(), e.event_id.as_str()))) {
        for r in ex.rows(&q).await? {
            let a = aggs.entry((r.text("exchange")?, r.text("event_id")?)).or_default();
            a.count += 1;
            a.volume = a.volume.saturating_add(Amount::from_micros(r.int("volume")?));
            a.liquidity = a.liquidity.saturating_add(Amount::from_micros(r.int("liquidity")?));
            a.questions.push(r.text("question")?);
        }
    }
    Ok(events
        .into_iter()
        .map(|(event, discovered_at)| {
            let a = aggs
                .remove(&(event.exchange.as_str().to_string(), event.event_id.clone()))
                .unwrap_or_default();
            EventSummary {
                event,
                discovered_at,
                market_count: a.count,
                total_volume: a.volume,
                total_liquidity: a.liquidity,
                market_questions: a.questions,
            }
        })
        .collect())
}

/// Builds `SeriesSummary`s with the aggregates of spec 2.1, read for the page only.
pub(crate) async fn summarize_series<E: Exec>(
    ex: &E,
    series: Vec<(Series, Timestamp)>,
) -> StoreResult<Vec<SeriesSummary>> {
    #[derive(Default)]
    struct Agg {
        total: i64,
        active: i64,
        earliest: Option<Timestamp>,
        latest: Option<Timestamp>,
    }
    let mut aggs: HashMap<(String, String), Agg> = HashMap::new();
    if let Some(q) = sql::series_aggregates(series.iter().map(|(s, _)| (s.exchange.as_str(), s.series_id.as_str()))) {
        for r in ex.rows(&q).await? {
            let agg = Agg {
                total: r.int("n_total")?,
                active: r.int("n_active")?,
                earliest: r.opt_int("earliest")?.map(Timestamp::from_millis),
                latest: r.opt_int("latest")?.map(Timestamp::from_millis),
            };
            aggs.insert((r.text("exchange")?, r.text("series_id")?), agg);
        }
    }
    Ok(series
        .into_iter()
        .map(|(series, discovered_at)| {
            let a = aggs
                .remove(&(series.exchange.as_str().to_string(), series.series_id.clone()))
                .unwrap_or_default();
            SeriesSummary {
                series,
                discovered_at,
                n_events_total: a.total,
                n_events_active: a.active,
                earliest_event_at: a.earliest,
                latest_event_at: a.latest,
            }
        })
        .collect())
}

fn events_of(rows: &[impl Cols]) -> StoreResult<Vec<(Event, Timestamp)>> {
    rows.iter().map(codec::event_row).collect()
}

pub(crate) fn markets_of(rows: &[impl Cols]) -> StoreResult<Vec<StoredMarket>> {
    rows.iter().map(codec::market_row).collect()
}

pub(crate) async fn get_event<E: Exec>(
    ex: &E,
    exchange: Exchange,
    event_id: &str,
) -> StoreResult<Option<EventSummary>> {
    let mut q = Sql::new("SELECT ");
    q.push(codec::EVENT_COLS)
        .push(" FROM events e WHERE e.exchange = ")
        .text(exchange.as_str())
        .push(" AND e.event_id = ")
        .text(event_id);
    let events = events_of(&ex.rows(&q).await?)?;
    Ok(summarize_events(ex, events).await?.pop())
}

pub(crate) async fn find_event<E: Exec>(ex: &E, event_id: &str) -> StoreResult<Option<EventSummary>> {
    // The same id on both venues is possible in principle; venue_a wins, deterministically.
    let mut q = Sql::new("SELECT ");
    q.push(codec::EVENT_COLS)
        .push(" FROM events e WHERE e.event_id = ")
        .text(event_id)
        .push(" ORDER BY e.exchange LIMIT 1");
    let events = events_of(&ex.rows(&q).await?)?;
    Ok(summarize_events(ex, events).await?.pop())
}

pub(crate) async fn get_market<E: Exec>(
    ex: &E,
    exchange: Exchange,
    market_id: &str,
) -> StoreResult<Option<StoredMarket>> {
    // venue_b markets are also known by their numeric source id; the market id itself wins a tie.
    let mut q = Sql::new("SELECT ");
    q.push(codec::MARKET_COLS)
        .push(" FROM markets m WHERE m.exchange = ")
        .text(exchange.as_str())
        .push(" AND (m.market_id = ")
        .text(market_id)
        .push(" OR m.source_id = ")
        .text(market_id)
        .push(") ORDER BY CASE WHEN m.market_id = ")
        .text(market_id)
        .push(" THEN 0 ELSE 1 END LIMIT 1");
    Ok(markets_of(&ex.rows(&q).await?)?.pop())
}

pub(crate) async fn active_markets<E: Exec>(ex: &E) -> StoreResult<Vec<crossbook_core::Market>> {
    let mut q = Sql::new("SELECT ");
    q.push(codec::MARKET_COLS)
        .push(" FROM markets m WHERE m.status = 'active' ORDER BY m.exchange, m.market_id");
    Ok(markets_of(&ex.rows(&q).await?)?.into_iter().map(|m| m.market).collect())
}

pub(crate) async fn search_series<E: Exec>(ex: &E, d: Dialect, q: &SeriesQuery) -> StoreResult<Vec<SeriesSummary>> {
    let needle = Needle::new(q.q.as_deref());
    let rows = ex.rows(&sql::series_search(d, q, needle.as_ref())).await?;
    let series = rows.iter().map(codec::series_row).collect::<StoreResult<Vec<_>>>()?;
    summarize_series(ex, series).await
}

pub(crate) async fn search_events<E: Exec>(ex: &E, d: Dialect, q: &EventQuery) -> StoreResult<Vec<EventSummary>> {
    let needle = Needle::new(q.q.as_deref());
    let events = events_of(&ex.rows(&sql::event_search(d, q, needle.as_ref())).await?)?;
    summarize_events(ex, events).await
}

/// The market search as a single statement (see [`sql::market_search`]).
pub(crate) async fn search_markets_scan<E: Exec>(
    ex: &E,
    d: Dialect,
    q: &MarketQuery,
    needle: Option<&Needle>,
) -> StoreResult<Vec<StoredMarket>> {
    markets_of(&ex.rows(&sql::market_search(d, q, needle)).await?)
}

pub(crate) async fn recent_events<E: Exec>(ex: &E, q: &RecentQuery) -> StoreResult<Vec<EventSummary>> {
    let events = events_of(&ex.rows(&sql::recent_events(q)).await?)?;
    summarize_events(ex, events).await
}

pub(crate) async fn recent_markets<E: Exec>(ex: &E, q: &RecentQuery) -> StoreResult<Vec<StoredMarket>> {
    markets_of(&ex.rows(&sql::recent_markets(q)).await?)
}

pub(crate) async fn list_keys<E: Exec>(ex: &E) -> StoreResult<Vec<ApiKeyInfo>> {
    let mut q = Sql::new("SELECT ");
    q.push(codec::KEY_COLS)
        .push(" FROM api_keys k JOIN customers c ON c.id = k.customer_id ORDER BY k.created_at DESC, k.id DESC");
    ex.rows(&q).await?.iter().map(codec::key_row).collect()
}

pub(crate) async fn revoke_key<E: Exec>(ex: &E, prefix: &str) -> StoreResult<u64> {
    // An empty prefix would match every key; revoking everything is never what `keys revoke ""` means.
    if prefix.is_empty() {
        return Ok(0);
    }
    // substr() rather than LIKE: prefixes are case-sensitive base62 and SQLite's LIKE is not.
    let mut q = Sql::new("UPDATE api_keys SET revoked_at = ");
    q.int(Timestamp::now().millis())
        .push(" WHERE revoked_at IS NULL AND substr(prefix, 1, length(")
        .text(prefix)
        .push(")) = ")
        .text(prefix);
    ex.exec(&q).await
}

pub(crate) async fn snapshots<E: Exec>(ex: &E, d: Dialect, q: &SnapshotQuery) -> StoreResult<Vec<BookSnapshot>> {
    let asset = codec::asset_key(q.asset_id.as_deref());
    let book = |sql: &mut Sql, alias: &str| {
        sql.push(alias)
            .push("exchange = ")
            .text(q.exchange.as_str())
            .push(" AND ")
            .push(alias)
            .push("market_id = ")
            .text(&q.market_id)
            .push(" AND ")
            .push(alias)
            .push("asset_id = ")
            .text(asset);
    };
    let mut sql;
    match q.window {
        SnapshotWindow::Latest { before } => {
            sql = Sql::new("SELECT ts, bids, asks, no_bids FROM book_snapshots WHERE ");
            book(&mut sql, "");
            if let Some(b) = before {
                sql.push(" AND ts < ").int(b.millis());
            }
            sql.push(" ORDER BY ts DESC LIMIT ").int(i64::from(q.limit));
        }
        SnapshotWindow::Range {
            start,
            end,
            bucket_ms,
            after,
        } => {
            // A skip scan in one statement. `walk` finds the first snapshot of each non-empty bucket, one index
            // seek per bucket (the first at or after the start of the next bucket), so empty stretches cost
            // nothing; the outer query then seeks the last snapshot of each of those buckets. Two seeks per row,
            // however dense the series: a page never reads the rows between the ones it returns.
            let size = bucket_ms.max(1);
            let from = match after {
                Some(a) => crossbook_core::history::next_bucket_start(a.millis(), size).max(start.millis()),
                None => start.millis(),
            };
            sql = Sql::new("WITH RECURSIVE walk(n, first) AS (SELECT 1, (SELECT ts FROM book_snapshots WHERE ");
            book(&mut sql, "");
            sql.push(" AND ts >= ")
                .int(from)
                .push(" AND ts <= ")
                .int(end.millis())
                .push(" ORDER BY ts LIMIT 1) UNION ALL SELECT w.n + 1, (SELECT s.ts FROM book_snapshots s WHERE ");
            book(&mut sql, "s.");
            sql.push(" AND s.ts >= (w.first / ")
                .int(size)
                .push(" + 1) * ")
                .int(size)
                .push(" AND s.ts <= ")
                .int(end.millis())
                .push(" ORDER BY s.ts LIMIT 1) FROM walk w WHERE w.first IS NOT NULL AND w.n < ")
                .int(i64::from(q.limit))
                .push("), lasts(ts) AS (SELECT (SELECT s.ts FROM book_snapshots s WHERE ");
            book(&mut sql, "s.");
            sql.push(" AND s.ts >= w.first AND s.ts < (w.first / ")
                .int(size)
                .push(" + 1) * ")
                .int(size)
                .push(" AND s.ts <= ")
                .int(end.millis())
                .push(" ORDER BY s.ts DESC LIMIT 1) FROM walk w WHERE w.first IS NOT NULL) SELECT ts AS n FROM lasts");
            // Then the ladders of exactly those rows, by primary key. Two statements rather than a join: joined,
            // both planners may pick a plan that scans the whole book (SQLite runs the walk inside a scan of the
            // book; PostgreSQL hashes the walk and scans the book when its statistics are missing).
            let mut times: Vec<i64> = ex
                .rows(&sql)
                .await?
                .iter()
                .map(|r| r.int("n"))
                .collect::<StoreResult<_>>()?;
            if times.is_empty() {
                return Ok(Vec::new());
            }
            times.sort_unstable();
            match d {
                // SQLite seeks the primary key once per value of an IN list.
                Dialect::Sqlite => {
                    sql = Sql::new("SELECT ts, bids, asks, no_bids FROM book_snapshots WHERE ");
                    book(&mut sql, "");
                    sql.push(" AND ts IN (");
                    for (i, t) in times.iter().enumerate() {
                        if i > 0 {
                            sql.push(", ");
                        }
                        sql.int(*t);
                    }
                    sql.push(") ORDER BY ts");
                }
                // PostgreSQL, with the book's statistics as they usually are (a partition filled within the
                // day), reads the whole book and filters it by the IN list (~250 ms for a day of 1-second
                // snapshots), and hash-joins a VALUES list the same way. One point lookup per row, joined by
                // UNION ALL, is a primary-key seek each whatever the statistics (~3 ms for 200 rows).
                Dialect::Postgres => {
                    sql = Sql::new("SELECT * FROM (");
                    for (i, t) in times.iter().enumerate() {
                        if i > 0 {
                            sql.push(" UNION ALL ");
                        }
                        sql.push("SELECT ts, bids, asks, no_bids FROM book_snapshots WHERE ");
                        book(&mut sql, "");
                        sql.push(" AND ts = ").int(*t);
                    }
                    sql.push(") x ORDER BY ts");
                }
            }
        }
    }
    ex.rows(&sql)
        .await?
        .iter()
        .map(|r| codec::snapshot_row(r, q.exchange, &q.market_id, q.asset_id.as_deref()))
        .collect()
}

/// See [`crate::BookStore::snapshots_as_of`]: one statement, each time paired with the book's latest snapshot at
/// or before it by an index seek.
pub(crate) async fn snapshots_as_of<E: Exec>(
    ex: &E,
    exchange: Exchange,
    market_id: &str,
    asset_id: Option<&str>,
    at: &[Timestamp],
) -> StoreResult<Vec<Option<BookSnapshot>>> {
    let mut times: Vec<i64> = at.iter().map(|t| t.millis()).collect();
    times.sort_unstable();
    times.dedup();
    if times.is_empty() {
        return Ok(Vec::new());
    }
    let asset = codec::asset_key(asset_id);
    let book = |sql: &mut Sql, alias: &str| {
        sql.push(alias)
            .push("exchange = ")
            .text(exchange.as_str())
            .push(" AND ")
            .push(alias)
            .push("market_id = ")
            .text(market_id)
            .push(" AND ")
            .push(alias)
            .push("asset_id = ")
            .text(asset);
    };
    let mut sql = Sql::new("WITH v(at) AS (VALUES ");
    for (i, t) in times.iter().enumerate() {
        if i > 0 {
            sql.push(", ");
        }
        sql.push("(").int(*t).push(")");
    }
    // CROSS JOIN: the times drive the loop (see `snapshots`).
    sql.push(") SELECT v.at AS at, b.ts, b.bids, b.asks, b.no_bids FROM v CROSS JOIN book_snapshots b WHERE ");
    book(&mut sql, "b.");
    sql.push(" AND b.ts = (SELECT s.ts FROM book_snapshots s WHERE ");
    book(&mut sql, "s.");
    sql.push(" AND s.ts <= v.at ORDER BY s.ts DESC LIMIT 1)");
    let mut found: HashMap<i64, BookSnapshot> = HashMap::new();
    for r in ex.rows(&sql).await? {
        found.insert(r.int("at")?, codec::snapshot_row(&r, exchange, market_id, asset_id)?);
    }
    Ok(at.iter().map(|t| found.get(&t.millis()).cloned()).collect())
}

pub(crate) async fn delete_snapshots_before<E: Exec>(ex: &E, cutoff: Timestamp) -> StoreResult<u64> {
    let mut q = Sql::new("DELETE FROM book_snapshots WHERE ts < ");
    q.int(cutoff.millis());
    ex.exec(&q).await
}

pub(crate) async fn find_key<E: Exec>(ex: &E, key_hash: &[u8]) -> StoreResult<Option<KeyOwner>> {
    let mut q = Sql::new("SELECT id, customer_id, plan FROM api_keys WHERE key_hash = ");
    q.bytes(key_hash).push(" AND revoked_at IS NULL");
    ex.rows(&q).await?.first().map(key_owner).transpose()
}

pub(crate) fn key_owner(r: &impl Cols) -> StoreResult<KeyOwner> {
    Ok(KeyOwner {
        key_id: r.int("id")?,
        customer_id: r.int("customer_id")?,
        plan: codec::plan(&r.text("plan")?)?,
    })
}

// Per-row upserts whose text is the same on both backends (`excluded` and `ON CONFLICT` are shared syntax).
// `discovered_at` is written on insert only; every other column follows the latest upsert.

pub(crate) const UPSERT_SERIES: &str = "INSERT INTO series (exchange, series_id, title, slug, url, category, status, discovered_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) \
     ON CONFLICT (exchange, series_id) DO UPDATE SET title = excluded.title, slug = excluded.slug, url = excluded.url, \
     category = excluded.category, status = excluded.status, updated_at = excluded.updated_at";

pub(crate) const UPSERT_EVENT: &str = "INSERT INTO events (exchange, event_id, series_id, title, subtitle, slug, url, image_url, category, \
     status, interval_code, window_start, window_end, volume_24h, discovered_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15) \
     ON CONFLICT (exchange, event_id) DO UPDATE SET series_id = excluded.series_id, title = excluded.title, \
     subtitle = excluded.subtitle, slug = excluded.slug, url = excluded.url, image_url = excluded.image_url, \
     category = excluded.category, status = excluded.status, interval_code = excluded.interval_code, \
     window_start = excluded.window_start, window_end = excluded.window_end, volume_24h = excluded.volume_24h, \
     updated_at = excluded.updated_at";

/// The `SET` list of a market upsert (shared by the per-row SQLite form and the PostgreSQL bulk form). A macro
/// rather than a `const` so that `concat!` can splice it into the statements.
macro_rules! market_update_set {
    () => {
        "event_id = excluded.event_id, series_id = excluded.series_id, \
         title = excluded.title, subtitle = excluded.subtitle, question = excluded.question, \
         description = excluded.description, slug = excluded.slug, url = excluded.url, category = excluded.category, \
         status = excluded.status, interval_code = excluded.interval_code, window_start = excluded.window_start, \
         window_end = excluded.window_end, volume = excluded.volume, volume_24h = excluded.volume_24h, \
         liquidity = excluded.liquidity, open_interest = excluded.open_interest, last_yes_price = excluded.last_yes_price, \
         last_no_price = excluded.last_no_price, settled_at = excluded.settled_at, source_id = excluded.source_id, \
         yes_token_id = excluded.yes_token_id, no_token_id = excluded.no_token_id, updated_at = excluded.updated_at"
    };
}
pub(crate) use market_update_set;

/// Column list of a market insert, in bind order; `discovered_at` and `updated_at` come last.
macro_rules! market_insert_cols {
    () => {
        "exchange, market_id, event_id, series_id, title, subtitle, question, \
         description, slug, url, category, status, interval_code, window_start, window_end, volume, volume_24h, \
         liquidity, open_interest, last_yes_price, last_no_price, settled_at, source_id, yes_token_id, no_token_id, \
         discovered_at, updated_at"
    };
}
pub(crate) use market_insert_cols;

pub(crate) const INSERT_CUSTOMER: &str =
    "INSERT INTO customers (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING";
pub(crate) const SELECT_CUSTOMER: &str = "SELECT id FROM customers WHERE name = $1";
pub(crate) const INSERT_KEY: &str =
    "INSERT INTO api_keys (customer_id, key_hash, prefix, plan, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id";

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
