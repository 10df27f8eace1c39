//! Arbitrage (spec 4.3, 2.9–2.12, 5.3; contracts §6): the current opportunities, the cross-venue price
//! spreads and the recorded episode history. Every route also answers without `/v1`.
//!
//! `current` and `current/difference` are answered from the in-memory books through the same functions the
//! scanner uses ([`scan_live`], [`spreads_live`]); `history` reads the episodes the scanner recorded
//! ([`crossbook_store::ArbitrageStore`]) and masks them for callers without the Trader plan
//! ([`mask_page`]). The objects are rendered by the arbitrage service ([`render`]), the only place exact
//! values become JSON numbers; the `*Out` types below document them in the OpenAPI document.

use axum::{extract::State, response::Response};
use crossbook_core::{
    Category, IntervalCode, Timestamp,
    arb::{MicroUsd, ScanParams, SpreadParams, mask_page},
};
use crossbook_store::HistoryQuery;
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::{
    IntoParams, PartialSchema, ToSchema,
    openapi::{RefOr, Schema},
};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    AppState,
    access::{Gate, View, groups},
    api::also_unversioned,
    arbitrage::{DEFAULT_MAX_STALENESS_SECONDS, DEFAULT_WINDOW_TOLERANCE_SECONDS, render, scan_live, spreads_live},
    error::ApiResult,
    json::Json,
    params::{
        CentsQuery, Flag, FromQuery, Int, Limit, Offset, ParamEnum, QueryMap, TimestampQuery, ValidQuery,
        listed_enum_schema, with_keywords,
    },
};

/// `limit` of the routes.
pub type ArbLimit = Limit<50, 100>;
/// `max_staleness_seconds`: 1 s to a day.
pub type StalenessSeconds = Int<1, 86_400, { DEFAULT_MAX_STALENESS_SECONDS }>;
/// `window_tolerance_seconds`: up to an hour.
pub type ToleranceSeconds = Int<0, 3_600, { DEFAULT_WINDOW_TOLERANCE_SECONDS }>;
/// `minutes` of the spread route: up to a year, 10,000 by default.
pub type Minutes = Int<1, 525_600, 10_000>;
/// `min_net_cents` of the current route when absent: every opportunity that nets anything.
pub const DEFAULT_MIN_NET: MicroUsd = MicroUsd::ZERO;
/// `orderbook`, off when absent: the ladders are opt-in because they make each row several times larger.
pub type OrderbookFlag = Flag<false>;

/// `min_net_cents`, read by [`crate::params::QueryMap::cents_ceil`]: cents ([`CentsQuery`]), documented with the
/// floor that applies when absent ([`DEFAULT_MIN_NET`]; the history route has no floor, which filters alike).
pub struct MinNetCentsQuery;

impl PartialSchema for MinNetCentsQuery {
    fn schema() -> RefOr<Schema> {
        let whole_cents = DEFAULT_MIN_NET.micros() / MicroUsd::from_cents(1).micros();
        with_keywords(CentsQuery::schema(), json!({"default": whole_cents}))
    }
}

impl ToSchema for MinNetCentsQuery {}

/// The arbitrage routes, each also reachable without `/v1`.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(also_unversioned(routes!(current)))
        .routes(also_unversioned(routes!(difference)))
        .routes(also_unversioned(routes!(history)))
        .routes(also_unversioned(routes!(pairs)))
}

// ------------------------------------------------------------------------------------------------ outputs
// Documentation of the rendered objects (the handlers return what `crate::arbitrage::render` builds; a
// test checks that every rendered field is documented here).

/// venue_a leg snapshot.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VenueALegOut {
    pub market_ticker: String,
    /// YES ask (1 − best NO bid); null on locked rows or without bids.
    #[schema(required = true)]
    pub yes_ask: Option<f64>,
    /// NO ask (1 − best YES bid); null on locked rows or without bids.
    #[schema(required = true)]
    pub no_ask: Option<f64>,
    pub volume: f64,
    pub volume_24h: f64,
    pub open_interest: f64,
}

/// venue_b leg snapshot.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VenueBLegOut {
    pub condition_id: String,
    pub yes_token_id: String,
    pub no_token_id: String,
    /// Best ask of the YES token; null on locked rows or without asks.
    #[schema(required = true)]
    pub yes_ask: Option<f64>,
    /// Best ask of the NO token; null on locked rows or without asks.
    #[schema(required = true)]
    pub no_ask: Option<f64>,
    pub volume: f64,
    pub liquidity: f64,
}

/// Where to execute one leg.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ExecutionLegOut {
    /// `venue_a` or `venue_b`.
    pub market: String,
    /// venue_a market ticker or venue_b token id.
    pub identifier: String,
    /// `bid` or `ask`: the side of the `identifier`'s order book on which the order is placed. `bid` is an
    /// order to buy that instrument, `ask` an order to sell it; either way it fills against the resting orders
    /// of the other side, at the leg's ask price. venue_a has one YES book per market, so its YES leg is a
    /// `bid` and its NO leg an `ask` (selling YES there is buying NO). venue_b has one book per outcome token
    /// and `identifier` is the token bought, so its legs are always `bid`, on the YES token or the NO token.
    /// `action` says which outcome is bought.
    #[schema(examples("bid"))]
    pub book_side: String,
    /// The order the leg places: `buy_yes` on `yes_leg`, `buy_no` on `no_leg`.
    pub action: LegAction,
}

/// What an execution leg buys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LegAction {
    /// Buy the YES outcome.
    BuyYes,
    /// Buy the NO outcome.
    BuyNo,
}

/// One ask level.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LevelOut {
    /// Four-decimal price string.
    #[schema(examples("0.4500"))]
    pub price: String,
    pub size: f64,
}

/// Top ask levels of one leg.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LegAsksOut {
    /// `venue_a` or `venue_b`.
    pub market: String,
    /// Up to 5 levels, best first.
    pub asks: Vec<LevelOut>,
}

/// Top ask levels per leg.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OrderbookOut {
    pub yes: LegAsksOut,
    pub no: LegAsksOut,
}

/// An arbitrage opportunity: buy YES on one venue and NO on the other for less than 1 dollar
/// after taker fees.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OpportunityOut {
    /// Canonical event id: `BTC-15M-2026-11-21T19:00Z` for a BTC window, `PAIR-<venue_a ticker>` for a
    /// matched pair.
    pub event_id: String,
    /// The pair the opportunity prices, as `pair_id` in `/v1/arbitrage/pairs` (equal to `event_id`).
    #[schema(examples("BTC-15M-2026-11-21T19:00Z"))]
    pub pair_id: String,
    pub event_title: String,
    /// `up` for BTC up/down windows, `yes` for matched pairs.
    pub outcome_key: String,
    pub label: String,
    /// Snapshot time.
    #[schema(format = DateTime)]
    pub timestamp: String,
    /// `binary`.
    pub market_type: String,
    /// `5m`, `15m`, `1h`, `24h` or `1w`; null for matched pairs.
    #[schema(required = true)]
    pub interval_code: Option<String>,
    /// Window settlement time.
    #[schema(required = true, format = DateTime)]
    pub resolution_time: Option<String>,
    #[schema(required = true)]
    pub venue_a_event_ticker: Option<String>,
    #[schema(required = true)]
    pub venue_b_event_slug: Option<String>,
    pub venue_a: VenueALegOut,
    pub venue_b: VenueBLegOut,
    /// Venue on which to buy YES.
    pub buy_yes_market: String,
    /// Venue on which to buy NO.
    pub buy_no_market: String,
    /// `100 × (1 − yes_ask − no_ask)`; null on locked rows.
    #[schema(required = true)]
    pub gross_cents: Option<f64>,
    /// Taker fees of both legs; null on locked rows.
    #[schema(required = true)]
    pub fee_cents: Option<f64>,
    /// `gross_cents − fee_cents`; null on locked rows.
    #[schema(required = true)]
    pub net_cents: Option<f64>,
    /// `100 × net / (cost + fees)`; null on locked rows.
    #[schema(required = true)]
    pub roi_percent: Option<f64>,
    /// Contracts executable while each still nets at least `min_net_cents`; null on locked rows.
    #[schema(required = true)]
    pub executable_size: Option<f64>,
    /// Summed net of those contracts, dollars; null on locked rows.
    #[schema(required = true)]
    pub max_profit_dollars: Option<f64>,
    /// Best `net_cents` of the episode (history), the current one otherwise; null on locked rows.
    #[schema(required = true)]
    pub peak_net_cents: Option<f64>,
    /// The taker fee rates `fee_cents` was computed at, so the figures can be checked even after the
    /// operator changes a rate. `;`-separated entries: `venue_a:<rate>` (venue_a charges
    /// `rate × p × (1 − p)` per contract rounded up to the cent) and `venue_b:<category>=<rate>` (venue_b
    /// charges `rate × p × (1 − p)` rounded half-up to 0.00001 dollar, at least 0.00001, at the rate the
    /// operator set for the venue_b market's category: `crypto`, `sports` or `other`; 0.07 unless
    /// configured otherwise). Rates are decimals without trailing zeros. New entries may be appended.
    #[schema(examples("venue_a:0.07;venue_b:crypto=0.07"))]
    pub fee_model: String,
    pub yes_leg: ExecutionLegOut,
    pub no_leg: ExecutionLegOut,
    /// Top ask levels per leg: with `orderbook=true` (current), or when captured (history, unlocked rows).
    pub orderbook: Option<OrderbookOut>,
}

/// A row of `/v1/arbitrage/current`: the opportunity plus `opinion`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CurrentOut {
    #[serde(flatten)]
    pub opportunity: OpportunityOut,
    /// Always null.
    #[schema(required = true, value_type = Option<String>)]
    pub opinion: Option<()>,
}

/// A history opportunity: the opportunity plus `locked`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HistoryOpportunityOut {
    #[serde(flatten)]
    pub opportunity: OpportunityOut,
    /// `true` on masked preview rows.
    pub locked: bool,
}

/// A recorded episode.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EpisodeOut {
    /// First observation.
    #[schema(format = DateTime)]
    pub first_seen_at: String,
    /// Latest observation.
    #[schema(format = DateTime)]
    pub last_seen_at: String,
    /// The latest observation, with the episode's peak.
    pub opportunity: HistoryOpportunityOut,
}

/// The history page envelope.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HistoryPageOut {
    /// Episodes, newest (`last_seen_at`) first.
    pub items: Vec<EpisodeOut>,
    /// Episodes matching the filters, before paging.
    pub total: i64,
    pub offset: u32,
    pub limit: u32,
    /// Whether another page follows.
    pub has_more: bool,
}

/// A price-spread row: one side (YES or NO) of one venue_a/venue_b pair, with the pair it compares.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SpreadOut {
    /// Canonical event id of the pair, as in the opportunities: `BTC-15M-2026-11-21T19:00Z` for a BTC
    /// window, `PAIR-<venue_a ticker>` for a matched pair.
    #[schema(examples("BTC-15M-2026-11-21T19:00Z"))]
    pub event_id: String,
    /// Short display label of the pair, as in the opportunities.
    #[schema(examples("BTC 15m Up 19:00-19:15 UTC"))]
    pub label: String,
    /// `5m`, `15m`, `1h`, `24h` or `1w`; null for matched pairs.
    #[schema(required = true, examples("15m"))]
    pub interval_code: Option<String>,
    /// The pair's venue_a market ticker (`side1_price` is its ask).
    #[schema(examples("KXBTC15M-26NOV211915-15"))]
    pub venue_a_market_id: String,
    /// The pair's venue_b condition id (`side2_price` is the ask of its token for the side).
    pub venue_b_market_id: String,
    /// Start of the window the pair trades, as venue_a lists it; null for matched pairs.
    #[schema(required = true, format = DateTime)]
    pub window_start: Option<String>,
    /// End of that window; null for matched pairs.
    #[schema(required = true, format = DateTime)]
    pub window_end: Option<String>,
    /// `YES` or `NO`.
    pub side: String,
    /// Display name of venue_a.
    pub side1: String,
    /// Display name of venue_b.
    pub side2: String,
    /// venue_a ask for the side.
    pub side1_price: f64,
    /// venue_b ask for the side.
    pub side2_price: f64,
    /// `side1_price − side2_price`.
    pub diff: f64,
}

/// One leg of a pair.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PairLegOut {
    /// `venue_a` or `venue_b`.
    pub exchange: String,
    /// venue_a market ticker or venue_b condition id.
    pub market_id: String,
    /// The market's title as the venue lists it (else its question).
    pub title: String,
    /// When the venue closes the market (its window end); null when the catalog has none.
    #[schema(required = true, format = DateTime)]
    pub close_time: Option<String>,
    /// Start of the window the market settles on, as this venue states it; null when none.
    #[schema(required = true, format = DateTime)]
    pub window_start: Option<String>,
    /// End of that window; null when none.
    #[schema(required = true, format = DateTime)]
    pub window_end: Option<String>,
    /// The side YES stands for, as far as known: `Up` for a window, the team YES backs for a game (venue_a's
    /// subtitle, else the normalised team name); null for a plain yes/no question.
    #[schema(required = true, examples("Up"))]
    pub yes_outcome: Option<String>,
    /// What the market settles on, as the venue states it (venue_a settlement sources or rules, venue_b
    /// `resolutionSource`); null when the venue states nothing.
    #[schema(required = true)]
    pub resolution_source: Option<String>,
}

/// A pair the scanner forms: both legs, how they were matched, and the facts that decide whether they pay
/// on the same outcome.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PairOut {
    /// Stable id of the pair: the `event_id` (and `pair_id`) of its opportunities.
    #[schema(examples("BTC-15M-2026-11-21T19:00Z"))]
    pub pair_id: String,
    /// `window` (up/down windows) or `matched` (matched binary markets).
    pub kind: PairKindName,
    /// `window` (same asset, interval and window), `teams_date` (the game matcher: same teams, same YES
    /// team, same day) or `operator` (an override, `crossbook pairs add`).
    #[schema(examples("window"))]
    pub match_source: String,
    /// Interval of a window pair; null for matched pairs.
    #[schema(required = true, examples("15m"))]
    pub interval_code: Option<String>,
    /// The pair's title, as its opportunities' `event_title`.
    pub title: String,
    pub venue_a: PairLegOut,
    pub venue_b: PairLegOut,
    /// Whether YES provably backs different sides on the two venues (a game whose YES team differs).
    pub yes_outcomes_differ: bool,
    /// `identical` (same window, same resolution source after normalising case, whitespace and a trailing
    /// `/`), `same_window_different_source`, or `unverified` (a source not stated, or windows that differ).
    #[schema(examples("identical"))]
    pub settlement_basis: String,
    /// `active` or `rejected` (by the operator, `crossbook pairs reject`).
    #[schema(examples("active"))]
    pub status: String,
    /// The operator's reason for a rejection; null otherwise.
    #[schema(required = true)]
    pub rejection_reason: Option<String>,
    /// Whether the scanner prices the pair (`current`, `history`, webhooks, spreads).
    pub scanned: bool,
    /// Why it is not scanned: `rejected` or `yes_outcomes_differ`; null when scanned.
    #[schema(required = true, examples("yes_outcomes_differ"))]
    pub skip_reason: Option<String>,
}

/// The pairs page envelope.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PairsPageOut {
    /// Pairs in `pair_id` order.
    pub items: Vec<PairOut>,
    /// Pairs matching the filters, before paging.
    pub total: i64,
    pub offset: u32,
    pub limit: u32,
    /// Whether another page follows.
    pub has_more: bool,
}

// ------------------------------------------------------------------------------------------------ parameters

/// `window` or `matched`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PairKindName {
    Window,
    Matched,
}

impl ParamEnum for PairKindName {
    const VALUES: &'static [(&'static str, Self)] =
        &[("window", PairKindName::Window), ("matched", PairKindName::Matched)];
}

/// Parameters of `/v1/arbitrage/pairs`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PairsParams {
    /// Only pairs of this kind.
    #[param(inline)]
    pub kind: Option<PairKindName>,
    /// Only window pairs of this interval.
    #[param(inline)]
    pub interval_code: Option<IntervalCode>,
    /// Page size.
    #[param(inline, required = false)]
    pub limit: ArbLimit,
    /// Zero-based offset.
    #[param(inline, required = false)]
    pub offset: Offset,
}

impl FromQuery for PairsParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(PairsParams {
            kind: q.one_of("kind")?,
            interval_code: q.one_of("interval_code")?,
            limit: q.get("limit")?,
            offset: q.get("offset")?,
        })
    }
}

/// As a parameter, a category is one the scan prices: `crypto` or `sports` (core's spellings), never `other`.
impl ParamEnum for Category {
    const VALUES: &'static [(&'static str, Self)] = &[
        (Category::Crypto.as_str(), Category::Crypto),
        (Category::Sports.as_str(), Category::Sports),
    ];
}

/// The schema of a [`Category`] parameter: its spellings ([`ParamEnum`]).
pub struct CategoryQuery;

impl PartialSchema for CategoryQuery {
    fn schema() -> RefOr<Schema> {
        listed_enum_schema::<Category>()
    }
}

impl ToSchema for CategoryQuery {}

/// Parameters of `/v1/arbitrage/current`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CurrentParams {
    /// Minimum net profit after fees, cents (inclusive).
    #[param(value_type = Option<MinNetCentsQuery>, inline)]
    pub min_net_cents: Option<MicroUsd>,
    /// Only windows of this interval (matched pairs have none).
    #[param(inline)]
    pub interval_code: Option<IntervalCode>,
    /// Attach the top 5 ask levels per leg under `orderbook`.
    #[param(inline, required = false)]
    pub orderbook: OrderbookFlag,
    /// Pairs are dropped when either book is older than this.
    #[param(inline, required = false)]
    pub max_staleness_seconds: StalenessSeconds,
    /// Maximum start/end skew when pairing windows.
    #[param(inline, required = false)]
    pub window_tolerance_seconds: ToleranceSeconds,
    /// Maximum rows.
    #[param(inline, required = false)]
    pub limit: ArbLimit,
}

impl FromQuery for CurrentParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(CurrentParams {
            min_net_cents: q.cents_ceil("min_net_cents")?,
            interval_code: q.one_of("interval_code")?,
            orderbook: q.get("orderbook")?,
            max_staleness_seconds: q.get("max_staleness_seconds")?,
            window_tolerance_seconds: q.get("window_tolerance_seconds")?,
            limit: q.get("limit")?,
        })
    }
}

/// Parameters of `/v1/arbitrage/current/difference`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DifferenceParams {
    /// Snapshot lookback in minutes: books older than this are ignored.
    #[param(inline, required = false)]
    pub minutes: Minutes,
    /// Only windows of this interval.
    #[param(inline)]
    pub interval_code: Option<IntervalCode>,
    /// Maximum rows.
    #[param(inline, required = false)]
    pub limit: ArbLimit,
}

impl FromQuery for DifferenceParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(DifferenceParams {
            minutes: q.get("minutes")?,
            interval_code: q.one_of("interval_code")?,
            limit: q.get("limit")?,
        })
    }
}

/// Parameters of `/v1/arbitrage/history`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct HistoryParams {
    /// Page size.
    #[param(inline, required = false)]
    pub limit: ArbLimit,
    /// Zero-based offset.
    #[param(inline, required = false)]
    pub offset: Offset,
    /// Only windows of this interval.
    #[param(inline)]
    pub interval_code: Option<IntervalCode>,
    /// Only this category.
    #[param(value_type = Option<CategoryQuery>, inline)]
    pub category: Option<Category>,
    /// Minimum `net_cents` of the episode's latest observation (inclusive), over the full history.
    #[param(value_type = Option<MinNetCentsQuery>, inline)]
    pub min_net_cents: Option<MicroUsd>,
    /// ISO 8601; keep episodes last seen at or after this time.
    #[param(value_type = Option<TimestampQuery>, inline)]
    pub from: Option<Timestamp>,
    /// ISO 8601; keep episodes first seen at or before this time.
    #[param(value_type = Option<TimestampQuery>, inline)]
    pub to: Option<Timestamp>,
}

impl FromQuery for HistoryParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(HistoryParams {
            limit: q.get("limit")?,
            offset: q.get("offset")?,
            interval_code: q.one_of("interval_code")?,
            category: q.one_of("category")?,
            min_net_cents: q.cents_ceil("min_net_cents")?,
            from: q.timestamp("from")?,
            to: q.timestamp("to")?,
        })
    }
}

// ------------------------------------------------------------------------------------------------ handlers

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_net_cents_is_exact_and_strict() {
        let parse = |v: &str| {
            QueryMap::parse(&format!("min_net_cents={v}"))
                .unwrap()
                .cents_ceil("min_net_cents")
        };
        assert_eq!(parse("0").unwrap(), Some(MicroUsd::ZERO));
        assert_eq!(parse("1.25").unwrap(), Some(MicroUsd(12_500)));
        assert_eq!(parse("0.00001").unwrap(), Some(MicroUsd(1)));
        // The exponent form is the plain form, exactly.
        assert_eq!(parse("1e3").unwrap(), parse("1000").unwrap());
        assert_eq!(parse("1.25E-2").unwrap(), parse("0.0125").unwrap());
        for bad in [
            "",
            "-1",
            "abc",
            "1e",
            "1.2.3",
            "+1",
            " 1",
            "nan",
            "99999999999999999999",
        ] {
            let e = parse(&url::form_urlencoded::byte_serialize(bad.as_bytes()).collect::<String>()).unwrap_err();
            assert_eq!(e.body().param.as_deref(), Some("min_net_cents"), "{bad}");
        }
    }
}
