//! The catalog concern: upserts from ingestion and the search queries of spec §4.1 / contracts §4.

use crossbook_core::{Amount, Event, Exchange, Market, Series, Status, Timestamp};

use crate::StoreResult;

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
