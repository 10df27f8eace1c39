//! The opportunity object (spec 2.9 and 2.10) in exact types.
//!
//! One struct serves `/v1/arbitrage/current`, the recorded history and the `arbitrage.opportunity` webhook:
//! money stays in micro-dollars ([`MicroUsd`]), prices in [`Price`], sizes in [`Amount`]. Rendering to JSON
//! numbers happens in the server (`crossbook_server::arbitrage::render`); masking for preview callers in [`super::mask`].

use serde::{Deserialize, Serialize};

use crate::{Amount, Category, Exchange, IntervalCode, Level, Price, Timestamp};

use super::{
    depth::Fill,
    pairing::SettlementBasis,
    units::{MicroUsd, Roi},
};

/// Number of ask levels per leg kept in [`Opportunity::orderbook`].
pub const ORDERBOOK_LEVELS: usize = 5;

/// Market type of an opportunity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MarketType {
    /// A YES/NO market.
    #[default]
    Binary,
}

impl MarketType {
    /// `binary`.
    pub fn as_str(self) -> &'static str {
        match self {
            MarketType::Binary => "binary",
        }
    }
}

/// Snapshot of the venue_a market of the pair (`venue_a` object of spec 2.10).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VenueALeg {
    /// venue_a market ticker.
    pub market_ticker: String,
    /// Best YES ask (1 − best NO bid), if any.
    pub yes_ask: Option<Price>,
    /// Best NO ask (1 − best YES bid), if any.
    pub no_ask: Option<Price>,
    /// Lifetime volume as the catalog reports it.
    pub volume: Amount,
    /// 24-hour volume.
    pub volume_24h: Amount,
    /// Open interest.
    pub open_interest: Amount,
}

/// Snapshot of the venue_b market of the pair (`venue_b` object of spec 2.10).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VenueBLeg {
    /// Condition id (`0x…`).
    pub condition_id: String,
    /// YES token id.
    pub yes_token_id: String,
    /// NO token id.
    pub no_token_id: String,
    /// Best ask of the YES token, if any.
    pub yes_ask: Option<Price>,
    /// Best ask of the NO token, if any.
    pub no_ask: Option<Price>,
    /// Volume as the catalog reports it.
    pub volume: Amount,
    /// Liquidity as the catalog reports it.
    pub liquidity: Amount,
}

/// The side of the instrument's order book on which a leg's taker order is placed, in the venues' own
/// vocabulary.
///
/// - venue_a quotes every market as one YES book (`book_side` on its orders: `bid` ≡ buy YES, `ask` ≡ buy NO,
///   PROTOCOLS A.2): the YES leg is `bid`, the NO leg is `ask`.
/// - venue_b has one book per token and the leg buys the token named by `identifier`: always `bid`.
///
/// Either way the order executes against the resting asks of the outcome it buys, at the leg's ask price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BookSide {
    /// Buy side of the instrument's book.
    Bid,
    /// Sell side of the instrument's book.
    Ask,
}

impl BookSide {
    /// `bid` or `ask`.
    pub fn as_str(self) -> &'static str {
        match self {
            BookSide::Bid => "bid",
            BookSide::Ask => "ask",
        }
    }
}

/// How to execute one leg (`yes_leg` / `no_leg` of spec 2.10).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionLeg {
    /// Venue of the leg.
    pub market: Exchange,
    /// venue_a market ticker, or venue_b token id of the outcome bought.
    pub identifier: String,
    /// See [`BookSide`].
    pub book_side: BookSide,
    /// The leg's taker fee per contract at its ask (`fee_cents` of the leg): the two legs' fees sum to the
    /// opportunity's `fee`. Zero in an opportunity recorded before the legs kept their fees.
    #[serde(default)]
    pub fee: MicroUsd,
}

/// Top ask levels of one leg (`orderbook.yes` / `orderbook.no`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LegAsks {
    /// Venue of the leg.
    pub market: Exchange,
    /// Up to [`ORDERBOOK_LEVELS`] asks, best first.
    pub asks: Vec<Level>,
}

/// Depth attached with `orderbook=true`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OrderbookDepth {
    /// Asks of the YES leg.
    pub yes: LegAsks,
    /// Asks of the NO leg.
    pub no: LegAsks,
    /// The chunks the depth walk took (`orderbook.walk`), best first: how `executable_size` and
    /// `max_profit` were reached. Empty in depth recorded before the walk was kept.
    #[serde(default)]
    pub walk: Vec<Fill>,
}

/// One fee-adjusted cross-venue opportunity, exact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Opportunity {
    /// Canonical event id (`BTC-15M-2026-11-21T19:00Z`, `PAIR-<venue_a ticker>`).
    pub event_id: String,
    /// Human-readable title.
    pub event_title: String,
    /// Outcome bucket: `up` for windows, `yes` for matched pairs.
    pub outcome_key: String,
    /// Short display label.
    pub label: String,
    /// When the opportunity was observed (the scan's `now`).
    pub timestamp: Timestamp,
    /// Always [`MarketType::Binary`].
    pub market_type: MarketType,
    /// `crypto` for windows, the market's category for matched pairs. Not rendered; the history filters on it.
    pub category: Category,
    /// Interval of a window pair.
    pub interval_code: Option<IntervalCode>,
    /// Settlement time (later window end of the two markets).
    pub resolution_time: Option<Timestamp>,
    /// venue_a event ticker.
    pub venue_a_event_ticker: Option<String>,
    /// venue_b event slug.
    pub venue_b_event_slug: Option<String>,
    /// Whether the two legs settle on the same facts ([`MarketPair::settlement_basis`]). `Unverified` in an
    /// opportunity recorded before the basis was kept.
    ///
    /// [`MarketPair::settlement_basis`]: super::pairing::MarketPair::settlement_basis
    #[serde(default)]
    pub settlement_basis: SettlementBasis,
    /// venue_a market snapshot.
    pub venue_a: VenueALeg,
    /// venue_b market snapshot.
    pub venue_b: VenueBLeg,
    /// Venue on which to buy YES.
    pub buy_yes_market: Exchange,
    /// Venue on which to buy NO.
    pub buy_no_market: Exchange,
    /// Gross edge per contract at the top of book (`gross_cents`).
    pub gross: MicroUsd,
    /// Fees of both legs per contract (`fee_cents`).
    pub fee: MicroUsd,
    /// `gross − fee` (`net_cents`).
    pub net: MicroUsd,
    /// `100 × net / (cost + fee)` (`roi_percent`).
    pub roi: Roi,
    /// Contracts executable at or above the scan's threshold (`executable_size`).
    pub executable_size: Amount,
    /// Summed net edge of those contracts, dollars (`max_profit_dollars`).
    pub max_profit: MicroUsd,
    /// Best `net` seen during the episode (`peak_net_cents`); equal to `net` on a fresh scan.
    pub peak_net: MicroUsd,
    /// How to execute the YES leg.
    pub yes_leg: ExecutionLeg,
    /// How to execute the NO leg.
    pub no_leg: ExecutionLeg,
    /// Top ask levels per leg, when the scan captured them.
    pub orderbook: Option<OrderbookDepth>,
    /// The fee rates the figures were computed at ([`super::PairFees::label`], e.g.
    /// `venue_a:0.07;venue_b:crypto=0.07`), so a figure can be checked after the operator changes a rate.
    /// Empty only in an opportunity recorded before the label existed (the store fills those in).
    #[serde(default)]
    pub fee_model: String,
}
