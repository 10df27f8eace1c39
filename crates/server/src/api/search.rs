//! Search (spec §4.1, contracts §4): text search over series, events and markets, the recently ingested
//! events and markets, and the markets of one event. Public; a key is optional.
//!
//! Handlers only validate parameters, call [`CatalogStore`](crossbook_store::CatalogStore) and turn its rows
//! into the `*Out` objects of spec §2.1–2.3. Matching and ordering live in the store.

use crossbook_core::{Amount, Price, Timestamp};
use crossbook_store::{
    EventQuery, EventSort, EventSummary, MarketQuery, MarketSort, RecentQuery, SeriesQuery, SeriesSort, SeriesSummary,
    catalog::StoredMarket,
};
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    AppState,
    api::{
        also_unversioned,
        common::{ExchangeName, StatusName, dollars, iso, iso_opt},
    },
    auth::{Gate, groups},
    error::{ApiError, ApiResult, ErrorBody},
    json::Json,
    params::{FromQuery, Limit, ParamEnum, Path, QueryMap, ValidQuery, text_value},
};
use axum::{extract::State, response::Response};

/// `limit` of `/v1/search/series`.
pub const SERIES_LIMIT: Limit = Limit::new(30, 100);
/// `limit` of `/v1/search/events` and `/v1/search/markets`.
pub const SEARCH_LIMIT: Limit = Limit::new(20, 100);
/// `limit` of the two recent routes.
pub const RECENT_LIMIT: Limit = Limit::new(25, 100);
/// `limit` of `/v1/search/events/{event_id}/markets`.
pub const EVENT_MARKETS_LIMIT: Limit = Limit::new(100, 100);
/// `limit` of the combined `/v1/search`, applied to each of its three arrays.
pub const COMBINED_LIMIT: Limit = Limit::new(10, 50);

/// The search routes, each also reachable without `/v1`.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(also_unversioned(routes!(search)))
        .routes(also_unversioned(routes!(search_series)))
        .routes(also_unversioned(routes!(search_events)))
        .routes(also_unversioned(routes!(search_markets)))
        .routes(also_unversioned(routes!(recent_events)))
        .routes(also_unversioned(routes!(recent_markets)))
        .routes(also_unversioned(routes!(event_markets)))
}

// ------------------------------------------------------------------------------------------------ outputs

/// A series (spec 2.1).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SeriesOut {
    /// Source series ID; pass it as `series_id` to event and market search.
    pub series_id: String,
    pub exchange: ExchangeName,
    /// Human-readable title.
    pub title: String,
    /// Web URL slug of venue_a; null for venue_b.
    #[schema(required = true)]
    pub slug: Option<String>,
    /// Exchange web page URL when available.
    #[schema(required = true)]
    pub url: Option<String>,
    /// Category label; may be null.
    #[schema(required = true)]
    pub category: Option<String>,
    pub status: StatusName,
    /// Total events in the series.
    pub n_events_total: i64,
    /// Events currently open for trading.
    pub n_events_active: i64,
    /// Earliest event window start; null when no event has a window.
    #[schema(required = true, format = DateTime)]
    pub earliest_event_at: Option<String>,
    /// Latest event window end; null when no event has a window.
    #[schema(required = true, format = DateTime)]
    pub latest_event_at: Option<String>,
}

impl From<SeriesSummary> for SeriesOut {
    fn from(s: SeriesSummary) -> Self {
        SeriesOut {
            series_id: s.series.series_id,
            exchange: s.series.exchange.into(),
            title: s.series.title,
            slug: s.series.slug,
            url: s.series.url,
            category: s.series.category,
            status: s.series.status.into(),
            n_events_total: s.n_events_total,
            n_events_active: s.n_events_active,
            earliest_event_at: iso_opt(s.earliest_event_at),
            latest_event_at: iso_opt(s.latest_event_at),
        }
    }
}

/// An event (spec 2.2).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EventOut {
    /// Source event ticker / ID.
    pub event_id: String,
    pub exchange: ExchangeName,
    /// Parent series source ID.
    pub series_id: String,
    /// Event title.
    pub title: String,
    /// Exchange web page URL when available.
    #[schema(required = true)]
    pub url: Option<String>,
    /// Event image URL when available (often for venue_b).
    #[schema(required = true)]
    pub image_url: Option<String>,
    pub status: StatusName,
    /// Number of child markets.
    pub market_count: i64,
    /// Sum of child market volume.
    pub total_volume: f64,
    /// Sum of child market liquidity.
    pub total_liquidity: f64,
    /// Questions of the child markets.
    pub market_questions: Vec<String>,
}

impl From<EventSummary> for EventOut {
    fn from(s: EventSummary) -> Self {
        EventOut {
            event_id: s.event.event_id,
            exchange: s.event.exchange.into(),
            series_id: s.event.series_id,
            title: s.event.title,
            url: s.event.url,
            image_url: s.event.image_url,
            status: s.event.status.into(),
            market_count: s.market_count,
            total_volume: dollars(s.total_volume),
            total_liquidity: dollars(s.total_liquidity),
            market_questions: s.market_questions,
        }
    }
}

/// A market (spec 2.3).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MarketOut {
    /// Source market ticker / ID; used with the historical routes.
    pub market_id: String,
    pub exchange: ExchangeName,
    /// Parent series source ID.
    pub series_id: String,
    /// Formatted headline (venue_a); may be null for venue_b.
    #[schema(required = true)]
    pub title: Option<String>,
    /// Compact disambiguator (strike or close time).
    #[schema(required = true)]
    pub subtitle: Option<String>,
    /// Market question text.
    pub question: String,
    pub status: StatusName,
    /// Traded volume.
    pub volume: f64,
    /// Liquidity.
    pub liquidity: f64,
    /// Last YES price as the venue reports it, four-decimal string (`"0.5300"`); before the first trade the
    /// venue's own value (`"0.0000"` on both venues), never null.
    #[schema(examples("0.5300"))]
    pub last_yes_price: String,
    /// Last NO price, four-decimal string: `1 − last_yes_price` unless the venue gives its own; never null.
    #[schema(examples("0.4700"))]
    pub last_no_price: String,
    /// Parent event source ID.
    pub event_id: String,
    /// Settlement time when closed (the venue's settlement time, or its close time until it settles), else
    /// null.
    #[schema(required = true, format = DateTime)]
    pub settled_at: Option<String>,
}

impl From<StoredMarket> for MarketOut {
    fn from(s: StoredMarket) -> Self {
        let m = s.market;
        // A venue that sent no last price at all (rows stored before the venue's "0.0000" was kept, too)
        // reads as never traded: the venue's own value for that case.
        let last_yes = m.last_yes_price.unwrap_or(Price::ZERO);
        MarketOut {
            market_id: m.market_id,
            exchange: m.exchange.into(),
            series_id: m.series_id,
            title: m.title,
            subtitle: m.subtitle,
            question: m.question,
            status: m.status.into(),
            volume: dollars(m.volume),
            liquidity: dollars(m.liquidity),
            last_yes_price: last_yes.to_string4(),
            last_no_price: m.last_no_price.unwrap_or(last_yes.complement()).to_string4(),
            event_id: m.event_id,
            settled_at: iso_opt(m.settled_at),
        }
    }
}

/// An event of the recent feed: the event object plus when it was first ingested.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RecentEventOut {
    #[serde(flatten)]
    pub event: EventOut,
    /// When the service first saw the event.
    #[schema(format = DateTime)]
    pub discovered_at: String,
}

/// A market of the recent feed: the market object plus when it was first ingested.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RecentMarketOut {
    #[serde(flatten)]
    pub market: MarketOut,
    /// When the service first saw the market.
    #[schema(format = DateTime)]
    pub discovered_at: String,
}

/// The combined search result (spec 2.4).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CombinedOut {
    pub series: Vec<SeriesOut>,
    pub events: Vec<EventOut>,
    pub markets: Vec<MarketOut>,
}

// ------------------------------------------------------------------------------------------------ sort orders

/// Order of series results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SeriesSortBy {
    /// By title, A to Z.
    Title,
    /// Most recently discovered first.
    Newest,
}

impl ParamEnum for SeriesSortBy {
    const VALUES: &'static [(&'static str, Self)] = &[("title", SeriesSortBy::Title), ("newest", SeriesSortBy::Newest)];
}

impl From<SeriesSortBy> for SeriesSort {
    fn from(s: SeriesSortBy) -> Self {
        match s {
            SeriesSortBy::Title => SeriesSort::Title,
            SeriesSortBy::Newest => SeriesSort::Newest,
        }
    }
}

/// Order of event results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum EventSortBy {
    /// Exact id match, then title prefix, then title substring, then other fields; ties by volume, then id.
    Relevance,
    /// Most recently discovered first.
    Newest,
    /// Most child markets first.
    Markets,
    /// Highest total volume first.
    Volume,
    /// Highest total liquidity first.
    Liquidity,
}

impl ParamEnum for EventSortBy {
    const VALUES: &'static [(&'static str, Self)] = &[
        ("relevance", EventSortBy::Relevance),
        ("newest", EventSortBy::Newest),
        ("markets", EventSortBy::Markets),
        ("volume", EventSortBy::Volume),
        ("liquidity", EventSortBy::Liquidity),
    ];
}

impl From<EventSortBy> for EventSort {
    fn from(s: EventSortBy) -> Self {
        match s {
            EventSortBy::Relevance => EventSort::Relevance,
            EventSortBy::Newest => EventSort::Newest,
            EventSortBy::Markets => EventSort::Markets,
            EventSortBy::Volume => EventSort::Volume,
            EventSortBy::Liquidity => EventSort::Liquidity,
        }
    }
}

/// Order of market results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum MarketSortBy {
    /// Exact id match, then title prefix, then title substring, then other fields; ties by volume, then id.
    Relevance,
    /// Most recently discovered first.
    Newest,
    /// Highest volume first.
    Volume,
    /// Highest liquidity first.
    Liquidity,
}

impl ParamEnum for MarketSortBy {
    const VALUES: &'static [(&'static str, Self)] = &[
        ("relevance", MarketSortBy::Relevance),
        ("newest", MarketSortBy::Newest),
        ("volume", MarketSortBy::Volume),
        ("liquidity", MarketSortBy::Liquidity),
    ];
}

impl From<MarketSortBy> for MarketSort {
    fn from(s: MarketSortBy) -> Self {
        match s {
            MarketSortBy::Relevance => MarketSort::Relevance,
            MarketSortBy::Newest => MarketSort::Newest,
            MarketSortBy::Volume => MarketSort::Volume,
            MarketSortBy::Liquidity => MarketSort::Liquidity,
        }
    }
}

// ------------------------------------------------------------------------------------------------ parameters

/// Parameters of `/v1/search`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CombinedParams {
    /// Text to look for (case-insensitive), as in the series, event and market searches.
    #[param(min_length = 1, max_length = 256)]
    pub q: String,
    /// Only this venue.
    #[param(inline)]
    pub exchange: Option<ExchangeName>,
    /// Status of the returned items.
    #[param(inline, required = false, default = "active")]
    pub status: StatusName,
    /// Maximum items in each of the three arrays.
    #[param(required = false, minimum = 1, maximum = 50, default = 10)]
    pub limit: u32,
}

impl FromQuery for CombinedParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(CombinedParams {
            q: q.required_text("q")?,
            exchange: q.one_of("exchange")?,
            status: q.one_of("status")?.unwrap_or(StatusName::Active),
            limit: q.limit(COMBINED_LIMIT)?,
        })
    }
}

/// Parameters of `/v1/search/series`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SeriesParams {
    /// Case-insensitive substring match on `series_id` and `title`.
    #[param(min_length = 1, max_length = 256)]
    pub q: Option<String>,
    /// Only this venue.
    #[param(inline)]
    pub exchange: Option<ExchangeName>,
    /// Exact category match.
    #[param(min_length = 1, max_length = 256)]
    pub category: Option<String>,
    /// Status of the returned series.
    #[param(inline, required = false, default = "active")]
    pub status: StatusName,
    /// Order of the results: `title` (A to Z) or `newest` (by `discovered_at`).
    #[param(inline, required = false, default = "title")]
    pub sort_by: SeriesSortBy,
    /// Page size.
    #[param(required = false, minimum = 1, maximum = 100, default = 30)]
    pub limit: u32,
    /// Items to skip.
    #[param(required = false, minimum = 0, maximum = 1000000, default = 0)]
    pub offset: u32,
}

impl FromQuery for SeriesParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(SeriesParams {
            q: q.text("q")?,
            exchange: q.one_of("exchange")?,
            category: q.text("category")?,
            status: q.one_of("status")?.unwrap_or(StatusName::Active),
            sort_by: q.one_of("sort_by")?.unwrap_or(SeriesSortBy::Title),
            limit: q.limit(SERIES_LIMIT)?,
            offset: q.offset()?,
        })
    }
}

/// Parameters of `/v1/search/events`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsParams {
    /// Case-insensitive substring match on title, subtitle, source event id and market questions.
    /// Required unless `series_id` is set.
    #[param(min_length = 1, max_length = 256)]
    pub q: Option<String>,
    /// Only events of this series. Required unless `q` is set.
    #[param(min_length = 1, max_length = 256)]
    pub series_id: Option<String>,
    /// Only this venue.
    #[param(inline)]
    pub exchange: Option<ExchangeName>,
    /// Exact category match.
    #[param(min_length = 1, max_length = 256)]
    pub category: Option<String>,
    /// Status of the returned events.
    #[param(inline, required = false, default = "active")]
    pub status: StatusName,
    /// Minimum aggregate volume across the child markets (inclusive).
    #[param(value_type = Option<f64>, minimum = 0)]
    pub min_volume: Option<Amount>,
    /// ISO 8601 timestamp or date; keeps events with `discovered_at >= discovered_after`.
    #[param(value_type = Option<String>, format = DateTime)]
    pub discovered_after: Option<Timestamp>,
    /// Order of the results. Default: `relevance` when `q` is set, else `newest`. `relevance` without `q`
    /// orders as `newest`.
    #[param(inline)]
    pub sort_by: Option<EventSortBy>,
    /// Page size.
    #[param(required = false, minimum = 1, maximum = 100, default = 20)]
    pub limit: u32,
    /// Items to skip.
    #[param(required = false, minimum = 0, maximum = 1000000, default = 0)]
    pub offset: u32,
}

impl FromQuery for EventsParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let p = EventsParams {
            q: q.text("q")?,
            series_id: q.text("series_id")?,
            exchange: q.one_of("exchange")?,
            category: q.text("category")?,
            status: q.one_of("status")?.unwrap_or(StatusName::Active),
            min_volume: q.non_negative_amount("min_volume")?,
            discovered_after: q.timestamp("discovered_after")?,
            sort_by: q.one_of("sort_by")?,
            limit: q.limit(SEARCH_LIMIT)?,
            offset: q.offset()?,
        };
        if p.q.is_none() && p.series_id.is_none() {
            return Err(ApiError::missing_one_of(&["q", "series_id"]));
        }
        Ok(p)
    }
}

impl EventsParams {
    fn into_query(self) -> EventQuery {
        let sort = match (self.sort_by, &self.q) {
            (None | Some(EventSortBy::Relevance), Some(_)) => EventSort::Relevance,
            (None | Some(EventSortBy::Relevance), None) => EventSort::Newest,
            (Some(s), _) => s.into(),
        };
        EventQuery {
            q: self.q,
            series_id: self.series_id,
            exchange: self.exchange.map(Into::into),
            category: self.category,
            status: self.status.into(),
            min_volume: self.min_volume,
            discovered_after: self.discovered_after,
            sort,
            limit: self.limit,
            offset: self.offset,
        }
    }
}

/// Parameters of `/v1/search/markets`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MarketsParams {
    /// Case-insensitive substring match on question, title, subtitle, description, market id and slug, or an
    /// exact `interval_code` (`5m`, `15m`, `1h`, `24h`, `1w`). Required unless `series_id` is set.
    #[param(min_length = 1, max_length = 256)]
    pub q: Option<String>,
    /// Only markets of this series. Required unless `q` is set.
    #[param(min_length = 1, max_length = 256)]
    pub series_id: Option<String>,
    /// Only this venue.
    #[param(inline)]
    pub exchange: Option<ExchangeName>,
    /// Exact category match.
    #[param(min_length = 1, max_length = 256)]
    pub category: Option<String>,
    /// Status of the returned markets.
    #[param(inline, required = false, default = "active")]
    pub status: StatusName,
    /// Minimum market volume (inclusive).
    #[param(value_type = Option<f64>, minimum = 0)]
    pub min_volume: Option<Amount>,
    /// Minimum market liquidity (inclusive).
    #[param(value_type = Option<f64>, minimum = 0)]
    pub min_liquidity: Option<Amount>,
    /// ISO 8601 timestamp or date; keeps markets with `discovered_at >= discovered_after`.
    #[param(value_type = Option<String>, format = DateTime)]
    pub discovered_after: Option<Timestamp>,
    /// ISO 8601 lower bound on `settled_at` (inclusive); intended with `status=closed`.
    #[param(value_type = Option<String>, format = DateTime)]
    pub settled_after: Option<Timestamp>,
    /// ISO 8601 upper bound on `settled_at` (inclusive).
    #[param(value_type = Option<String>, format = DateTime)]
    pub settled_before: Option<Timestamp>,
    /// Order of the results. Default: `relevance` when `q` is set, else `newest`. `relevance` without `q`
    /// orders as `newest`.
    #[param(inline)]
    pub sort_by: Option<MarketSortBy>,
    /// Page size.
    #[param(required = false, minimum = 1, maximum = 100, default = 20)]
    pub limit: u32,
    /// Items to skip.
    #[param(required = false, minimum = 0, maximum = 1000000, default = 0)]
    pub offset: u32,
}

impl FromQuery for MarketsParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let p = MarketsParams {
            q: q.text("q")?,
            series_id: q.text("series_id")?,
            exchange: q.one_of("exchange")?,
            category: q.text("category")?,
            status: q.one_of("status")?.unwrap_or(StatusName::Active),
            min_volume: q.non_negative_amount("min_volume")?,
            min_liquidity: q.non_negative_amount("min_liquidity")?,
            discovered_after: q.timestamp("discovered_after")?,
            settled_after: q.timestamp("settled_after")?,
            settled_before: q.timestamp("settled_before")?,
            sort_by: q.one_of("sort_by")?,
            limit: q.limit(SEARCH_LIMIT)?,
            offset: q.offset()?,
        };
        if p.q.is_none() && p.series_id.is_none() {
            return Err(ApiError::missing_one_of(&["q", "series_id"]));
        }
        Ok(p)
    }
}

impl MarketsParams {
    fn into_query(self) -> MarketQuery {
        let sort = match (self.sort_by, &self.q) {
            (None | Some(MarketSortBy::Relevance), Some(_)) => MarketSort::Relevance,
            (None | Some(MarketSortBy::Relevance), None) => MarketSort::Newest,
            (Some(s), _) => s.into(),
        };
        MarketQuery {
            q: self.q,
            series_id: self.series_id,
            event_id: None,
            exchange: self.exchange.map(Into::into),
            category: self.category,
            status: self.status.into(),
            min_volume: self.min_volume,
            min_liquidity: self.min_liquidity,
            discovered_after: self.discovered_after,
            settled_after: self.settled_after,
            settled_before: self.settled_before,
            sort,
            limit: self.limit,
            offset: self.offset,
        }
    }
}

/// Parameters of `/v1/search/recent/events` and `/v1/search/recent/markets`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RecentParams {
    /// Only this venue.
    #[param(inline)]
    pub exchange: Option<ExchangeName>,
    /// Status of the returned items.
    #[param(inline, required = false, default = "active")]
    pub status: StatusName,
    /// Page size.
    #[param(required = false, minimum = 1, maximum = 100, default = 25)]
    pub limit: u32,
    /// Items to skip.
    #[param(required = false, minimum = 0, maximum = 1000000, default = 0)]
    pub offset: u32,
}

impl FromQuery for RecentParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(RecentParams {
            exchange: q.one_of("exchange")?,
            status: q.one_of("status")?.unwrap_or(StatusName::Active),
            limit: q.limit(RECENT_LIMIT)?,
            offset: q.offset()?,
        })
    }
}

impl RecentParams {
    fn into_query(self) -> RecentQuery {
        RecentQuery {
            exchange: self.exchange.map(Into::into),
            status: self.status.into(),
            limit: self.limit,
            offset: self.offset,
        }
    }
}

/// Query parameters of `/v1/search/events/{event_id}/markets`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventMarketsParams {
    /// Status of the returned markets.
    #[param(inline, required = false, default = "active")]
    pub status: StatusName,
    /// Page size.
    #[param(required = false, minimum = 1, maximum = 100, default = 100)]
    pub limit: u32,
    /// Items to skip.
    #[param(required = false, minimum = 0, maximum = 1000000, default = 0)]
    pub offset: u32,
}

impl FromQuery for EventMarketsParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(EventMarketsParams {
            status: q.one_of("status")?.unwrap_or(StatusName::Active),
            limit: q.limit(EVENT_MARKETS_LIMIT)?,
            offset: q.offset()?,
        })
    }
}

// ------------------------------------------------------------------------------------------------ handlers

/// Combined search
///
/// Searches series, events and markets at once with the same `q`, `exchange` and `status`, and returns up to
/// `limit` items of each kind, each in relevance order (series by title).
#[utoipa::path(
    get,
    path = "/v1/search",
    tag = "search",
    params(CombinedParams),
    security((), ("api_key" = [])),
    responses((status = 200, description = "Matching series, events and markets.", body = CombinedOut))
)]
async fn search(
    State(state): State<AppState>,
    _gate: Gate<groups::Search>,
    ValidQuery(p): ValidQuery<CombinedParams>,
) -> ApiResult<Response> {
    let series = SeriesQuery {
        q: Some(p.q.clone()),
        exchange: p.exchange.map(Into::into),
        category: None,
        status: p.status.into(),
        sort: SeriesSort::Title,
        limit: p.limit,
        offset: 0,
    };
    let events = EventQuery {
        q: Some(p.q.clone()),
        series_id: None,
        exchange: p.exchange.map(Into::into),
        category: None,
        status: p.status.into(),
        min_volume: None,
        discovered_after: None,
        sort: EventSort::Relevance,
        limit: p.limit,
        offset: 0,
    };
    let markets = MarketQuery {
        q: Some(p.q),
        series_id: None,
        event_id: None,
        exchange: p.exchange.map(Into::into),
        category: None,
        status: p.status.into(),
        min_volume: None,
        min_liquidity: None,
        discovered_after: None,
        settled_after: None,
        settled_before: None,
        sort: MarketSort::Relevance,
        limit: p.limit,
        offset: 0,
    };
    let key = format!("combined {series:?} {events:?} {markets:?}");
    let store = &state.store;
    state
        .search_cache
        .json(key, async {
            let (series, events, markets) = tokio::try_join!(
                store.search_series(&series),
                store.search_events(&events),
                store.search_markets(&markets)
            )?;
            Ok(CombinedOut {
                series: series.into_iter().map(SeriesOut::from).collect(),
                events: events.into_iter().map(EventOut::from).collect(),
                markets: markets.into_iter().map(MarketOut::from).collect(),
            })
        })
        .await
}

/// Search series
///
/// Series whose `series_id` or title contains `q` (case-insensitive), filtered and sorted as requested.
#[utoipa::path(
    get,
    path = "/v1/search/series",
    tag = "search",
    params(SeriesParams),
    security((), ("api_key" = [])),
    responses((status = 200, description = "A page of series.", body = [SeriesOut]))
)]
async fn search_series(
    State(state): State<AppState>,
    _gate: Gate<groups::Search>,
    ValidQuery(p): ValidQuery<SeriesParams>,
) -> ApiResult<Response> {
    let query = SeriesQuery {
        q: p.q,
        exchange: p.exchange.map(Into::into),
        category: p.category,
        status: p.status.into(),
        sort: p.sort_by.into(),
        limit: p.limit,
        offset: p.offset,
    };
    let key = format!("series {query:?}");
    state
        .search_cache
        .json(key, async {
            let rows = state.store.search_series(&query).await?;
            Ok(rows.into_iter().map(SeriesOut::from).collect::<Vec<_>>())
        })
        .await
}

/// Search events
///
/// Events matching `q` and/or belonging to `series_id` (at least one of the two is required), with the
/// aggregates of their markets.
#[utoipa::path(
    get,
    path = "/v1/search/events",
    tag = "search",
    params(EventsParams),
    security((), ("api_key" = [])),
    responses((status = 200, description = "A page of events.", body = [EventOut]))
)]
async fn search_events(
    State(state): State<AppState>,
    _gate: Gate<groups::Search>,
    ValidQuery(p): ValidQuery<EventsParams>,
) -> ApiResult<Response> {
    let query = p.into_query();
    let key = format!("events {query:?}");
    state
        .search_cache
        .json(key, async {
            let rows = state.store.search_events(&query).await?;
            Ok(rows.into_iter().map(EventOut::from).collect::<Vec<_>>())
        })
        .await
}

/// Search markets
///
/// Markets matching `q` (or whose `interval_code` equals `q`) and/or belonging to `series_id` (at least one
/// of the two is required).
#[utoipa::path(
    get,
    path = "/v1/search/markets",
    tag = "search",
    params(MarketsParams),
    security((), ("api_key" = [])),
    responses((status = 200, description = "A page of markets.", body = [MarketOut]))
)]
async fn search_markets(
    State(state): State<AppState>,
    _gate: Gate<groups::Search>,
    ValidQuery(p): ValidQuery<MarketsParams>,
) -> ApiResult<Response> {
    let query = p.into_query();
    let key = format!("markets {query:?}");
    state
        .search_cache
        .json(key, async {
            let rows = state.store.search_markets(&query).await?;
            Ok(rows.into_iter().map(MarketOut::from).collect::<Vec<_>>())
        })
        .await
}

/// Recently ingested events
///
/// The latest events the service has discovered, newest `discovered_at` first.
#[utoipa::path(
    get,
    path = "/v1/search/recent/events",
    tag = "search",
    params(RecentParams),
    security((), ("api_key" = [])),
    responses((status = 200, description = "A page of events, newest first.", body = [RecentEventOut]))
)]
async fn recent_events(
    State(state): State<AppState>,
    _gate: Gate<groups::Search>,
    ValidQuery(p): ValidQuery<RecentParams>,
) -> ApiResult<Json<Vec<RecentEventOut>>> {
    let rows = state.store.recent_events(&p.into_query()).await?;
    Ok(Json(
        rows.into_iter()
            .map(|s| RecentEventOut {
                discovered_at: iso(s.discovered_at),
                event: s.into(),
            })
            .collect(),
    ))
}

/// Recently ingested markets
///
/// The latest markets the service has discovered, newest `discovered_at` first.
#[utoipa::path(
    get,
    path = "/v1/search/recent/markets",
    tag = "search",
    params(RecentParams),
    security((), ("api_key" = [])),
    responses((status = 200, description = "A page of markets, newest first.", body = [RecentMarketOut]))
)]
async fn recent_markets(
    State(state): State<AppState>,
    _gate: Gate<groups::Search>,
    ValidQuery(p): ValidQuery<RecentParams>,
) -> ApiResult<Json<Vec<RecentMarketOut>>> {
    let rows = state.store.recent_markets(&p.into_query()).await?;
    Ok(Json(
        rows.into_iter()
            .map(|s| RecentMarketOut {
                discovered_at: iso(s.discovered_at),
                market: s.into(),
            })
            .collect(),
    ))
}

/// Markets of one event
///
/// All markets under the event `event_id` (on whichever venue has it), highest volume first. 404 when no
/// venue has such an event.
#[utoipa::path(
    get,
    path = "/v1/search/events/{event_id}/markets",
    tag = "search",
    params(
        ("event_id" = String, Path, description = "Source event ticker / ID, as in `event_id` of an event."),
        EventMarketsParams
    ),
    security((), ("api_key" = [])),
    responses(
        (status = 200, description = "A page of the event's markets.", body = [MarketOut]),
        (status = 404, description = "No event with this id.", body = ErrorBody),
    )
)]
async fn event_markets(
    State(state): State<AppState>,
    _gate: Gate<groups::Search>,
    Path(event_id): Path<String>,
    ValidQuery(p): ValidQuery<EventMarketsParams>,
) -> ApiResult<Json<Vec<MarketOut>>> {
    let event_id = text_value("event_id", &event_id)?;
    let Some(event) = state.store.find_event(&event_id).await? else {
        return Err(ApiError::not_found(format!("no event with id {event_id:?}")));
    };
    let query = MarketQuery {
        q: None,
        series_id: None,
        event_id: Some(event.event.event_id),
        exchange: Some(event.event.exchange),
        category: None,
        status: p.status.into(),
        min_volume: None,
        min_liquidity: None,
        discovered_after: None,
        settled_after: None,
        settled_before: None,
        sort: MarketSort::Volume,
        limit: p.limit,
        offset: p.offset,
    };
    let rows = state.store.search_markets(&query).await?;
    Ok(Json(rows.into_iter().map(Into::into).collect()))
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::api::common::tests::assert_spellings_match_serde;

    #[test]
    fn sort_spellings_match_their_schemas() {
        assert_spellings_match_serde::<SeriesSortBy>();
        assert_spellings_match_serde::<EventSortBy>();
        assert_spellings_match_serde::<MarketSortBy>();
    }

    /// The documented `limit` of every route is the one enforced.
    #[test]
    fn documented_limits_match_enforced_limits() {
        let doc = serde_json::to_value(crate::api::openapi()).unwrap();
        let cases = [
            ("/v1/search", COMBINED_LIMIT),
            ("/v1/search/series", SERIES_LIMIT),
            ("/v1/search/events", SEARCH_LIMIT),
            ("/v1/search/markets", SEARCH_LIMIT),
            ("/v1/search/recent/events", RECENT_LIMIT),
            ("/v1/search/recent/markets", RECENT_LIMIT),
            ("/v1/search/events/{event_id}/markets", EVENT_MARKETS_LIMIT),
        ];
        for (path, limit) in cases {
            for p in [path.to_string(), path.trim_start_matches("/v1").to_string()] {
                let params = doc["paths"][&p]["get"]["parameters"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{p}"));
                let schema = &params.iter().find(|x| x["name"] == "limit").unwrap()["schema"];
                assert_eq!(schema["minimum"], Value::from(1), "{p}");
                assert_eq!(schema["maximum"], Value::from(limit.max), "{p}");
                assert_eq!(schema["default"], Value::from(limit.default), "{p}");
            }
        }
    }
}
