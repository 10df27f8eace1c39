//! The records the model holds and the updates it emits. These are the simulator's own types: the venue
//! servers render them into each venue's wire shapes, and tests read them to know what the venues said.

use crossbook_core::{Amount, Category, Exchange, IntervalCode, Outcome, Price, TakerSide, Timestamp};

use super::book::{LevelChange, YesBook};

/// Lifecycle of a simulated market.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// Listed before its window. venue_a shows `initialized` and has no book; venue_b already trades it, as
    /// the real venue pre-lists up/down windows.
    Upcoming,
    /// Inside its window: both venues trade it.
    Open,
    /// Past its close: no more trading, result not yet published.
    Closed,
    /// Result published (`finalized` on venue_a, `closed: true` with resolved prices on venue_b).
    Settled,
}

impl Phase {
    /// venue_a's returned `status` for this phase (OpenAPI v3.13 enum).
    pub fn venue_a_status(self) -> &'static str {
        match self {
            Phase::Upcoming => "initialized",
            Phase::Open => "active",
            Phase::Closed => "closed",
            Phase::Settled => "finalized",
        }
    }
}

/// A product line: venue_a series ticker or venue_b Gamma series.
#[derive(Debug, Clone, PartialEq)]
pub struct SimSeries {
    pub exchange: Exchange,
    /// venue_a series ticker (`KXBTC15M`); venue_b series slug (`btc-up-or-down-15m`).
    pub series_id: String,
    /// venue_b numeric Gamma id (a numeric string); `None` on venue_a.
    pub gamma_id: Option<String>,
    pub title: String,
    /// venue_a `frequency` text; venue_b `recurrence`.
    pub frequency: String,
    /// The venue's own category label (`Crypto`, `Sports`, `Economics`…).
    pub category: String,
    pub interval: Option<IntervalCode>,
}

/// A venue_b tag `{id, label, slug}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Tag {
    pub id: &'static str,
    pub label: &'static str,
    pub slug: &'static str,
}

/// An event: one window, one game, or one question group.
#[derive(Debug, Clone, PartialEq)]
pub struct SimEvent {
    pub exchange: Exchange,
    /// venue_a event ticker; venue_b numeric Gamma event id.
    pub event_id: String,
    /// venue_b event slug (also its `ticker`); `None` on venue_a.
    pub slug: Option<String>,
    pub series_id: String,
    pub title: String,
    pub sub_title: String,
    pub description: String,
    pub category: String,
    pub tags: Vec<Tag>,
    pub interval: Option<IntervalCode>,
    /// Window (or game) start and end as this venue states them.
    pub start: Timestamp,
    pub end: Timestamp,
    /// Listing time (venue_b `startDate`/`creationDate`).
    pub created: Timestamp,
    /// Market ids in this event, in listing order.
    pub markets: Vec<String>,
    pub mutually_exclusive: bool,
}

/// Pair keys of the full scale's bulk markets start with this.
pub(crate) const BULK: &str = "bulk:";

/// One binary market.
#[derive(Debug, Clone, PartialEq)]
pub struct SimMarket {
    pub exchange: Exchange,
    /// venue_a ticker; venue_b condition id (`0x` + 64 hex).
    pub market_id: String,
    pub event_id: String,
    pub series_id: String,
    /// venue_b numeric Gamma market id; `None` on venue_a.
    pub gamma_id: Option<String>,
    /// venue_b market slug; `None` on venue_a.
    pub slug: Option<String>,
    /// venue_a WS `market_id` UUID; venue_b `questionID`.
    pub wire_uuid: String,
    /// venue_a `title`; venue_b `question`.
    pub question: String,
    /// venue_a `yes_sub_title` (non-window markets); venue_b `outcomes[0]`.
    pub yes_label: String,
    /// venue_b `outcomes[1]`.
    pub no_label: String,
    /// venue_a `rules_primary`; venue_b `description`.
    pub description: String,
    pub category: Category,
    pub interval: Option<IntervalCode>,
    pub created: Timestamp,
    pub open_time: Timestamp,
    pub close_time: Timestamp,
    /// How long after close the result is published.
    pub settle_delay_ms: i64,
    pub phase: Phase,
    /// Reference price of an up/down window in cents, fixed when the window opens (venue_a `floor_strike`,
    /// venue_b `priceToBeat`). Each venue has its own oracle, so the two differ by a few cents.
    pub strike_cents: Option<i64>,
    /// Settlement reference price in cents, fixed at close.
    pub final_cents: Option<i64>,
    /// Winning side once settled (`Yes` = the first outcome on venue_b).
    pub result: Option<Outcome>,
    pub settled_at: Option<Timestamp>,
    /// venue_b CLOB token ids `[yes/first outcome, no/second outcome]` (78-digit decimal strings).
    pub tokens: Option<[String; 2]>,
    /// venue_b minimum tick (0.01, or 0.001 near the edges); 0.01 on venue_a.
    pub tick: Price,
    pub volume: Amount,
    pub open_interest: Amount,
    /// Last traded YES price.
    pub last_price: Option<Price>,
    /// Size of the last trade.
    pub last_size: Amount,
    /// The underlying shared with the other venue (fair value, cross episodes).
    pub(crate) pair: String,
    /// This market's YES is the pair's NO (venue_a home-team markets).
    pub(crate) inverted: bool,
    pub(crate) spread: i64,
    pub(crate) depth: i64,
}

impl SimMarket {
    /// Whether the market accepts orders now, i.e. has a live book.
    pub fn trading(&self) -> bool {
        match self.exchange {
            Exchange::VenueA => self.phase == Phase::Open,
            Exchange::VenueB => matches!(self.phase, Phase::Upcoming | Phase::Open),
        }
    }
    /// Whether Gamma marks this venue_b market `"version": "v2"`: its outcome ids are then listed in
    /// `positionIds`, next to `clobTokenIds` holding ids no book or trade is served for. A deterministic
    /// share of about one market in five (by the condition id's last hex digit), so every catalog has some.
    pub fn protocol_v2(&self) -> bool {
        self.exchange == Exchange::VenueB && self.market_id.ends_with(['0', '5', '9'])
    }
    /// Whether the market belongs to the full scale's bulk catalog (driven by its schedule and change
    /// generator instead of the demo dynamics).
    pub fn is_bulk(&self) -> bool {
        self.pair.starts_with(BULK)
    }
    /// Index of `token_id` in this market's tokens.
    pub fn token_index(&self, token_id: &str) -> Option<usize> {
        self.tokens.as_ref()?.iter().position(|t| t == token_id)
    }
    /// The smallest size step: one contract on venue_a (no fractional trading), 0.01 share on venue_b.
    pub fn lot(&self) -> Amount {
        match self.exchange {
            Exchange::VenueA => Amount::from_units(1),
            Exchange::VenueB => Amount::from_micros(10_000),
        }
    }
}

/// One executed trade as the venue publishes it.
#[derive(Debug, Clone, PartialEq)]
pub struct SimTrade {
    pub exchange: Exchange,
    /// venue_a `trade_id` (UUID); venue_b `transactionHash`.
    pub trade_id: String,
    pub market_id: String,
    pub event_id: String,
    /// venue_b token traded (`asset`); `None` on venue_a.
    pub token_id: Option<String>,
    /// The outcome the taker traded: venue_a `taker_outcome_side`; venue_b the token's outcome.
    pub outcome: Outcome,
    /// venue_a takers always buy a side; venue_b `side` of the taker in `token_id`.
    pub taker_side: TakerSide,
    /// Price of `outcome`.
    pub price: Price,
    pub size: Amount,
    pub at: Timestamp,
    /// Per-venue running number, newest highest (the key of venue_a's trade cursor).
    pub seq: u64,
    /// venue_b taker wallet and pseudonym.
    pub wallet: Option<String>,
    pub pseudonym: Option<String>,
}

impl SimTrade {
    /// `price × size` in dollars.
    pub fn notional(&self) -> Amount {
        Amount::notional(self.price, self.size)
    }
    /// The YES price of the trade (venue_a `yes_price_dollars`).
    pub fn yes_price(&self) -> Price {
        match self.outcome {
            Outcome::Yes => self.price,
            Outcome::No => self.price.complement(),
        }
    }
}

/// Top of book and running statistics after an update (venue_a `ticker`, venue_b `best_bid_ask`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Top {
    /// Best YES bid `(cents, size)`.
    pub bid: Option<(i64, Amount)>,
    /// Best YES ask `(cents, size)`.
    pub ask: Option<(i64, Amount)>,
    pub last_price: Option<Price>,
    pub last_size: Amount,
    pub volume: Amount,
    pub open_interest: Amount,
}

/// Something that happened in one model step, in the order it happened.
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    /// Resting liquidity changed (orders placed, cancelled, or cleared at close).
    Book {
        exchange: Exchange,
        market_id: String,
        changes: Vec<LevelChange>,
        top: Top,
    },
    /// A fill: `change` is the level it consumed; `book` is the whole book afterwards (venue_b resends its
    /// `book` after trades).
    Trade {
        trade: Box<SimTrade>,
        change: LevelChange,
        book: Box<YesBook>,
        top: Top,
    },
    /// venue_b minimum tick changed.
    TickSize { market_id: String, old: Price, new: Price },
    /// A market was listed while the simulator runs (venue_b broadcasts `new_market` for it).
    Listed { exchange: Exchange, market_id: String },
    /// A market moved to another phase.
    Phase {
        exchange: Exchange,
        market_id: String,
        phase: Phase,
    },
}
