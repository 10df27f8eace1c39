//! Whale tracking (spec §2.13, §4.4, §5.4; contracts §7): the personal watchlist, feed and stats (key required,
//! no `/v1` prefix) and the public preview feed and catalog over the daily pool (`/v1` only, key optional).
//!
//! A whale is a stored trade whose notional `abs(price × size)` meets a threshold (inclusive) on a tracked
//! event; the store reads them per [`WhaleTarget`] (an event and its threshold), so every route here only
//! decides which events and thresholds apply:
//!
//! - personal feed: the caller's watchlist, each entry at its own threshold, or at `min_trade_size` for every
//!   entry when given; `platform` and `event_id` narrow the entries.
//! - public feed and catalog: the unlocked prefix of the day's pool (the first `whale_preview_events` for
//!   free and anonymous callers, the whole pool from Builder up), at `whale_public_min_usd` or a higher
//!   `min_trade_size`.
//!
//! The daily pool ([`daily_pool`]), the watchlist rules ([`add_watch`]) and the whale-entry data are the
//! whale service's ([`crate::whales`]); the handlers here parse, gate, map its errors and shape the output.
//! Adding an event the store does not know asks running ingestion to follow it; a process without
//! ingestion (`--role api`) answers 404 for events its store has not seen.

use axum::{extract::State, http::StatusCode};
use crossbook_core::{Amount, Exchange, Timestamp, whale::utc_day};
use crossbook_store::{WatchEntry, WhaleAggregate, WhaleQuery, WhaleTarget, WhaleTrade};
use serde::Serialize;
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    AppState,
    api::common::{ExchangeName, dollars, iso},
    auth::{Gate, View, groups},
    error::{ApiError, ApiResult, ErrorBody},
    json::Json,
    params::{FromQuery, Limit, ParamEnum, Path, QueryMap, ValidQuery, check_order, text_value},
    whales::{DAY_MS, WatchError, add_watch, daily_pool, day_ago, market_ticker},
};

/// `limit` of both whale feeds (spec §8).
pub const FEED_LIMIT: Limit = Limit::new(50, 500);

/// The largest threshold accepted, in dollars (keeps every notional comparison far from `i64` overflow).
const MAX_THRESHOLD_USD: i64 = 1_000_000_000_000;

/// The whale routes: personal ones without `/v1`, public ones with it only (contracts §9).
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(user_feed))
        .routes(routes!(list_events))
        .routes(routes!(add_event))
        .routes(routes!(patch_event, delete_event))
        .routes(routes!(delete_event_by_ticker))
        .routes(routes!(user_stats))
        .routes(routes!(public_feed))
        .routes(routes!(public_events))
}

// ------------------------------------------------------------------------------------------------ outputs

/// A whale trade (spec 2.13) as the feeds show it: the webhook fields plus `id`, `event_title` and `outcome`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WhaleTradeOut {
    /// The stored trade's id.
    pub id: i64,
    pub exchange: ExchangeName,
    /// The venue's event id.
    pub event_id: String,
    /// The event's title; null when the catalog does not have the event.
    #[schema(required = true)]
    pub event_title: Option<String>,
    pub market_id: String,
    /// venue_a: the market ticker; venue_b: the market slug (the condition id when it has none).
    pub market_ticker: String,
    /// The market's headline (its id when the catalog does not have the market).
    pub market_title: String,
    /// The venue's trade id.
    pub source_trade_id: String,
    #[schema(format = DateTime)]
    pub executed_at: String,
    /// `buy` or `sell`.
    #[schema(examples("buy"))]
    pub taker_side: String,
    /// The outcome traded: `YES` or `NO`.
    #[schema(examples("YES"))]
    pub outcome: String,
    /// Price in dollars, 4 decimals.
    pub price: f64,
    /// Contracts (venue_a) or shares (venue_b), exact to 6 decimals.
    pub size: f64,
    /// `abs(price × size)` in dollars, 2 decimals.
    pub notional_usd: f64,
}

impl From<WhaleTrade> for WhaleTradeOut {
    fn from(t: WhaleTrade) -> Self {
        WhaleTradeOut {
            id: t.id,
            exchange: t.exchange.into(),
            market_ticker: market_ticker(t.exchange, &t.market_id, t.market_slug.as_deref()),
            market_title: t.market_title.unwrap_or_else(|| t.market_id.clone()),
            event_id: t.event_id,
            event_title: t.event_title,
            market_id: t.market_id,
            source_trade_id: t.source_trade_id,
            executed_at: iso(t.executed_at),
            taker_side: t.taker_side.as_str().to_string(),
            outcome: t.outcome.as_str().to_string(),
            price: t.price.to_f64_4(),
            size: t.size.to_f64(6),
            notional_usd: dollars(t.notional),
        }
    }
}

/// Aggregate 24h stats of a feed's event set.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FeedStatsOut {
    /// Summed notional of the whale trades of the last 24 hours, in dollars.
    pub total_volume_24h: f64,
    /// Whale trades of the last 24 hours.
    pub total_trades_24h: i64,
    /// `total_volume_24h / total_trades_24h` in dollars; 0 without trades.
    pub avg_trade_size: f64,
}

impl From<WhaleAggregate> for FeedStatsOut {
    fn from(a: WhaleAggregate) -> Self {
        FeedStatsOut {
            total_volume_24h: dollars(a.total_volume),
            total_trades_24h: a.trade_count,
            avg_trade_size: dollars(a.average()),
        }
    }
}

/// Paging of a feed.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PaginationOut {
    pub limit: u32,
    pub offset: u32,
    /// Whale trades matching the filters, over all pages.
    pub total: i64,
}

/// The personal feed: whale trades of the caller's watchlist, newest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UserFeedOut {
    pub trades: Vec<WhaleTradeOut>,
    /// Over the watchlist events selected by `platform` and `event_id`, at the thresholds of the request.
    pub stats: FeedStatsOut,
    pub pagination: PaginationOut,
}

/// The public feed envelope (spec 2.13).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PublicFeedOut {
    /// Whale trades of the unlocked events, newest first.
    pub trades: Vec<WhaleTradeOut>,
    /// Over the unlocked events only.
    pub stats: FeedStatsOut,
    pub pagination: PaginationOut,
    /// `true` for free and anonymous callers: only a prefix of the pool is unlocked.
    pub preview_only: bool,
    /// Events of the daily pool fully visible to this caller.
    pub unlocked_events: usize,
}

/// A watchlist record (contracts §7).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WatchRecordOut {
    /// The numeric watchlist id (for PATCH and DELETE).
    #[schema(examples(65))]
    pub id: i64,
    pub exchange: ExchangeName,
    /// The venue's event id.
    pub event_id: String,
    /// The venue's event id, as the ticker it was added by.
    pub event_ticker: String,
    /// The event's title; null when the catalog does not have the event.
    #[schema(required = true)]
    pub event_title: Option<String>,
    /// Notional in dollars at or above which a trade of this event is a whale.
    pub whale_threshold_usd: f64,
    /// Whale trades of this event in the last 24 hours, at this threshold.
    pub whale_count_24h: i64,
    #[schema(format = DateTime)]
    pub created_at: String,
}

impl From<WatchEntry> for WatchRecordOut {
    fn from(e: WatchEntry) -> Self {
        WatchRecordOut {
            id: e.id,
            exchange: e.exchange.into(),
            event_ticker: e.event_id.clone(),
            event_id: e.event_id,
            event_title: e.event_title,
            whale_threshold_usd: dollars(e.threshold),
            whale_count_24h: e.whale_count,
            created_at: iso(e.created_at),
        }
    }
}

/// The caller's watchlist.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WatchListOut {
    /// Oldest first.
    pub tracked_events: Vec<WatchRecordOut>,
}

/// Answer to adding an event: `success`, `message` and the record's fields.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WatchAddedOut {
    pub success: bool,
    pub message: String,
    #[serde(flatten)]
    pub record: WatchRecordOut,
}

/// Answer to changing a threshold: `success` and the record's fields.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WatchUpdatedOut {
    pub success: bool,
    #[serde(flatten)]
    pub record: WatchRecordOut,
}

/// Answer to removing an event from the watchlist.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WatchDeletedOut {
    pub success: bool,
    /// The removed record's id.
    pub id: i64,
    pub exchange: ExchangeName,
    pub event_ticker: String,
}

/// Whale stats of one watchlist event over the period.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EventStatsOut {
    /// Whale trades.
    pub trade_count: i64,
    /// Their summed notional, in dollars.
    pub total_volume: f64,
    /// `total_volume / trade_count`; 0 without trades.
    pub avg_trade_size: f64,
    /// Distinct markets among them.
    pub market_count: i64,
}

/// One watchlist event and its stats.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WatchStatsOut {
    /// The watchlist id.
    pub id: i64,
    pub exchange: ExchangeName,
    pub event_id: String,
    #[schema(required = true)]
    pub event_title: Option<String>,
    pub stats: EventStatsOut,
}

/// `/whales/user/stats`: every watchlist event, with zero stats when it has no whale trades in the period.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UserStatsOut {
    pub period: StatsPeriod,
    pub events: Vec<WatchStatsOut>,
}

/// An event of the public catalog. Locked entries keep `exchange` and `title` and null the rest.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CatalogEventOut {
    pub exchange: ExchangeName,
    /// Null when locked.
    #[schema(required = true)]
    pub event_id: Option<String>,
    /// The event's title (its id when the catalog does not have the event).
    pub title: String,
    /// Trades of the last 24 hours, any size; null when locked.
    #[schema(required = true)]
    pub trades_24h: Option<i64>,
    /// Their summed notional in dollars; null when locked.
    #[schema(required = true)]
    pub volume_24h: Option<f64>,
    /// Trades of the last 24 hours at or above the public minimum; null when locked.
    #[schema(required = true)]
    pub whale_trades_24h: Option<i64>,
    pub locked: bool,
}

/// The public catalog: the day's pool in unlock order.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CatalogOut {
    /// The UTC day of the pool (`YYYY-MM-DD`).
    #[schema(examples("2026-11-21"))]
    pub pool_date: String,
    /// Events of the pool fully visible to this caller (the first ones).
    pub unlocked_events: usize,
    pub events: Vec<CatalogEventOut>,
}

// ------------------------------------------------------------------------------------------------ parameters

/// Period of `/whales/user/stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum StatsPeriod {
    #[serde(rename = "24h")]
    H24,
    #[serde(rename = "7d")]
    D7,
    #[serde(rename = "all")]
    All,
}

impl ParamEnum for StatsPeriod {
    const VALUES: &'static [(&'static str, Self)] = &[
        ("24h", StatsPeriod::H24),
        ("7d", StatsPeriod::D7),
        ("all", StatsPeriod::All),
    ];
}

impl StatsPeriod {
    fn since(self, now: Timestamp) -> Option<Timestamp> {
        match self {
            StatsPeriod::H24 => Some(Timestamp::from_millis(now.millis() - DAY_MS)),
            StatsPeriod::D7 => Some(Timestamp::from_millis(now.millis() - 7 * DAY_MS)),
            StatsPeriod::All => None,
        }
    }
}

/// Parameters of `/whales/user/feed`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UserFeedParams {
    /// Page size.
    #[param(required = false, minimum = 1, maximum = 500, default = 50)]
    pub limit: u32,
    /// Trades to skip.
    #[param(required = false, minimum = 0, maximum = 1000000, default = 0)]
    pub offset: u32,
    /// Only trades executed at or after this time (ISO 8601, or a date).
    #[param(value_type = Option<String>, format = DateTime)]
    pub start_date: Option<Timestamp>,
    /// Only trades executed at or before this time (ISO 8601, or a date).
    #[param(value_type = Option<String>, format = DateTime)]
    pub end_date: Option<Timestamp>,
    /// Only this venue.
    #[param(inline)]
    pub platform: Option<ExchangeName>,
    /// Only this watchlist event (the venue's event id).
    #[param(min_length = 1, max_length = 256)]
    pub event_id: Option<String>,
    /// Minimum notional in dollars for every event, instead of each event's own threshold.
    #[param(value_type = Option<f64>, minimum = 0)]
    pub min_trade_size: Option<Amount>,
}

impl FromQuery for UserFeedParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let p = UserFeedParams {
            limit: q.limit(FEED_LIMIT)?,
            offset: q.offset()?,
            start_date: q.timestamp("start_date")?,
            end_date: q.timestamp("end_date")?,
            platform: q.one_of("platform")?,
            event_id: q.text("event_id")?,
            min_trade_size: threshold_param(q, "min_trade_size")?,
        };
        check_order("start_date", p.start_date, "end_date", p.end_date)?;
        Ok(p)
    }
}

/// Parameters of `/v1/whales/public/feed`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PublicFeedParams {
    /// Page size.
    #[param(required = false, minimum = 1, maximum = 500, default = 50)]
    pub limit: u32,
    /// Trades to skip.
    #[param(required = false, minimum = 0, maximum = 1000000, default = 0)]
    pub offset: u32,
    /// Only trades executed at or after this time (ISO 8601, or a date).
    #[param(value_type = Option<String>, format = DateTime)]
    pub start_date: Option<Timestamp>,
    /// Only trades executed at or before this time (ISO 8601, or a date).
    #[param(value_type = Option<String>, format = DateTime)]
    pub end_date: Option<Timestamp>,
    /// Only this venue.
    #[param(inline)]
    pub platform: Option<ExchangeName>,
    /// Minimum notional in dollars, `abs(price × size)`; at least the platform minimum (500 by default),
    /// which is also the default.
    #[param(value_type = Option<f64>, minimum = 0)]
    pub min_trade_size: Option<Amount>,
}

impl FromQuery for PublicFeedParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let p = PublicFeedParams {
            limit: q.limit(FEED_LIMIT)?,
            offset: q.offset()?,
            start_date: q.timestamp("start_date")?,
            end_date: q.timestamp("end_date")?,
            platform: q.one_of("platform")?,
            min_trade_size: threshold_param(q, "min_trade_size")?,
        };
        check_order("start_date", p.start_date, "end_date", p.end_date)?;
        Ok(p)
    }
}

/// Parameters of `/whales/user/stats`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StatsParams {
    /// The period the stats cover.
    #[param(inline, required = false, default = "24h")]
    pub period: StatsPeriod,
}

impl FromQuery for StatsParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(StatsParams {
            period: q.one_of("period")?.unwrap_or(StatsPeriod::H24),
        })
    }
}

/// Parameters of `/v1/whales/public/events`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CatalogParams {
    /// Only events of this venue.
    #[param(inline)]
    pub platform: Option<ExchangeName>,
}

impl FromQuery for CatalogParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(CatalogParams {
            platform: q.one_of("platform")?,
        })
    }
}

/// A dollar threshold query parameter: a non-negative decimal, at most [`MAX_THRESHOLD_USD`].
fn threshold_param(q: &QueryMap, name: &str) -> ApiResult<Option<Amount>> {
    let v = q.non_negative_amount(name)?;
    if v.is_some_and(|a| a > Amount::from_units(MAX_THRESHOLD_USD)) {
        return Err(ApiError::invalid(
            name,
            format!("{name} must be at most {MAX_THRESHOLD_USD}"),
        ));
    }
    Ok(v)
}

// ------------------------------------------------------------------------------------------------ bodies

/// Body of `POST /whales/user/events/by-ticker`.
#[derive(Debug, Clone, ToSchema)]
#[allow(dead_code)] // Documentation of the body; it is parsed field by field so errors can name the field.
pub struct AddEventIn {
    /// `venue_a` or `venue_b`.
    exchange: ExchangeName,
    /// The venue's event id (venue_a event ticker; venue_b event id or slug).
    event_ticker: String,
    /// Notional in dollars at or above which a trade is a whale; default 1000.
    #[schema(minimum = 0)]
    whale_threshold_usd: Option<f64>,
}

/// Body of `PATCH /whales/user/events/{id}`.
#[derive(Debug, Clone, ToSchema)]
#[allow(dead_code)] // Documentation of the body; it is parsed field by field so errors can name the field.
pub struct PatchEventIn {
    /// The new threshold in dollars.
    #[schema(minimum = 0)]
    whale_threshold_usd: f64,
}

/// The body as a JSON object.
fn body_object(body: &Value) -> ApiResult<&serde_json::Map<String, Value>> {
    body.as_object()
        .ok_or_else(|| ApiError::invalid_request("the body must be a JSON object"))
}

/// A dollar amount in a body: a JSON number (or a numeric string) read exactly, never through `f64` arithmetic.
fn body_threshold(obj: &serde_json::Map<String, Value>, name: &str) -> ApiResult<Option<Amount>> {
    let bad = || {
        ApiError::invalid(
            name,
            format!(
                "{name} must be a non-negative number of dollars with at most 6 decimals, at most {MAX_THRESHOLD_USD}"
            ),
        )
    };
    let text = match obj.get(name) {
        None => return Ok(None),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(bad()),
    };
    // `1000.0` is how JSON writers often render a whole number.
    let text = text.strip_suffix(".0").unwrap_or(&text);
    match text.parse::<Amount>() {
        Ok(a) if a >= Amount::ZERO && a <= Amount::from_units(MAX_THRESHOLD_USD) => Ok(Some(a)),
        _ => Err(bad()),
    }
}

fn body_exchange(obj: &serde_json::Map<String, Value>) -> ApiResult<Exchange> {
    match obj.get("exchange") {
        None | Some(Value::Null) => Err(ApiError::missing("exchange")),
        Some(Value::String(s)) => parse_exchange("exchange", s),
        Some(_) => Err(ApiError::invalid(
            "exchange",
            "exchange must be one of venue_a or venue_b",
        )),
    }
}

fn parse_exchange(name: &str, s: &str) -> ApiResult<Exchange> {
    ExchangeName::VALUES
        .iter()
        .find(|(spelling, _)| *spelling == s)
        .map(|(_, e)| Exchange::from(*e))
        .ok_or_else(|| ApiError::invalid(name, format!("{name} must be one of {}", ExchangeName::listing())))
}

fn body_text(obj: &serde_json::Map<String, Value>, name: &str) -> ApiResult<String> {
    match obj.get(name) {
        None | Some(Value::Null) => Err(ApiError::missing(name)),
        Some(Value::String(s)) => text_value(name, s),
        Some(_) => Err(ApiError::invalid(name, format!("{name} must be a string"))),
    }
}

/// A watchlist id path segment: a positive integer.
fn watch_id(raw: &str) -> ApiResult<i64> {
    match raw.parse::<i64>() {
        Ok(id) if id > 0 && raw.bytes().all(|b| b.is_ascii_digit()) => Ok(id),
        _ => Err(ApiError::invalid("id", "id must be a positive integer watchlist id")),
    }
}

// ------------------------------------------------------------------------------------------------ pool

/// How many events of a pool of `len` the caller sees unlocked.
fn unlocked_count(state: &AppState, view: View, len: usize) -> usize {
    match view {
        View::Full => len,
        View::Preview => len.min(state.config.whale_preview_events as usize),
    }
}

fn platform_ok(platform: Option<ExchangeName>, exchange: Exchange) -> bool {
    platform.is_none_or(|p| Exchange::from(p) == exchange)
}

// ------------------------------------------------------------------------------------------------ handlers

fn customer<G>(gate: &Gate<G>) -> ApiResult<i64> {
    gate.owner()
        .map(|o| o.customer_id)
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("personal whale route admitted a caller without a key")))
}

/// Whale trades on the caller's watchlist, newest first.
///
/// Each event's own threshold applies unless `min_trade_size` is given, which then applies to every event
/// (inclusive: a trade whose notional equals the threshold is a whale).
#[utoipa::path(
    get,
    path = "/whales/user/feed",
    tag = "whales",
    params(UserFeedParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "A page of whale trades of the watchlist.", body = UserFeedOut),
        (status = 401, description = "No valid key.", body = ErrorBody),
    )
)]
async fn user_feed(
    State(state): State<AppState>,
    gate: Gate<groups::PersonalWhales>,
    ValidQuery(p): ValidQuery<UserFeedParams>,
) -> ApiResult<Json<UserFeedOut>> {
    let customer = customer(&gate)?;
    let now = Timestamp::now();
    let targets = state
        .store
        .list_watch(customer, None)
        .await?
        .into_iter()
        .filter(|e| platform_ok(p.platform, e.exchange))
        .filter(|e| p.event_id.as_ref().is_none_or(|id| *id == e.event_id))
        .map(|e| WhaleTarget {
            exchange: e.exchange,
            event_id: e.event_id,
            min_notional: p.min_trade_size.unwrap_or(e.threshold),
        })
        .collect();
    let q = WhaleQuery {
        targets,
        start: p.start_date,
        end: p.end_date,
        limit: p.limit,
        offset: p.offset,
        stats_since: day_ago(now),
    };
    let page = state.store.whale_trades(&q).await?;
    Ok(Json(UserFeedOut {
        trades: page.trades.into_iter().map(Into::into).collect(),
        stats: page.recent.into(),
        pagination: PaginationOut {
            limit: p.limit,
            offset: p.offset,
            total: page.total,
        },
    }))
}

/// The caller's watchlist, oldest entry first.
#[utoipa::path(
    get,
    path = "/whales/user/events",
    tag = "whales",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The watchlist.", body = WatchListOut),
        (status = 401, description = "No valid key.", body = ErrorBody),
    )
)]
async fn list_events(
    State(state): State<AppState>,
    gate: Gate<groups::PersonalWhales>,
) -> ApiResult<Json<WatchListOut>> {
    let customer = customer(&gate)?;
    let since = day_ago(Timestamp::now());
    let entries = state.store.list_watch(customer, Some(since)).await?;
    Ok(Json(WatchListOut {
        tracked_events: entries.into_iter().map(Into::into).collect(),
    }))
}

/// Adds an event to the caller's watchlist.
///
/// An event the service has not seen is looked up on the venue and followed by ingestion from then on.
/// 404 when the venue does not know the event, 409 when it is already on the watchlist, 400 when it is
/// closed. `whale_threshold_usd` defaults to 1000.
#[utoipa::path(
    post,
    path = "/whales/user/events/by-ticker",
    tag = "whales",
    request_body = AddEventIn,
    security(("api_key" = [])),
    responses(
        (status = 201, description = "Added.", body = WatchAddedOut),
        (status = 400, description = "Invalid body, or the event is closed.", body = ErrorBody),
        (status = 401, description = "No valid key.", body = ErrorBody),
        (status = 404, description = "Unknown event on that venue.", body = ErrorBody),
        (status = 409, description = "Already on the watchlist.", body = ErrorBody),
    )
)]
async fn add_event(
    State(state): State<AppState>,
    gate: Gate<groups::PersonalWhales>,
    Json(body): Json<Value>,
) -> ApiResult<(StatusCode, Json<WatchAddedOut>)> {
    let customer = customer(&gate)?;
    let obj = body_object(&body)?;
    let exchange = body_exchange(obj)?;
    let ticker = body_text(obj, "event_ticker")?;
    let threshold = body_threshold(obj, "whale_threshold_usd")?
        .unwrap_or_else(|| Amount::from_units(state.config.whale_default_threshold_usd as i64));

    let entry = add_watch(&state, customer, exchange, &ticker, threshold, Timestamp::now())
        .await
        .map_err(watch_error)?;
    let message = format!("now tracking {exchange} event {}", entry.event_id);
    Ok((
        StatusCode::CREATED,
        Json(WatchAddedOut {
            success: true,
            message,
            record: entry.into(),
        }),
    ))
}

/// The HTTP answer to a refused watchlist addition: unknown 404, closed 400 (`event_ticker`), already watched
/// 409, a venue failure while following 503.
#[track_caller]
fn watch_error(e: WatchError) -> ApiError {
    match e {
        WatchError::UnknownEvent { .. } => ApiError::not_found(e.to_string()),
        WatchError::Closed { .. } => ApiError::invalid("event_ticker", e.to_string()),
        WatchError::AlreadyWatched { .. } => ApiError::Conflict { detail: e.to_string() },
        WatchError::FollowFailed { .. } => ApiError::Unavailable {
            cause: e.to_string(),
            location: std::panic::Location::caller(),
        },
        WatchError::Vanished(_) => ApiError::internal(anyhow::anyhow!(e.to_string())),
        WatchError::Store(e) => e.into(),
    }
}

/// Changes the whale threshold of one of the caller's watchlist entries.
#[utoipa::path(
    patch,
    path = "/whales/user/events/{id}",
    tag = "whales",
    params(("id" = i64, Path, description = "The watchlist id.")),
    request_body = PatchEventIn,
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Updated.", body = WatchUpdatedOut),
        (status = 401, description = "No valid key.", body = ErrorBody),
        (status = 404, description = "Not one of the caller's entries.", body = ErrorBody),
    )
)]
async fn patch_event(
    State(state): State<AppState>,
    gate: Gate<groups::PersonalWhales>,
    Path(id): Path<String>,
    Json(body): Json<Value>,
) -> ApiResult<Json<WatchUpdatedOut>> {
    let customer = customer(&gate)?;
    let id = watch_id(&id)?;
    let obj = body_object(&body)?;
    let threshold =
        body_threshold(obj, "whale_threshold_usd")?.ok_or_else(|| ApiError::missing("whale_threshold_usd"))?;
    if !state.store.set_watch_threshold(customer, id, threshold).await? {
        return Err(ApiError::not_found(format!("no watchlist entry {id}")));
    }
    let entry = state
        .store
        .get_watch(customer, id, day_ago(Timestamp::now()))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no watchlist entry {id}")))?;
    Ok(Json(WatchUpdatedOut {
        success: true,
        record: entry.into(),
    }))
}

/// Removes one of the caller's watchlist entries by id.
#[utoipa::path(
    delete,
    path = "/whales/user/events/{id}",
    tag = "whales",
    params(("id" = i64, Path, description = "The watchlist id.")),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Removed.", body = WatchDeletedOut),
        (status = 401, description = "No valid key.", body = ErrorBody),
        (status = 404, description = "Not one of the caller's entries.", body = ErrorBody),
    )
)]
async fn delete_event(
    State(state): State<AppState>,
    gate: Gate<groups::PersonalWhales>,
    Path(id): Path<String>,
) -> ApiResult<Json<WatchDeletedOut>> {
    let customer = customer(&gate)?;
    let id = watch_id(&id)?;
    let Some((exchange, event_id)) = state.store.delete_watch(customer, id).await? else {
        return Err(ApiError::not_found(format!("no watchlist entry {id}")));
    };
    Ok(Json(WatchDeletedOut {
        success: true,
        id,
        exchange: exchange.into(),
        event_ticker: event_id,
    }))
}

/// Removes an event from the caller's watchlist by venue and event ticker.
#[utoipa::path(
    delete,
    path = "/whales/user/events/by-ticker/{exchange}/{event_ticker}",
    tag = "whales",
    params(
        ("exchange" = ExchangeName, Path, description = "`venue_a` or `venue_b`."),
        ("event_ticker" = String, Path, description = "The venue's event id."),
    ),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Removed.", body = WatchDeletedOut),
        (status = 400, description = "Invalid exchange.", body = ErrorBody),
        (status = 401, description = "No valid key.", body = ErrorBody),
        (status = 404, description = "Not on the caller's watchlist.", body = ErrorBody),
    )
)]
async fn delete_event_by_ticker(
    State(state): State<AppState>,
    gate: Gate<groups::PersonalWhales>,
    Path((exchange, ticker)): Path<(String, String)>,
) -> ApiResult<Json<WatchDeletedOut>> {
    let customer = customer(&gate)?;
    let exchange = parse_exchange("exchange", &exchange)?;
    let ticker = text_value("event_ticker", &ticker)?;
    let Some(id) = state.store.delete_watch_by_event(customer, exchange, &ticker).await? else {
        return Err(ApiError::not_found(format!(
            "{exchange} event {ticker:?} is not on your watchlist"
        )));
    };
    Ok(Json(WatchDeletedOut {
        success: true,
        id,
        exchange: exchange.into(),
        event_ticker: ticker,
    }))
}

/// Whale stats of every watchlist event over `period`, each at its own threshold.
#[utoipa::path(
    get,
    path = "/whales/user/stats",
    tag = "whales",
    params(StatsParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Stats per watchlist event.", body = UserStatsOut),
        (status = 401, description = "No valid key.", body = ErrorBody),
    )
)]
async fn user_stats(
    State(state): State<AppState>,
    gate: Gate<groups::PersonalWhales>,
    ValidQuery(p): ValidQuery<StatsParams>,
) -> ApiResult<Json<UserStatsOut>> {
    let customer = customer(&gate)?;
    let entries = state.store.list_watch(customer, None).await?;
    let targets: Vec<WhaleTarget> = entries
        .iter()
        .map(|e| WhaleTarget {
            exchange: e.exchange,
            event_id: e.event_id.clone(),
            min_notional: e.threshold,
        })
        .collect();
    let stats = state
        .store
        .whale_stats(&targets, p.period.since(Timestamp::now()))
        .await?;
    let events = entries
        .into_iter()
        .zip(stats)
        .map(|(e, s)| WatchStatsOut {
            id: e.id,
            exchange: e.exchange.into(),
            event_id: e.event_id,
            event_title: e.event_title,
            stats: EventStatsOut {
                trade_count: s.whales.trade_count,
                total_volume: dollars(s.whales.total_volume),
                avg_trade_size: dollars(s.whales.average()),
                market_count: s.market_count,
            },
        })
        .collect();
    Ok(Json(UserStatsOut {
        period: p.period,
        events,
    }))
}

/// Whale trades of the day's public pool, newest first.
///
/// Free and anonymous callers see the trades of the first events of the pool only (`preview_only: true`);
/// Builder and Trader keys unlock the whole pool. `stats` cover the unlocked events.
#[utoipa::path(
    get,
    path = "/v1/whales/public/feed",
    tag = "whales",
    params(PublicFeedParams),
    security((), ("api_key" = [])),
    responses((status = 200, description = "The public feed envelope.", body = PublicFeedOut))
)]
async fn public_feed(
    State(state): State<AppState>,
    gate: Gate<groups::PublicWhales>,
    ValidQuery(p): ValidQuery<PublicFeedParams>,
) -> ApiResult<Json<PublicFeedOut>> {
    let platform_min = Amount::from_units(state.config.whale_public_min_usd as i64);
    if p.min_trade_size.is_some_and(|m| m < platform_min) {
        return Err(ApiError::invalid(
            "min_trade_size",
            format!(
                "min_trade_size must be at least the platform minimum of {}",
                state.config.whale_public_min_usd
            ),
        ));
    }
    let min = p.min_trade_size.unwrap_or(platform_min);
    let now = Timestamp::now();
    let pool = daily_pool(&state, &utc_day(now)).await?;
    let unlocked = unlocked_count(&state, gate.view, pool.len());
    let targets = pool
        .into_iter()
        .take(unlocked)
        .filter(|(exchange, _)| platform_ok(p.platform, *exchange))
        .map(|(exchange, event_id)| WhaleTarget {
            exchange,
            event_id,
            min_notional: min,
        })
        .collect();
    let q = WhaleQuery {
        targets,
        start: p.start_date,
        end: p.end_date,
        limit: p.limit,
        offset: p.offset,
        stats_since: day_ago(now),
    };
    let page = state.store.whale_trades(&q).await?;
    Ok(Json(PublicFeedOut {
        trades: page.trades.into_iter().map(Into::into).collect(),
        stats: page.recent.into(),
        pagination: PaginationOut {
            limit: p.limit,
            offset: p.offset,
            total: page.total,
        },
        preview_only: gate.view == View::Preview,
        unlocked_events: unlocked,
    }))
}

/// The day's public pool with per-event 24h stats, in unlock order.
///
/// Events beyond the caller's unlocked prefix carry `locked: true` and only their `exchange` and `title`.
#[utoipa::path(
    get,
    path = "/v1/whales/public/events",
    tag = "whales",
    params(CatalogParams),
    security((), ("api_key" = [])),
    responses((status = 200, description = "The public event catalog.", body = CatalogOut))
)]
async fn public_events(
    State(state): State<AppState>,
    gate: Gate<groups::PublicWhales>,
    ValidQuery(p): ValidQuery<CatalogParams>,
) -> ApiResult<Json<CatalogOut>> {
    let now = Timestamp::now();
    let day = utc_day(now);
    let pool = daily_pool(&state, &day).await?;
    let unlocked = unlocked_count(&state, gate.view, pool.len());
    let min = Amount::from_units(state.config.whale_public_min_usd as i64);
    let targets: Vec<WhaleTarget> = pool
        .iter()
        .take(unlocked)
        .map(|(exchange, event_id)| WhaleTarget {
            exchange: *exchange,
            event_id: event_id.clone(),
            min_notional: min,
        })
        .collect();
    let activity = state.store.event_activity(&targets, day_ago(now)).await?;
    let mut events = Vec::new();
    for (i, (exchange, event_id)) in pool.into_iter().enumerate() {
        if !platform_ok(p.platform, exchange) {
            continue;
        }
        let title = state
            .store
            .get_event(exchange, &event_id)
            .await?
            .map_or_else(|| event_id.clone(), |e| e.event.title);
        events.push(match activity.get(i) {
            Some(a) => CatalogEventOut {
                exchange: exchange.into(),
                event_id: Some(event_id),
                title,
                trades_24h: Some(a.trades.trade_count),
                volume_24h: Some(dollars(a.trades.total_volume)),
                whale_trades_24h: Some(a.whale_trades),
                locked: false,
            },
            None => CatalogEventOut {
                exchange: exchange.into(),
                event_id: None,
                title,
                trades_24h: None,
                volume_24h: None,
                whale_trades_24h: None,
                locked: true,
            },
        });
    }
    Ok(Json(CatalogOut {
        pool_date: day,
        unlocked_events: unlocked,
        events,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::common::tests::assert_spellings_match_serde;
    use serde_json::json;

    #[test]
    fn period_spellings_match_their_schema() {
        assert_spellings_match_serde::<StatsPeriod>();
    }

    #[test]
    fn body_thresholds_are_exact() {
        let obj = |v: Value| v.as_object().unwrap().clone();
        let t = |v: Value| body_threshold(&obj(json!({ "x": v })), "x");
        assert_eq!(t(json!(1000)).unwrap(), Some(Amount::from_units(1000)));
        assert_eq!(t(json!(1000.0)).unwrap(), Some(Amount::from_units(1000)));
        assert_eq!(t(json!(2500.25)).unwrap(), Some(Amount::from_micros(2_500_250_000)));
        assert_eq!(t(json!("0.5")).unwrap(), Some(Amount::from_micros(500_000)));
        assert_eq!(t(json!(0)).unwrap(), Some(Amount::ZERO));
        for bad in [json!(-1), json!("x"), json!(true), json!(1e300), json!(0.1234567)] {
            assert!(t(bad.clone()).is_err(), "{bad}");
        }
        assert_eq!(body_threshold(&obj(json!({})), "x").unwrap(), None);
    }

    #[test]
    fn watch_ids_are_positive_integers() {
        assert_eq!(watch_id("65").unwrap(), 65);
        for bad in ["0", "-1", "+1", "x", "", "1.5", "99999999999999999999"] {
            assert!(watch_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn documented_limits_match_enforced_limits() {
        let doc = crate::api::openapi();
        for path in ["/whales/user/feed", "/v1/whales/public/feed"] {
            let params = doc["paths"][path]["get"]["parameters"].as_array().unwrap();
            let schema = &params.iter().find(|x| x["name"] == "limit").unwrap()["schema"];
            assert_eq!(schema["maximum"], Value::from(FEED_LIMIT.max), "{path}");
            assert_eq!(schema["default"], Value::from(FEED_LIMIT.default), "{path}");
        }
    }
}
