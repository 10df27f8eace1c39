//! Whale views of one event or one market (any event the catalog knows, watched or not), the markets of the
//! watchlist ranked by whale volume, and adding an event by its web address.
//!
//! The threshold of a view is the whale service's rule ([`crate::whales::threshold`]): `min_trade_size` when
//! given, else the caller's watchlist threshold for the event, else the default threshold of a new watchlist
//! entry. Every answer says which threshold applied and where it came from.

use axum::{extract::State, http::StatusCode};
use crossbook_core::{Amount, Exchange, Market, Timestamp};
use crossbook_store::{MarketWhales, WhaleAggregate, WhaleQuery, WhaleTarget};
use crossbook_venues::web_url::{UrlError, event_of_url};
use serde::Serialize;
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    FeedLimit, FeedStatsOut, OffsetPaginationOut, StatsPeriod, WatchAddedOut, WhaleTradeOut, body_object, body_text,
    customer,
    params::{ThresholdQuery, threshold_param},
    watch_added, watch_error,
};
use crate::{
    AppState,
    access::{Gate, groups},
    api::common::{dollars, find_market, iso},
    error::{ApiError, ApiResult, ErrorBody},
    json::Json,
    params::{
        Defaulted, FromQuery, Offset, Path, QueryMap, Text, TextValue, TimestampQuery, ValidQuery, check_order,
        text_value,
    },
    whales::{ThresholdSource, WatchError, day_ago, default_threshold, market_ticker, view_threshold},
};

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(event_trades))
        .routes(routes!(event_stats))
        .routes(routes!(user_markets))
        .routes(routes!(market_stats))
        .routes(routes!(market_trades))
        .routes(routes!(add_event_by_url))
}

// ------------------------------------------------------------------------------------------------ parameters

/// Parameters of the trade lists of one event or market.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ViewTradesParams {
    /// Page size.
    #[param(inline, required = false)]
    pub limit: FeedLimit,
    /// Trades to skip.
    #[param(inline, required = false)]
    pub offset: Offset,
    /// Only trades executed at or after this time (ISO 8601, or a date).
    #[param(value_type = Option<TimestampQuery>, inline)]
    pub start_date: Option<Timestamp>,
    /// Only trades executed at or before this time (ISO 8601, or a date).
    #[param(value_type = Option<TimestampQuery>, inline)]
    pub end_date: Option<Timestamp>,
    /// Minimum notional in dollars, instead of the watchlist threshold (or the default threshold).
    #[param(value_type = Option<ThresholdQuery>, inline)]
    pub min_trade_size: Option<Amount>,
    /// Only look the event or market up on this venue (else venue_a, then venue_b).
    #[param(inline)]
    pub exchange: Option<Exchange>,
}

impl FromQuery for ViewTradesParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let p = ViewTradesParams {
            limit: q.get("limit")?,
            offset: q.get("offset")?,
            start_date: q.timestamp("start_date")?,
            end_date: q.timestamp("end_date")?,
            min_trade_size: threshold_param(q, "min_trade_size")?,
            exchange: q.one_of("exchange")?,
        };
        check_order("start_date", p.start_date, "end_date", p.end_date)?;
        Ok(p)
    }
}

/// Parameters of the stats of one event or market.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ViewStatsParams {
    /// The period the stats cover.
    #[param(inline, required = false)]
    pub period: Defaulted<StatsPeriod>,
    /// Minimum notional in dollars, instead of the watchlist threshold (or the default threshold).
    #[param(value_type = Option<ThresholdQuery>, inline)]
    pub min_trade_size: Option<Amount>,
    /// Only look the event or market up on this venue (else venue_a, then venue_b).
    #[param(inline)]
    pub exchange: Option<Exchange>,
}

impl FromQuery for ViewStatsParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(ViewStatsParams {
            period: q.get("period")?,
            min_trade_size: threshold_param(q, "min_trade_size")?,
            exchange: q.one_of("exchange")?,
        })
    }
}

/// Parameters of `/whales/user/markets`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UserMarketsParams {
    /// The period whale trades are counted over.
    #[param(inline, required = false)]
    pub period: Defaulted<StatsPeriod>,
    /// Page size.
    #[param(inline, required = false)]
    pub limit: FeedLimit,
    /// Markets to skip.
    #[param(inline, required = false)]
    pub offset: Offset,
    /// Only this venue.
    #[param(inline)]
    pub platform: Option<Exchange>,
}

impl FromQuery for UserMarketsParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(UserMarketsParams {
            period: q.get("period")?,
            limit: q.get("limit")?,
            offset: q.get("offset")?,
            platform: q.one_of("platform")?,
        })
    }
}

/// Body of `POST /whales/user/events/by-url`.
#[derive(Debug, Clone, ToSchema)]
#[allow(dead_code)]
pub struct AddByUrlIn {
    /// The address of the event's web page on its venue, with or without the leading `https`:
    /// `kalshi.com/markets/{series}/…/{event-ticker}` (venue_a) or `polymarket.com/event/{slug}` (venue_b).
    #[schema(value_type = TextValue, examples("polymarket.com/event/bitcoin-up-or-down-on-november-21"))]
    url: String,
    /// Notional in dollars at or above which a trade is a whale; default 1000.
    #[schema(minimum = 0)]
    whale_threshold_usd: Option<f64>,
}

// ------------------------------------------------------------------------------------------------ outputs

/// The threshold a view applied.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ThresholdOut {
    /// Notional in dollars at or above which a trade is counted.
    pub threshold_usd: f64,
    pub threshold_source: ThresholdSource,
    /// Whether the event is on the caller's watchlist.
    pub on_watchlist: bool,
}

/// Whale stats over a period.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WhaleStatsOut {
    /// Whale trades.
    pub trade_count: i64,
    /// Their summed notional, in dollars.
    pub total_volume: f64,
    /// `total_volume / trade_count`; 0 without trades.
    pub avg_trade_size: f64,
}

impl From<WhaleAggregate> for WhaleStatsOut {
    fn from(a: WhaleAggregate) -> Self {
        WhaleStatsOut {
            trade_count: a.trade_count,
            total_volume: dollars(a.total_volume),
            avg_trade_size: dollars(a.average()),
        }
    }
}

/// One market's whale trades over a period.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MarketWhalesOut {
    pub exchange: Exchange,
    pub market_id: String,
    /// venue_a: the market ticker; venue_b: the market slug (the condition id when it has none).
    pub market_ticker: String,
    /// The market's headline (its id when the catalog does not have the market).
    pub market_title: String,
    pub event_id: String,
    pub stats: WhaleStatsOut,
    /// The newest whale trade's execution time.
    #[schema(format = DateTime)]
    pub last_trade_at: String,
}

impl From<MarketWhales> for MarketWhalesOut {
    fn from(m: MarketWhales) -> Self {
        MarketWhalesOut {
            exchange: m.exchange,
            market_ticker: market_ticker(m.exchange, &m.market_id, m.market_slug.as_deref()),
            market_title: m.market_title.unwrap_or_else(|| m.market_id.clone()),
            market_id: m.market_id,
            event_id: m.event_id,
            stats: m.whales.into(),
            last_trade_at: iso(m.last_trade_at),
        }
    }
}

/// What a view covers: an event, or one market of it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SubjectOut {
    pub exchange: Exchange,
    pub event_id: String,
    /// The event's title; null when the catalog does not have the event.
    #[schema(required = true)]
    pub event_title: Option<String>,
    /// Market views only: the market.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub market_id: Option<String>,
    /// Market views only: the market's headline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub market_title: Option<String>,
}

/// Whale trades of one event or market, newest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ViewTradesOut {
    #[serde(flatten)]
    pub subject: SubjectOut,
    #[serde(flatten)]
    pub threshold: ThresholdOut,
    pub trades: Vec<WhaleTradeOut>,
    /// The last 24 hours at the same threshold.
    pub stats: FeedStatsOut,
    pub pagination: OffsetPaginationOut,
}

/// Whale stats of one event or market over a period; an event's also ranks its markets.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ViewStatsOut {
    #[serde(flatten)]
    pub subject: SubjectOut,
    #[serde(flatten)]
    pub threshold: ThresholdOut,
    pub period: StatsPeriod,
    pub stats: WhaleStatsOut,
    /// Event views: its markets with whale trades in the period, highest whale volume first (at most 50).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub markets: Option<Vec<MarketWhalesOut>>,
}

/// Markets of the watchlist's events ranked by whale volume.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UserMarketsOut {
    pub period: StatsPeriod,
    /// Highest whale volume first, each event at its watchlist threshold.
    pub markets: Vec<MarketWhalesOut>,
    pub pagination: OffsetPaginationOut,
}

// ------------------------------------------------------------------------------------------------ helpers

/// The event a view covers, and its title.
struct Subject {
    exchange: Exchange,
    event_id: String,
    event_title: Option<String>,
    market: Option<Market>,
}

impl Subject {
    async fn event(state: &AppState, raw: &str, exchange: Option<Exchange>) -> ApiResult<Self> {
        let event_id = text_value("event_id", raw)?;
        let found = match exchange {
            Some(ex) => state.store.get_event(ex, &event_id).await?,
            None => state.store.find_event(&event_id).await?,
        };
        let Some(e) = found else {
            return Err(ApiError::not_found(format!("no event with id {event_id:?}")));
        };
        Ok(Subject {
            exchange: e.event.exchange,
            event_id: e.event.event_id,
            event_title: Some(e.event.title),
            market: None,
        })
    }

    async fn market(state: &AppState, raw: &str, exchange: Option<Exchange>) -> ApiResult<Self> {
        let market_id = text_value("market_id", raw)?;
        let Some(market) = find_market(state, &market_id, exchange).await? else {
            return Err(ApiError::not_found(format!("no market with id {market_id:?}")));
        };
        let title = state
            .store
            .get_event(market.exchange, &market.event_id)
            .await?
            .map(|e| e.event.title);
        Ok(Subject {
            exchange: market.exchange,
            event_id: market.event_id.clone(),
            event_title: title,
            market: Some(market),
        })
    }

    fn target(&self, min: Amount) -> WhaleTarget {
        WhaleTarget {
            market_id: self.market.as_ref().map(|m| m.market_id.clone()),
            ..WhaleTarget::event(self.exchange, &self.event_id, min)
        }
    }

    fn out(&self) -> SubjectOut {
        SubjectOut {
            exchange: self.exchange,
            event_id: self.event_id.clone(),
            event_title: self.event_title.clone(),
            market_id: self.market.as_ref().map(|m| m.market_id.clone()),
            market_title: self
                .market
                .as_ref()
                .map(|m| m.title.clone().unwrap_or_else(|| m.question.clone())),
        }
    }

    /// The threshold of the view ([`crate::whales::threshold`]).
    async fn threshold(
        &self,
        state: &AppState,
        customer: i64,
        asked: Option<Amount>,
    ) -> ApiResult<(Amount, ThresholdOut)> {
        let default = default_threshold(&state.config);
        let t = view_threshold(
            state.store.as_ref(),
            default,
            customer,
            self.exchange,
            &self.event_id,
            asked,
        )
        .await?;
        Ok((
            t.min,
            ThresholdOut {
                threshold_usd: dollars(t.min),
                threshold_source: t.source,
                on_watchlist: t.on_watchlist,
            },
        ))
    }
}

async fn trades_view(state: &AppState, customer: i64, s: Subject, p: ViewTradesParams) -> ApiResult<ViewTradesOut> {
    let (min, threshold) = s.threshold(state, customer, p.min_trade_size).await?;
    let q = WhaleQuery {
        targets: vec![s.target(min)],
        start: p.start_date,
        end: p.end_date,
        limit: p.limit.get(),
        offset: p.offset.get(),
        stats_since: day_ago(Timestamp::now()),
    };
    let page = state.store.whale_trades(&q).await?;
    Ok(ViewTradesOut {
        subject: s.out(),
        threshold,
        trades: page.trades.into_iter().map(Into::into).collect(),
        stats: page.recent.into(),
        pagination: OffsetPaginationOut {
            limit: p.limit.get(),
            offset: p.offset.get(),
            total: page.total,
        },
    })
}

/// Markets an event's stats rank.
const EVENT_MARKETS: u32 = 50;

async fn stats_view(state: &AppState, customer: i64, s: Subject, p: ViewStatsParams) -> ApiResult<ViewStatsOut> {
    let (min, threshold) = s.threshold(state, customer, p.min_trade_size).await?;
    let since = p.period.0.since(Timestamp::now());
    let targets = [s.target(min)];
    let stats = state.store.whale_stats(&targets, since).await?;
    let markets = match s.market {
        Some(_) => None,
        None => Some(
            state
                .store
                .whale_markets(&targets, since, EVENT_MARKETS, 0)
                .await?
                .markets
                .into_iter()
                .map(Into::into)
                .collect(),
        ),
    };
    Ok(ViewStatsOut {
        subject: s.out(),
        threshold,
        period: p.period.0,
        stats: stats.first().map(|t| t.whales).unwrap_or_default().into(),
        markets,
    })
}

// ------------------------------------------------------------------------------------------------ handlers

/// Whale trades of one event
///
/// Any event the service knows, on the caller's watchlist or not, newest first. The threshold is
/// `min_trade_size` when given, else the caller's watchlist threshold for the event, else 1000 dollars (the
/// default of a new watchlist entry); `threshold_source` says which.
#[utoipa::path(
    get,
    path = "/whales/user/event/{event_id}",
    tag = "whales",
    params(("event_id" = inline(Text), Path, description = "The venue's event id (venue_a ticker, venue_b id)."), ViewTradesParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "A page of the event's whale trades.", body = ViewTradesOut),
        (status = 401, description = "No valid key.", body = ErrorBody),
        (status = 404, description = "No event with this id.", body = ErrorBody),
    )
)]
async fn event_trades(
    State(state): State<AppState>,
    gate: Gate<groups::PersonalWhales>,
    Path(event_id): Path<String>,
    ValidQuery(p): ValidQuery<ViewTradesParams>,
) -> ApiResult<Json<ViewTradesOut>> {
    let customer = customer(&gate)?;
    let s = Subject::event(&state, &event_id, p.exchange).await?;
    trades_view(&state, customer, s, p).await.map(Json)
}

/// Whale stats of one event
///
/// Whale trades of the event over `period` (count, volume, average size) and its markets ranked by whale
/// volume, at the threshold of the event's trade list.
#[utoipa::path(
    get,
    path = "/whales/user/event/{event_id}/stats",
    tag = "whales",
    params(("event_id" = inline(Text), Path, description = "The venue's event id (venue_a ticker, venue_b id)."), ViewStatsParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The event's whale stats.", body = ViewStatsOut),
        (status = 401, description = "No valid key.", body = ErrorBody),
        (status = 404, description = "No event with this id.", body = ErrorBody),
    )
)]
async fn event_stats(
    State(state): State<AppState>,
    gate: Gate<groups::PersonalWhales>,
    Path(event_id): Path<String>,
    ValidQuery(p): ValidQuery<ViewStatsParams>,
) -> ApiResult<Json<ViewStatsOut>> {
    let customer = customer(&gate)?;
    let s = Subject::event(&state, &event_id, p.exchange).await?;
    stats_view(&state, customer, s, p).await.map(Json)
}

/// Markets of the watchlist by whale volume
///
/// The markets of the caller's watchlist events that had whale trades in `period` (each event at its own
/// threshold), highest whale volume first.
#[utoipa::path(
    get,
    path = "/whales/user/markets",
    tag = "whales",
    params(UserMarketsParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "A page of markets.", body = UserMarketsOut),
        (status = 401, description = "No valid key.", body = ErrorBody),
    )
)]
async fn user_markets(
    State(state): State<AppState>,
    gate: Gate<groups::PersonalWhales>,
    ValidQuery(p): ValidQuery<UserMarketsParams>,
) -> ApiResult<Json<UserMarketsOut>> {
    let customer = customer(&gate)?;
    let targets: Vec<WhaleTarget> = state
        .store
        .list_watch(customer, None)
        .await?
        .into_iter()
        .filter(|e| p.platform.is_none_or(|x| x == e.exchange))
        .map(|e| WhaleTarget::event(e.exchange, &e.event_id, e.threshold))
        .collect();
    let page = state
        .store
        .whale_markets(
            &targets,
            p.period.0.since(Timestamp::now()),
            p.limit.get(),
            p.offset.get(),
        )
        .await?;
    Ok(Json(UserMarketsOut {
        period: p.period.0,
        markets: page.markets.into_iter().map(Into::into).collect(),
        pagination: OffsetPaginationOut {
            limit: p.limit.get(),
            offset: p.offset.get(),
            total: page.total,
        },
    }))
}

/// Whale stats of one market
///
/// Whale trades of one market over `period`, at its event's threshold (as on the event routes).
#[utoipa::path(
    get,
    path = "/whales/user/market/{market_id}/stats",
    tag = "whales",
    params(("market_id" = inline(Text), Path, description = "venue_a ticker, venue_b condition id or numeric id."), ViewStatsParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The market's whale stats.", body = ViewStatsOut),
        (status = 401, description = "No valid key.", body = ErrorBody),
        (status = 404, description = "No market with this id.", body = ErrorBody),
    )
)]
async fn market_stats(
    State(state): State<AppState>,
    gate: Gate<groups::PersonalWhales>,
    Path(market_id): Path<String>,
    ValidQuery(p): ValidQuery<ViewStatsParams>,
) -> ApiResult<Json<ViewStatsOut>> {
    let customer = customer(&gate)?;
    let s = Subject::market(&state, &market_id, p.exchange).await?;
    stats_view(&state, customer, s, p).await.map(Json)
}

/// Whale trades of one market
///
/// One market's whale trades, newest first, at its event's threshold (as on the event routes).
#[utoipa::path(
    get,
    path = "/whales/user/market/{market_id}/trades",
    tag = "whales",
    params(("market_id" = inline(Text), Path, description = "venue_a ticker, venue_b condition id or numeric id."), ViewTradesParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "A page of the market's whale trades.", body = ViewTradesOut),
        (status = 401, description = "No valid key.", body = ErrorBody),
        (status = 404, description = "No market with this id.", body = ErrorBody),
    )
)]
async fn market_trades(
    State(state): State<AppState>,
    gate: Gate<groups::PersonalWhales>,
    Path(market_id): Path<String>,
    ValidQuery(p): ValidQuery<ViewTradesParams>,
) -> ApiResult<Json<ViewTradesOut>> {
    let customer = customer(&gate)?;
    let s = Subject::market(&state, &market_id, p.exchange).await?;
    trades_view(&state, customer, s, p).await.map(Json)
}

/// Adds an event to the watchlist by its web address.
///
/// The address of the event's page on its venue, with or without the leading `https`:
/// `kalshi.com/markets/{series}/…/{event-ticker}` or `polymarket.com/event/{slug}`. An address that is not an
/// event page is a 400 naming `url`; an event
/// the venue does not know is a 404. Otherwise as `POST /whales/user/events/by-ticker`.
#[utoipa::path(
    post,
    path = "/whales/user/events/by-url",
    tag = "whales",
    request_body = AddByUrlIn,
    security(("api_key" = [])),
    responses(
        (status = 201, description = "Added.", body = WatchAddedOut),
        (status = 400, description = "Invalid body, an address that is not an event page, or a closed event.", body = ErrorBody),
        (status = 401, description = "No valid key.", body = ErrorBody),
        (status = 404, description = "The venue does not know the event.", body = ErrorBody),
        (status = 409, description = "Already on the watchlist.", body = ErrorBody),
        (status = 503, description = "The venue could not be asked about an event the service had not seen.", body = ErrorBody),
    )
)]
async fn add_event_by_url(
    State(state): State<AppState>,
    gate: Gate<groups::PersonalWhales>,
    Json(body): Json<Value>,
) -> ApiResult<(StatusCode, Json<WatchAddedOut>)> {
    let customer = customer(&gate)?;
    let obj = body_object(&body)?;
    let url = body_text(obj, "url")?;
    let (exchange, ticker) = event_of_url(&url).map_err(|e: UrlError| ApiError::invalid("url", e.to_string()))?;
    watch_added(&state, customer, obj, exchange, &ticker, |e| match e {
        WatchError::UnknownEvent { .. } => ApiError::not_found(format!(
            "url names {exchange} event {ticker:?}, which the venue does not know"
        )),
        WatchError::Closed { .. } => ApiError::invalid("url", e.to_string()),
        e => watch_error(e),
    })
    .await
}
