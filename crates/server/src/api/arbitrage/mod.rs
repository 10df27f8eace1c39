//! Arbitrage (spec 4.3, 2.9–2.12, 5.3; contracts §6): the current opportunities, the cross-venue price
//! spreads and the recorded episode history. Every route also answers without `/v1`.
//!
//! `current` and `current/difference` are answered from the in-memory books through the same functions the
//! scanner uses ([`scan_live`], [`spreads_live`]); `history` reads the episodes the scanner recorded
//! ([`crossbook_store::ArbitrageStore`]) and masks them for callers without the Trader plan
//! ([`mask_page`]). The objects are rendered by the arbitrage service ([`render`]), the only place exact
//! values become JSON numbers.
//!
//! This module holds the router and the handlers; [`out`] the `*Out` types that document the answers in the
//! OpenAPI document, and [`params`] each route's parameters and the types that read and document them.

mod out;
mod params;

use axum::{extract::State, response::Response};
use crossbook_core::{
    Timestamp,
    arb::{ScanParams, SpreadParams, mask_page},
};
use crossbook_store::HistoryQuery;
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};

pub use self::{out::*, params::*};
use crate::{
    AppState,
    access::{Gate, View, groups},
    api::also_unversioned,
    arbitrage::{DEFAULT_WINDOW_TOLERANCE_SECONDS, render, scan_live, spreads_live},
    error::ApiResult,
    json::Json,
    params::ValidQuery,
};

/// The arbitrage routes, each also reachable without `/v1`.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(also_unversioned(routes!(current)))
        .routes(also_unversioned(routes!(difference)))
        .routes(also_unversioned(routes!(history)))
        .routes(also_unversioned(routes!(pairs)))
}

/// Current arbitrage
///
/// Pairs the active windows of both venues on `interval_code` (start and end within
/// `window_tolerance_seconds`) and the matched binary markets, prices both directions from the latest books
/// with taker fees, and returns the pairs whose better direction nets at least `min_net_cents`,
/// sorted by `net_cents` descending. Fees: venue_a `ceil(7 × p × (1 − p))` cents; venue_b
/// `rate × p × (1 − p)` dollars rounded half-up to 5 decimals, at the rate the operator set for the venue_b
/// market's category (0.07 by default); each opportunity names the rates in `fee_model`. Any valid key. A
/// process that holds no live books (`--role api`, or a standby waiting for the ingest lock) answers 503
/// `unavailable` with the reason, never an empty list.
#[utoipa::path(
    get,
    path = "/v1/arbitrage/current",
    tag = "arbitrage",
    params(CurrentParams),
    security(("api_key" = [])),
    responses((status = 200, description = "Opportunities, best first.", body = [CurrentOut]))
)]
async fn current(
    State(state): State<AppState>,
    _gate: Gate<groups::ArbitrageCurrent>,
    ValidQuery(p): ValidQuery<CurrentParams>,
) -> ApiResult<Response> {
    state.require_live()?;
    // The answer is the same for every caller allowed here, so identical queries share one scan for
    // `arbitrage_cache_ms` (one scan per query and period under load, instead of one per request).
    let key = format!("current {p:?}");
    state
        .arbitrage_cache
        .json(key, async {
            let catalog = state.arb.catalog(&state.store).await?;
            let params = ScanParams {
                now: Timestamp::now(),
                min_net: p.min_net_cents.unwrap_or(DEFAULT_MIN_NET),
                interval_code: p.interval_code,
                max_staleness_seconds: p.max_staleness_seconds.get(),
                window_tolerance_seconds: p.window_tolerance_seconds.get(),
                include_orderbook: p.orderbook.0,
                fees: state.config.venue_b_fee_rate,
            };
            let mut opps = scan_live(&catalog, &state.live, &params);
            opps.truncate(p.limit.get() as usize);
            Ok(opps
                .iter()
                .map(render::opportunity_current_json)
                .collect::<Vec<Value>>())
        })
        .await
}

/// Price spreads
///
/// For each paired window or matched pair, the YES asks and the NO asks of both venues side by side, with
/// `diff = side1_price − side2_price`, sorted by `|diff|` descending. Each row names its pair: event id,
/// label, interval, both venues' market ids and the window. Spreads compare the same side across venues; they
/// are not risk-free arbitrage. Trader plan.
#[utoipa::path(
    get,
    path = "/v1/arbitrage/current/difference",
    tag = "arbitrage",
    params(DifferenceParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Spread rows, widest first.", body = [SpreadOut]),
        (status = 403, description = "The key's plan is below Trader; `required_plan` names the plan needed.", body = crate::error::ErrorBody,
         example = json!({"detail": "this route requires the Trader plan", "code": "entitlement_required", "required_plan": "trader"})),
    )
)]
async fn difference(
    State(state): State<AppState>,
    _gate: Gate<groups::PriceSpread>,
    ValidQuery(p): ValidQuery<DifferenceParams>,
) -> ApiResult<Json<Vec<Value>>> {
    state.require_live()?;
    let catalog = state.arb.catalog(&state.store).await?;
    let params = SpreadParams {
        now: Timestamp::now(),
        interval_code: p.interval_code,
        max_staleness_seconds: p.minutes.get() * 60,
        window_tolerance_seconds: DEFAULT_WINDOW_TOLERANCE_SECONDS,
    };
    let mut rows = spreads_live(&catalog, &state.live, &params);
    rows.truncate(p.limit.get() as usize);
    let (side1, side2) = (&state.config.venue_a_display_name, &state.config.venue_b_display_name);
    Ok(Json(
        rows.iter().map(|r| render::spread_row_json(r, side1, side2)).collect(),
    ))
}

/// Arbitrage history
///
/// Every opportunity the scanner recorded, as episodes (repeated detections within 120 s extend one
/// episode), newest first, filtered over the full history. Without the Trader plan the feed is a preview:
/// only the first row of the first page is unlocked; every other row has `locked: true` and no prices or
/// edges. Each opportunity keeps the `fee_model` it was priced at, so an episode recorded before the operator
/// changed a fee rate still says which rates its figures used.
#[utoipa::path(
    get,
    path = "/v1/arbitrage/history",
    tag = "arbitrage",
    params(HistoryParams),
    security((), ("api_key" = [])),
    responses((status = 200, description = "A page of episodes.", body = HistoryPageOut))
)]
async fn history(
    State(state): State<AppState>,
    gate: Gate<groups::ArbitrageHistory>,
    ValidQuery(p): ValidQuery<HistoryParams>,
) -> ApiResult<Json<Value>> {
    let q = HistoryQuery {
        interval_code: p.interval_code,
        category: p.category,
        min_net: p.min_net_cents,
        from: p.from,
        to: p.to,
        limit: p.limit.get(),
        offset: p.offset.get(),
    };
    let page = state.store.episode_history(&q).await?;
    // The gating table decides the view.
    let preview = gate.view == View::Preview;
    let items: Vec<Value> = mask_page(&page.items, u64::from(p.offset.get()), preview)
        .into_iter()
        .map(render::episode_json)
        .collect();
    let has_more = i64::from(p.offset.get()) + (items.len() as i64) < page.total;
    Ok(Json(serde_json::json!({
        "items": items,
        "total": page.total,
        "offset": p.offset.get(),
        "limit": p.limit.get(),
        "has_more": has_more,
    })))
}

/// Matched pairs
///
/// Every pair the scanner forms from the catalog (at the default window tolerance), scanned or not: both
/// legs with their ids, titles, close times, windows, the side YES stands for and the resolution source as
/// each venue states it; how the pair was matched; the `settlement_basis`; and whether it is scanned. A pair
/// is not scanned when the operator rejected it (`status: rejected`) or when YES backs different sides on
/// the two venues (`skip_reason: yes_outcomes_differ`). `pair_id` is the `event_id` (and `pair_id`) of the
/// pair's opportunities in `current` and `history`. Any valid key.
#[utoipa::path(
    get,
    path = "/v1/arbitrage/pairs",
    tag = "arbitrage",
    params(PairsParams),
    security(("api_key" = [])),
    responses((status = 200, description = "A page of pairs.", body = PairsPageOut))
)]
async fn pairs(
    State(state): State<AppState>,
    _gate: Gate<groups::ArbitrageCurrent>,
    ValidQuery(p): ValidQuery<PairsParams>,
) -> ApiResult<Json<Value>> {
    let catalog = state.arb.catalog(&state.store).await?;
    let kind = p.kind.map(|k| match k {
        PairKindName::Window => "window",
        PairKindName::Matched => "matched",
    });
    let matching: Vec<_> = catalog
        .listed_pairs()
        .filter(|(pair, _)| kind.is_none_or(|k| pair.kind_name() == k))
        .filter(|(pair, _)| p.interval_code.is_none_or(|ic| pair.interval_code() == Some(ic)))
        .collect();
    let total = matching.len() as i64;
    let items: Vec<Value> = matching
        .iter()
        .skip(p.offset.get() as usize)
        .take(p.limit.get() as usize)
        .map(|(pair, skip)| {
            let reason = catalog
                .rejection(&pair.venue_a.market.market_id, &pair.venue_b.market.market_id)
                .flatten();
            render::pair_json(pair, *skip, reason)
        })
        .collect();
    let has_more = i64::from(p.offset.get()) + (items.len() as i64) < total;
    Ok(Json(serde_json::json!({
        "items": items,
        "total": total,
        "offset": p.offset.get(),
        "limit": p.limit.get(),
        "has_more": has_more,
    })))
}
