//! The catalog concern: upserts from ingestion and the search queries of spec §4.1 / contracts §4.
//!
//! Reads and the series and event upserts are the same SQL on both backends. The market upsert (per row on
//! SQLite, arrays on PostgreSQL) and the indexed market search (FTS5 on SQLite, `pg_trgm` tiers on PostgreSQL)
//! are written per dialect in `sqlite.rs` and `postgres.rs`; the search statements both use are in `search.rs`.

use std::collections::HashMap;

use crossbook_core::{Amount, Event, Exchange, Market, Series, Status, Timestamp};

use crate::{
    StoreResult,
    backend::{Backend, Exec, Pools},
    codec::Cols,
    sql::{Arg, Dialect, Sql},
};

mod postgres;
pub(crate) mod rows;
pub(crate) mod search;
mod sqlite;

use search::Needle;

/// Sort orders of `/v1/search/series`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesSort {
    Title,
    Newest,
}

/// Sort orders of `/v1/search/events`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventSort {
    Relevance,
    Newest,
    Markets,
    Volume,
    Liquidity,
}

/// Sort orders of `/v1/search/markets`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarketSort {
    Relevance,
    Newest,
    Volume,
    Liquidity,
}

/// Validated parameters of a series search. `q` matches `series_id` and `title`, case-insensitively.
#[derive(Debug, Clone)]
pub struct SeriesQuery {
    pub q: Option<String>,
    pub exchange: Option<Exchange>,
    pub category: Option<String>,
    pub status: Status,
    pub sort: SeriesSort,
    pub limit: u32,
    pub offset: u32,
}

/// Validated parameters of an event search. `q` matches title, subtitle, event id and the questions of the
/// event's markets. At least one of `q` and `series_id` is set (the server checks).
#[derive(Debug, Clone)]
pub struct EventQuery {
    pub q: Option<String>,
    pub series_id: Option<String>,
    pub exchange: Option<Exchange>,
    pub category: Option<String>,
    pub status: Status,
    pub min_volume: Option<Amount>,
    pub discovered_after: Option<Timestamp>,
    pub sort: EventSort,
    pub limit: u32,
    pub offset: u32,
}

/// Validated parameters of a market search. `q` matches question, title, subtitle, description, market id,
/// slug, or equals `interval_code` exactly.
#[derive(Debug, Clone)]
pub struct MarketQuery {
    pub q: Option<String>,
    pub series_id: Option<String>,
    /// Restricts to one event (the `/search/events/{id}/markets` route).
    pub event_id: Option<String>,
    pub exchange: Option<Exchange>,
    pub category: Option<String>,
    pub status: Status,
    pub min_volume: Option<Amount>,
    pub min_liquidity: Option<Amount>,
    pub discovered_after: Option<Timestamp>,
    pub settled_after: Option<Timestamp>,
    pub settled_before: Option<Timestamp>,
    pub sort: MarketSort,
    pub limit: u32,
    pub offset: u32,
}

impl MarketQuery {
    /// The markets of one event with `status`, highest volume first, a page at a time.
    pub fn of_event(exchange: Exchange, event_id: &str, status: Status, limit: u32, offset: u32) -> Self {
        MarketQuery {
            q: None,
            series_id: None,
            event_id: Some(event_id.to_string()),
            exchange: Some(exchange),
            category: None,
            status,
            min_volume: None,
            min_liquidity: None,
            discovered_after: None,
            settled_after: None,
            settled_before: None,
            sort: MarketSort::Volume,
            limit,
            offset,
        }
    }
}

/// Parameters of the two "recent" routes: newest `discovered_at` first.
#[derive(Debug, Clone)]
pub struct RecentQuery {
    pub exchange: Option<Exchange>,
    pub status: Status,
    pub limit: u32,
    pub offset: u32,
}

/// A series with the aggregates of spec 2.1.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesSummary {
    pub series: Series,
    pub discovered_at: Timestamp,
    pub n_events_total: i64,
    pub n_events_active: i64,
    /// Earliest event window start.
    pub earliest_event_at: Option<Timestamp>,
    /// Latest event window end.
    pub latest_event_at: Option<Timestamp>,
}

/// An event with the aggregates of spec 2.2.
#[derive(Debug, Clone, PartialEq)]
pub struct EventSummary {
    pub event: Event,
    pub discovered_at: Timestamp,
    pub market_count: i64,
    pub total_volume: Amount,
    pub total_liquidity: Amount,
    pub market_questions: Vec<String>,
}

/// A stored market with its first-seen time.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMarket {
    pub market: Market,
    pub discovered_at: Timestamp,
}

pub use StoredMarket as MarketRow;

/// The catalog concern.
///
/// Upserts take `seen_at`: the first upsert of an item records it as `discovered_at`, later ones keep it.
/// Every other field follows the venue (latest upsert wins), including `status` and `settled_at`.
#[async_trait::async_trait]
pub trait CatalogStore: Send + Sync {
    async fn upsert_series(&self, items: &[Series], seen_at: Timestamp) -> StoreResult<()>;
    async fn upsert_events(&self, items: &[Event], seen_at: Timestamp) -> StoreResult<()>;
    async fn upsert_markets(&self, items: &[Market], seen_at: Timestamp) -> StoreResult<()>;

    /// An event by its id, or (venue_b) by its slug.
    async fn get_event(&self, exchange: Exchange, event_id: &str) -> StoreResult<Option<EventSummary>>;
    /// Looks an event up by id on any venue (the `/search/events/{event_id}/markets` route has no exchange).
    async fn find_event(&self, event_id: &str) -> StoreResult<Option<EventSummary>>;
    /// venue_b accepts the condition id or the numeric source id; venue_a the ticker.
    async fn get_market(&self, exchange: Exchange, market_id: &str) -> StoreResult<Option<StoredMarket>>;
    /// Active markets of both venues (the live state and the scanner's catalog).
    async fn active_markets(&self) -> StoreResult<Vec<Market>>;

    async fn search_series(&self, q: &SeriesQuery) -> StoreResult<Vec<SeriesSummary>>;
    async fn search_events(&self, q: &EventQuery) -> StoreResult<Vec<EventSummary>>;
    async fn search_markets(&self, q: &MarketQuery) -> StoreResult<Vec<StoredMarket>>;
    async fn recent_events(&self, q: &RecentQuery) -> StoreResult<Vec<EventSummary>>;
    async fn recent_markets(&self, q: &RecentQuery) -> StoreResult<Vec<StoredMarket>>;
}

// ------------------------------------------------------------------------------------------------ shared SQL

/// Builds `EventSummary`s: the aggregates and questions of each event come from one query over the markets of
/// the whole page (a handful of index lookups), so no aggregate is computed for rows that are not returned.
async fn summarize_events<E: Exec>(ex: &E, events: Vec<(Event, Timestamp)>) -> StoreResult<Vec<EventSummary>> {
    #[derive(Default)]
    struct Agg {
        count: i64,
        volume: Amount,
        liquidity: Amount,
        questions: Vec<String>,
    }
    let mut aggs: HashMap<(String, String), Agg> = HashMap::new();
    if let Some(q) = search::markets_of_events(events.iter().map(|(e, _)| (e.exchange.as_str(), e.event_id.as_str()))) {
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
async fn summarize_series<E: Exec>(ex: &E, series: Vec<(Series, Timestamp)>) -> StoreResult<Vec<SeriesSummary>> {
    #[derive(Default)]
    struct Agg {
        total: i64,
        active: i64,
        earliest: Option<Timestamp>,
        latest: Option<Timestamp>,
    }
    let mut aggs: HashMap<(String, String), Agg> = HashMap::new();
    if let Some(q) = search::series_aggregates(series.iter().map(|(s, _)| (s.exchange.as_str(), s.series_id.as_str())))
    {
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
    rows.iter().map(crate::catalog::rows::event_row).collect()
}

pub(super) fn markets_of(rows: &[impl Cols]) -> StoreResult<Vec<StoredMarket>> {
    rows.iter().map(crate::catalog::rows::market_row).collect()
}

async fn get_event<E: Exec>(ex: &E, exchange: Exchange, event_id: &str) -> StoreResult<Option<EventSummary>> {
    // venue_b events are also known by their slug (the end of their web address); the id itself wins a tie.
    let mut q = Sql::new("SELECT ");
    q.push(crate::catalog::rows::EVENT_COLS)
        .push(" FROM events e WHERE e.exchange = ")
        .text(exchange.as_str())
        .push(" AND (e.event_id = ")
        .text(event_id)
        .push(" OR e.slug = ")
        .text(event_id)
        .push(") ORDER BY CASE WHEN e.event_id = ")
        .text(event_id)
        .push(" THEN 0 ELSE 1 END LIMIT 1");
    let events = events_of(&ex.rows(&q).await?)?;
    Ok(summarize_events(ex, events).await?.pop())
}

async fn find_event<E: Exec>(ex: &E, event_id: &str) -> StoreResult<Option<EventSummary>> {
    // The same id on both venues is possible in principle; venue_a wins, deterministically.
    let mut q = Sql::new("SELECT ");
    q.push(crate::catalog::rows::EVENT_COLS)
        .push(" FROM events e WHERE e.event_id = ")
        .text(event_id)
        .push(" ORDER BY e.exchange LIMIT 1");
    let events = events_of(&ex.rows(&q).await?)?;
    Ok(summarize_events(ex, events).await?.pop())
}

async fn get_market<E: Exec>(ex: &E, exchange: Exchange, market_id: &str) -> StoreResult<Option<StoredMarket>> {
    // venue_b markets are also known by their numeric source id; the market id itself wins a tie.
    let mut q = Sql::new("SELECT ");
    q.push(crate::catalog::rows::MARKET_COLS)
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

async fn active_markets<E: Exec>(ex: &E) -> StoreResult<Vec<crossbook_core::Market>> {
    let mut q = Sql::new("SELECT ");
    q.push(crate::catalog::rows::MARKET_COLS)
        .push(" FROM markets m WHERE m.status = 'active' ORDER BY m.exchange, m.market_id");
    Ok(markets_of(&ex.rows(&q).await?)?.into_iter().map(|m| m.market).collect())
}

async fn search_series<E: Exec>(ex: &E, d: Dialect, q: &SeriesQuery) -> StoreResult<Vec<SeriesSummary>> {
    let needle = Needle::new(q.q.as_deref());
    let rows = ex.rows(&search::series_search(d, q, needle.as_ref())).await?;
    let series = rows
        .iter()
        .map(crate::catalog::rows::series_row)
        .collect::<StoreResult<Vec<_>>>()?;
    summarize_series(ex, series).await
}

async fn search_events<E: Exec>(ex: &E, d: Dialect, q: &EventQuery) -> StoreResult<Vec<EventSummary>> {
    let needle = Needle::new(q.q.as_deref());
    let events = events_of(&ex.rows(&search::event_search(d, q, needle.as_ref())).await?)?;
    summarize_events(ex, events).await
}

/// The market search as a single statement (see [`search::market_search`]).
pub(super) async fn search_markets_scan<E: Exec>(
    ex: &E,
    d: Dialect,
    q: &MarketQuery,
    needle: Option<&Needle>,
) -> StoreResult<Vec<StoredMarket>> {
    markets_of(&ex.rows(&search::market_search(d, q, needle)).await?)
}

async fn recent_events<E: Exec>(ex: &E, q: &RecentQuery) -> StoreResult<Vec<EventSummary>> {
    let events = events_of(&ex.rows(&search::recent_events(q)).await?)?;
    summarize_events(ex, events).await
}

async fn recent_markets<E: Exec>(ex: &E, q: &RecentQuery) -> StoreResult<Vec<StoredMarket>> {
    markets_of(&ex.rows(&search::recent_markets(q)).await?)
}

// Per-row upserts whose text is the same on both backends (`excluded` and `ON CONFLICT` are shared syntax).
// `discovered_at` is written on insert only; every other column follows the latest upsert.

const UPSERT_SERIES: &str = "INSERT INTO series (exchange, series_id, title, slug, url, category, status, discovered_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) \
     ON CONFLICT (exchange, series_id) DO UPDATE SET title = excluded.title, slug = excluded.slug, url = excluded.url, \
     category = excluded.category, status = excluded.status, updated_at = excluded.updated_at";

const UPSERT_EVENT: &str = "INSERT INTO events (exchange, event_id, series_id, title, subtitle, slug, url, image_url, category, \
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
         yes_token_id = excluded.yes_token_id, no_token_id = excluded.no_token_id, \
         resolution_source = excluded.resolution_source, updated_at = excluded.updated_at"
    };
}
use market_update_set;

/// Column list of a market insert, in bind order; `discovered_at` and `updated_at` come last.
macro_rules! market_insert_cols {
    () => {
        "exchange, market_id, event_id, series_id, title, subtitle, question, \
         description, slug, url, category, status, interval_code, window_start, window_end, volume, volume_24h, \
         liquidity, open_interest, last_yes_price, last_no_price, settled_at, source_id, yes_token_id, no_token_id, \
         resolution_source, discovered_at, updated_at"
    };
}
use market_insert_cols;

/// The upsert of one series.
fn series_upsert(s: &Series, seen_at: Timestamp) -> Sql {
    Sql::with_args(
        UPSERT_SERIES,
        vec![
            Arg::Text(s.exchange.as_str().to_string()),
            Arg::Text(s.series_id.clone()),
            Arg::Text(s.title.clone()),
            Arg::OptText(s.slug.clone()),
            Arg::OptText(s.url.clone()),
            Arg::OptText(s.category.clone()),
            Arg::Text(s.status.as_str().to_string()),
            Arg::Int(seen_at.millis()),
        ],
    )
}

/// The upsert of one event.
fn event_upsert(e: &Event, seen_at: Timestamp) -> Sql {
    Sql::with_args(
        UPSERT_EVENT,
        vec![
            Arg::Text(e.exchange.as_str().to_string()),
            Arg::Text(e.event_id.clone()),
            Arg::Text(e.series_id.clone()),
            Arg::Text(e.title.clone()),
            Arg::OptText(e.subtitle.clone()),
            Arg::OptText(e.slug.clone()),
            Arg::OptText(e.url.clone()),
            Arg::OptText(e.image_url.clone()),
            Arg::OptText(e.category.clone()),
            Arg::Text(e.status.as_str().to_string()),
            Arg::OptText(e.interval_code.map(|c| c.as_str().to_string())),
            Arg::OptInt(e.window_start.map(Timestamp::millis)),
            Arg::OptInt(e.window_end.map(Timestamp::millis)),
            Arg::OptInt(e.volume_24h.map(|v| v.micros())),
            Arg::Int(seen_at.millis()),
        ],
    )
}

#[async_trait::async_trait]
impl<B: Backend> CatalogStore for B {
    async fn upsert_series(&self, items: &[Series], seen_at: Timestamp) -> StoreResult<()> {
        let stmts: Vec<Sql> = items.iter().map(|s| series_upsert(s, seen_at)).collect();
        self.writer().transaction(&stmts).await?;
        Ok(())
    }

    async fn upsert_events(&self, items: &[Event], seen_at: Timestamp) -> StoreResult<()> {
        let stmts: Vec<Sql> = items.iter().map(|e| event_upsert(e, seen_at)).collect();
        self.writer().transaction(&stmts).await?;
        Ok(())
    }

    async fn upsert_markets(&self, items: &[Market], seen_at: Timestamp) -> StoreResult<()> {
        match self.pools() {
            Pools::Sqlite { write, .. } => sqlite::upsert_markets(write, items, seen_at).await,
            Pools::Postgres(pool) => postgres::upsert_markets(pool, items, seen_at).await,
        }
    }

    async fn get_event(&self, exchange: Exchange, event_id: &str) -> StoreResult<Option<EventSummary>> {
        get_event(self.reader(), exchange, event_id).await
    }

    async fn find_event(&self, event_id: &str) -> StoreResult<Option<EventSummary>> {
        find_event(self.reader(), event_id).await
    }

    async fn get_market(&self, exchange: Exchange, market_id: &str) -> StoreResult<Option<StoredMarket>> {
        get_market(self.reader(), exchange, market_id).await
    }

    async fn active_markets(&self) -> StoreResult<Vec<Market>> {
        active_markets(self.reader()).await
    }

    async fn search_series(&self, q: &SeriesQuery) -> StoreResult<Vec<SeriesSummary>> {
        search_series(self.reader(), B::DIALECT, q).await
    }

    async fn search_events(&self, q: &EventQuery) -> StoreResult<Vec<EventSummary>> {
        search_events(self.reader(), B::DIALECT, q).await
    }

    async fn search_markets(&self, q: &MarketQuery) -> StoreResult<Vec<StoredMarket>> {
        match (Needle::new(q.q.as_deref()), self.pools()) {
            // One event holds a handful of markets: scanning them (through the event index) beats any index.
            (Some(n), Pools::Sqlite { read, .. }) if n.tiered() && q.event_id.is_none() => {
                sqlite::Indexed { read }.search_markets(q, &n).await
            }
            (Some(n), Pools::Postgres(pool)) if n.tiered() && q.event_id.is_none() => {
                postgres::Tiered { pool }.search_markets(q, &n).await
            }
            (n, _) => search_markets_scan(self.reader(), B::DIALECT, q, n.as_ref()).await,
        }
    }

    async fn recent_events(&self, q: &RecentQuery) -> StoreResult<Vec<EventSummary>> {
        recent_events(self.reader(), q).await
    }

    async fn recent_markets(&self, q: &RecentQuery) -> StoreResult<Vec<StoredMarket>> {
        recent_markets(self.reader(), q).await
    }
}
