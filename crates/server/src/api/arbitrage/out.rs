//! The answers of the arbitrage routes, as documented: the objects are rendered by the arbitrage service
//! ([`crate::arbitrage::render`]); these types give their shapes to the OpenAPI document.

use serde::Serialize;
use utoipa::ToSchema;

use super::PairKindName;

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
    /// The leg's taker fee per contract at its ask, cents; the two legs' fees sum to `fee_cents`. Null on a
    /// locked history row.
    #[schema(examples(2.0))]
    pub fee_cents: Option<f64>,
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

/// One chunk of the depth walk: `size` contracts bought on both legs at one pair of asks, each netting
/// `net_cents` after both fees.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WalkStepOut {
    /// YES ask of the chunk, a four-decimal price string.
    #[schema(examples("0.4500"))]
    pub yes_price: String,
    /// NO ask of the chunk, a four-decimal price string.
    #[schema(examples("0.5000"))]
    pub no_price: String,
    /// Contracts on each leg.
    pub size: f64,
    /// Net edge per contract after both legs' fees, cents.
    pub net_cents: f64,
}

/// Top ask levels per leg, and the depth walk over them.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OrderbookOut {
    pub yes: LegAsksOut,
    pub no: LegAsksOut,
    /// The chunks the depth walk took, best first: the YES and NO ladders are merged cheapest first, and
    /// the walk stops at the first chunk whose net is below the threshold. Their sizes sum to
    /// `executable_size` and their `net × size` to `max_profit_dollars`.
    pub walk: Vec<WalkStepOut>,
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
    /// Whether the two legs settle on the same facts, as `settlement_basis` in `/v1/arbitrage/pairs`:
    /// `identical`, `same_window_different_source` or `unverified`.
    #[schema(examples("identical"))]
    pub settlement_basis: String,
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
    /// Dollars needed to buy those contracts on both legs, fees included: `executable_size` less
    /// `max_profit_dollars`, since each pair of contracts pays one dollar however the market settles; null
    /// on locked rows.
    #[schema(required = true)]
    pub capital_dollars: Option<f64>,
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
