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
use crossbook_store::{WhaleQuery, WhaleTarget};
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    AppState,
    access::{Gate, View, groups},
    api::common::dollars,
    error::{ApiError, ApiResult, ErrorBody},
    json::Json,
    params::{Limit, Path, Text, ValidQuery, text_value},
    whales::{WatchError, add_watch, daily_pool, day_ago, default_threshold},
};

/// `limit` of both whale feeds.
pub type FeedLimit = Limit<50, 500>;

/// The largest threshold accepted, in dollars (keeps every notional comparison far from `i64` overflow).
pub(crate) const MAX_THRESHOLD_USD: i64 = 1_000_000_000_000;

/// The whale routes: personal ones without `/v1`, public ones with it only.
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
        .merge(views::router())
}

mod out;
mod params;
mod views;

pub use self::{out::*, params::*, views::*};

// ------------------------------------------------------------------------------------------------ pool

/// How many events of a pool of `len` the caller sees unlocked.
fn unlocked_count(state: &AppState, view: View, len: usize) -> usize {
    match view {
        View::Full => len,
        View::Preview => len.min(state.plans.whale_preview_events),
    }
}

fn platform_ok(platform: Option<Exchange>, exchange: Exchange) -> bool {
    platform.is_none_or(|p| p == exchange)
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
    params(FeedFilter, UserFeedParams),
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
        .filter(|e| platform_ok(p.filter.platform, e.exchange))
        .filter(|e| p.event_id.as_ref().is_none_or(|id| id.0 == e.event_id))
        .map(|e| WhaleTarget {
            exchange: e.exchange,
            event_id: e.event_id,
            min_notional: p.min_trade_size.unwrap_or(e.threshold),
            market_id: None,
        })
        .collect();
    let q = WhaleQuery {
        targets,
        start: p.filter.start_date,
        end: p.filter.end_date,
        limit: p.filter.limit.get(),
        offset: p.filter.offset.get(),
        stats_since: day_ago(now),
    };
    let page = state.store.whale_trades(&q).await?;
    Ok(Json(UserFeedOut {
        trades: page.trades.into_iter().map(Into::into).collect(),
        stats: page.recent.into(),
        pagination: OffsetPaginationOut {
            limit: p.filter.limit.get(),
            offset: p.filter.offset.get(),
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
    watch_added(&state, customer, obj, exchange, &ticker, watch_error).await
}

/// Adds an event to the caller's watchlist at the body's `whale_threshold_usd` (else the default) and answers
/// 201 with the record; `refused` answers a refusal.
async fn watch_added(
    state: &AppState,
    customer: i64,
    obj: &serde_json::Map<String, Value>,
    exchange: Exchange,
    ticker: &str,
    refused: impl FnOnce(WatchError) -> ApiError,
) -> ApiResult<(StatusCode, Json<WatchAddedOut>)> {
    let threshold = body_threshold(obj, "whale_threshold_usd")?.unwrap_or_else(|| default_threshold(&state.config));
    let entry = add_watch(
        &*state.store,
        state.ingest.get(),
        customer,
        exchange,
        ticker,
        threshold,
        Timestamp::now(),
    )
    .await
    .map_err(refused)?;
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
    params(("id" = inline(WatchId), Path, description = "The watchlist id.")),
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
    params(("id" = inline(WatchId), Path, description = "The watchlist id.")),
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
        exchange,
        event_ticker: event_id,
    }))
}

/// Removes an event from the caller's watchlist by venue and event ticker.
#[utoipa::path(
    delete,
    path = "/whales/user/events/by-ticker/{exchange}/{event_ticker}",
    tag = "whales",
    params(
        ("exchange" = Exchange, Path, description = "`venue_a` or `venue_b`."),
        ("event_ticker" = inline(Text), Path, description = "The venue's event id."),
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
        exchange,
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
            market_id: None,
        })
        .collect();
    let stats = state
        .store
        .whale_stats(&targets, p.period.0.since(Timestamp::now()))
        .await?;
    let events = entries
        .into_iter()
        .zip(stats)
        .map(|(e, s)| WatchStatsOut {
            id: e.id,
            exchange: e.exchange,
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
        period: p.period.0,
        events,
    }))
}

/// Whale trades of the day's public pool, newest first.
///
/// Free and anonymous callers see the trades of the first events of the pool only (`preview_only: true`);
/// Builder and Trader keys unlock the whole pool. `stats` cover the unlocked events; `locked_trades` counts
/// the matching trades of the events the caller cannot see.
#[utoipa::path(
    get,
    path = "/v1/whales/public/feed",
    tag = "whales",
    params(FeedFilter, PublicFeedParams),
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
    let pool = daily_pool(&*state.store, state.config.whale_pool_size, &utc_day(now)).await?;
    let unlocked = unlocked_count(&state, gate.view, pool.len());
    let (mut targets, mut locked): (Vec<WhaleTarget>, Vec<WhaleTarget>) = (Vec::new(), Vec::new());
    for (i, (exchange, event_id)) in pool.into_iter().enumerate() {
        if !platform_ok(p.filter.platform, exchange) {
            continue;
        }
        let target = WhaleTarget {
            exchange,
            event_id,
            min_notional: min,
            market_id: None,
        };
        if i < unlocked { &mut targets } else { &mut locked }.push(target);
    }
    let q = WhaleQuery {
        targets,
        start: p.filter.start_date,
        end: p.filter.end_date,
        limit: p.filter.limit.get(),
        offset: p.filter.offset.get(),
        stats_since: day_ago(now),
    };
    let page = state.store.whale_trades(&q).await?;
    // Only the count of the locked events' trades: a page of none (the store returns an empty page at once
    // when every event is unlocked).
    let locked_trades = state
        .store
        .whale_trades(&WhaleQuery {
            targets: locked,
            limit: 0,
            offset: 0,
            ..q
        })
        .await?
        .total;
    Ok(Json(PublicFeedOut {
        trades: page.trades.into_iter().map(Into::into).collect(),
        stats: page.recent.into(),
        pagination: OffsetPaginationOut {
            limit: p.filter.limit.get(),
            offset: p.filter.offset.get(),
            total: page.total,
        },
        preview_only: gate.view == View::Preview,
        unlocked_events: unlocked,
        locked_trades,
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
    let pool = daily_pool(&*state.store, state.config.whale_pool_size, &day).await?;
    let unlocked = unlocked_count(&state, gate.view, pool.len());
    let min = Amount::from_units(state.config.whale_public_min_usd as i64);
    let targets: Vec<WhaleTarget> = pool
        .iter()
        .take(unlocked)
        .map(|(exchange, event_id)| WhaleTarget {
            exchange: *exchange,
            event_id: event_id.clone(),
            min_notional: min,
            market_id: None,
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
                exchange,
                event_id: Some(event_id),
                title,
                trades_24h: Some(a.trades.trade_count),
                volume_24h: Some(dollars(a.trades.total_volume)),
                whale_trades_24h: Some(a.whale_trades),
                locked: false,
            },
            None => CatalogEventOut {
                exchange,
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
