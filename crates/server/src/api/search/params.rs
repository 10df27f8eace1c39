//! Search parameters: sort orders and the validated query of each route, with its limits.

use crossbook_core::{Amount, Exchange, Status, Timestamp};
use crossbook_store::{EventQuery, EventSort, MarketQuery, MarketSort, RecentQuery, SeriesSort};
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};

use crate::{
    error::{ApiError, ApiResult},
    params::{
        AmountQuery, Defaulted, FromQuery, Limit, Offset, ParamDefault, ParamEnum, QueryMap, Text, TimestampQuery,
    },
};

/// `limit` of `/v1/search/series`.
pub type SeriesLimit = Limit<30, 100>;
/// `limit` of `/v1/search/events` and `/v1/search/markets`.
pub type SearchLimit = Limit<20, 100>;
/// `limit` of the two recent routes.
pub type RecentLimit = Limit<25, 100>;
/// `limit` of `/v1/search/events/{event_id}/markets`.
pub type EventMarketsLimit = Limit<100, 100>;
/// `limit` of the combined `/v1/search`, applied to each of its three arrays.
pub type CombinedLimit = Limit<10, 50>;

/// `sort_by` of `/v1/search/series` when absent.
impl ParamDefault for SeriesSortBy {
    const DEFAULT: Self = SeriesSortBy::Title;
}

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
    #[param(inline)]
    pub q: Text,
    /// Only this venue.
    #[param(inline)]
    pub exchange: Option<Exchange>,
    /// Status of the returned items.
    #[param(inline, required = false)]
    pub status: Defaulted<Status>,
    /// Maximum items in each of the three arrays.
    #[param(inline, required = false)]
    pub limit: CombinedLimit,
}

impl FromQuery for CombinedParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(CombinedParams {
            q: q.get("q")?,
            exchange: q.one_of("exchange")?,
            status: q.get("status")?,
            limit: q.get("limit")?,
        })
    }
}

/// Parameters of `/v1/search/series`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SeriesParams {
    /// Case-insensitive substring match on `series_id` and `title`. Several words separated by spaces match when
    /// every word does.
    #[param(inline)]
    pub q: Option<Text>,
    /// Only this venue.
    #[param(inline)]
    pub exchange: Option<Exchange>,
    /// Exact category match.
    #[param(inline)]
    pub category: Option<Text>,
    /// Status of the returned series.
    #[param(inline, required = false)]
    pub status: Defaulted<Status>,
    /// Order of the results: `title` (A to Z) or `newest` (by `discovered_at`).
    #[param(inline, required = false)]
    pub sort_by: Defaulted<SeriesSortBy>,
    /// Page size.
    #[param(inline, required = false)]
    pub limit: SeriesLimit,
    /// Items to skip.
    #[param(inline, required = false)]
    pub offset: Offset,
}

impl FromQuery for SeriesParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(SeriesParams {
            q: q.get("q")?,
            exchange: q.one_of("exchange")?,
            category: q.get("category")?,
            status: q.get("status")?,
            sort_by: q.get("sort_by")?,
            limit: q.get("limit")?,
            offset: q.get("offset")?,
        })
    }
}

/// Parameters of `/v1/search/events`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsParams {
    /// Case-insensitive substring match on title, subtitle, source event id and market questions. Several words
    /// separated by spaces match when every word does (each in any of those fields); with `relevance`, events
    /// containing the whole text come first. Required unless `series_id` is set. Either `q` or `series_id` is required.
    #[param(inline)]
    pub q: Option<Text>,
    /// Only events of this series. Required unless `q` is set. Either `q` or `series_id` is required.
    #[param(inline)]
    pub series_id: Option<Text>,
    /// Only this venue.
    #[param(inline)]
    pub exchange: Option<Exchange>,
    /// Exact category match.
    #[param(inline)]
    pub category: Option<Text>,
    /// Status of the returned events.
    #[param(inline, required = false)]
    pub status: Defaulted<Status>,
    /// Minimum aggregate volume across the child markets (inclusive).
    #[param(value_type = Option<AmountQuery>, inline)]
    pub min_volume: Option<Amount>,
    /// ISO 8601 timestamp or date; keeps events with `discovered_at >= discovered_after`.
    #[param(value_type = Option<TimestampQuery>, inline)]
    pub discovered_after: Option<Timestamp>,
    /// Order of the results. Default: `relevance` when `q` is set, else `newest`. `relevance` without `q`
    /// orders as `newest`.
    #[param(inline)]
    pub sort_by: Option<EventSortBy>,
    /// Page size.
    #[param(inline, required = false)]
    pub limit: SearchLimit,
    /// Items to skip.
    #[param(inline, required = false)]
    pub offset: Offset,
}

impl FromQuery for EventsParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let p = EventsParams {
            q: q.get("q")?,
            series_id: q.get("series_id")?,
            exchange: q.one_of("exchange")?,
            category: q.get("category")?,
            status: q.get("status")?,
            min_volume: q.non_negative_amount("min_volume")?,
            discovered_after: q.timestamp("discovered_after")?,
            sort_by: q.one_of("sort_by")?,
            limit: q.get("limit")?,
            offset: q.get("offset")?,
        };
        if p.q.is_none() && p.series_id.is_none() {
            return Err(ApiError::missing_one_of(&["q", "series_id"]));
        }
        Ok(p)
    }
}

impl EventsParams {
    pub(super) fn into_query(self) -> EventQuery {
        let sort = match (self.sort_by, &self.q) {
            (None | Some(EventSortBy::Relevance), Some(_)) => EventSort::Relevance,
            (None | Some(EventSortBy::Relevance), None) => EventSort::Newest,
            (Some(s), _) => s.into(),
        };
        EventQuery {
            q: self.q.map(Text::into_inner),
            series_id: self.series_id.map(Text::into_inner),
            exchange: self.exchange,
            category: self.category.map(Text::into_inner),
            status: self.status.0,
            min_volume: self.min_volume,
            discovered_after: self.discovered_after,
            sort,
            limit: self.limit.get(),
            offset: self.offset.get(),
        }
    }
}

/// Parameters of `/v1/search/markets`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MarketsParams {
    /// Case-insensitive substring match on question, title, subtitle, description, market id and slug, or an
    /// exact `interval_code` (`5m`, `15m`, `1h`, `24h`, `1w`). Several words separated by spaces match when every
    /// word does (each in any of those fields, `btc 15m`); with `relevance`, markets containing the whole text
    /// come first. Required unless `series_id` is set. Either `q` or `series_id` is required.
    #[param(inline)]
    pub q: Option<Text>,
    /// Only markets of this series. Required unless `q` is set. Either `q` or `series_id` is required.
    #[param(inline)]
    pub series_id: Option<Text>,
    /// Only this venue.
    #[param(inline)]
    pub exchange: Option<Exchange>,
    /// Exact category match.
    #[param(inline)]
    pub category: Option<Text>,
    /// Status of the returned markets.
    #[param(inline, required = false)]
    pub status: Defaulted<Status>,
    /// Minimum market volume (inclusive).
    #[param(value_type = Option<AmountQuery>, inline)]
    pub min_volume: Option<Amount>,
    /// Minimum market liquidity (inclusive).
    #[param(value_type = Option<AmountQuery>, inline)]
    pub min_liquidity: Option<Amount>,
    /// ISO 8601 timestamp or date; keeps markets with `discovered_at >= discovered_after`.
    #[param(value_type = Option<TimestampQuery>, inline)]
    pub discovered_after: Option<Timestamp>,
    /// ISO 8601 lower bound on `settled_at` (inclusive); intended with `status=closed`.
    #[param(value_type = Option<TimestampQuery>, inline)]
    pub settled_after: Option<Timestamp>,
    /// ISO 8601 upper bound on `settled_at` (inclusive).
    #[param(value_type = Option<TimestampQuery>, inline)]
    pub settled_before: Option<Timestamp>,
    /// Order of the results. Default: `relevance` when `q` is set, else `newest`. `relevance` without `q`
    /// orders as `newest`.
    #[param(inline)]
    pub sort_by: Option<MarketSortBy>,
    /// Page size.
    #[param(inline, required = false)]
    pub limit: SearchLimit,
    /// Items to skip.
    #[param(inline, required = false)]
    pub offset: Offset,
}

impl FromQuery for MarketsParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let p = MarketsParams {
            q: q.get("q")?,
            series_id: q.get("series_id")?,
            exchange: q.one_of("exchange")?,
            category: q.get("category")?,
            status: q.get("status")?,
            min_volume: q.non_negative_amount("min_volume")?,
            min_liquidity: q.non_negative_amount("min_liquidity")?,
            discovered_after: q.timestamp("discovered_after")?,
            settled_after: q.timestamp("settled_after")?,
            settled_before: q.timestamp("settled_before")?,
            sort_by: q.one_of("sort_by")?,
            limit: q.get("limit")?,
            offset: q.get("offset")?,
        };
        if p.q.is_none() && p.series_id.is_none() {
            return Err(ApiError::missing_one_of(&["q", "series_id"]));
        }
        Ok(p)
    }
}

impl MarketsParams {
    pub(super) fn into_query(self) -> MarketQuery {
        let sort = match (self.sort_by, &self.q) {
            (None | Some(MarketSortBy::Relevance), Some(_)) => MarketSort::Relevance,
            (None | Some(MarketSortBy::Relevance), None) => MarketSort::Newest,
            (Some(s), _) => s.into(),
        };
        MarketQuery {
            q: self.q.map(Text::into_inner),
            series_id: self.series_id.map(Text::into_inner),
            event_id: None,
            exchange: self.exchange,
            category: self.category.map(Text::into_inner),
            status: self.status.0,
            min_volume: self.min_volume,
            min_liquidity: self.min_liquidity,
            discovered_after: self.discovered_after,
            settled_after: self.settled_after,
            settled_before: self.settled_before,
            sort,
            limit: self.limit.get(),
            offset: self.offset.get(),
        }
    }
}

/// Parameters of `/v1/search/recent/events` and `/v1/search/recent/markets`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RecentParams {
    /// Only this venue.
    #[param(inline)]
    pub exchange: Option<Exchange>,
    /// Status of the returned items.
    #[param(inline, required = false)]
    pub status: Defaulted<Status>,
    /// Page size.
    #[param(inline, required = false)]
    pub limit: RecentLimit,
    /// Items to skip.
    #[param(inline, required = false)]
    pub offset: Offset,
}

impl FromQuery for RecentParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(RecentParams {
            exchange: q.one_of("exchange")?,
            status: q.get("status")?,
            limit: q.get("limit")?,
            offset: q.get("offset")?,
        })
    }
}

impl RecentParams {
    pub(super) fn into_query(self) -> RecentQuery {
        RecentQuery {
            exchange: self.exchange,
            status: self.status.0,
            limit: self.limit.get(),
            offset: self.offset.get(),
        }
    }
}

/// Query parameters of `/v1/search/events/{event_id}/markets`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventMarketsParams {
    /// Status of the returned markets.
    #[param(inline, required = false)]
    pub status: Defaulted<Status>,
    /// Page size.
    #[param(inline, required = false)]
    pub limit: EventMarketsLimit,
    /// Items to skip.
    #[param(inline, required = false)]
    pub offset: Offset,
}

impl FromQuery for EventMarketsParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(EventMarketsParams {
            status: q.get("status")?,
            limit: q.get("limit")?,
            offset: q.get("offset")?,
        })
    }
}
