//! What a backtest assumes: the range, the threshold, capital, latency, the leg order, what happens to a leg
//! left alone, and the fee rates. Every assumption has a default; [`BacktestParams::check`] says what is wrong
//! with a set in words a caller can show.

use serde::{Deserialize, Serialize};

use crate::{
    IntervalCode, Timestamp,
    arb::{FeeModel, MicroUsd},
};

/// The order the two legs are sent in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LegOrder {
    /// Both legs are sent at detection; each reaches its venue `latency_ms` later.
    #[default]
    Simultaneous,
    /// The venue_a leg is sent at detection; the venue_b leg is sent once its fill is known, so it reaches its
    /// venue `2 × latency_ms` after detection, for the contracts the first leg filled.
    VenueAFirst,
}

impl LegOrder {
    pub const ALL: [LegOrder; 2] = [LegOrder::Simultaneous, LegOrder::VenueAFirst];

    pub fn as_str(self) -> &'static str {
        match self {
            LegOrder::Simultaneous => "simultaneous",
            LegOrder::VenueAFirst => "venue_a_first",
        }
    }
}

/// What happens to the contracts of one leg that the other leg did not match (the second leg was no longer
/// there, or filled less).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum MissingLeg {
    /// Sold at once into the bids of their own book (a taker sale, paying the venue's fee); what the bids
    /// cannot take is held.
    #[default]
    Unwind,
    /// Held to settlement (or marked to the book at the end of the range).
    Hold,
}

impl MissingLeg {
    pub const ALL: [MissingLeg; 2] = [MissingLeg::Unwind, MissingLeg::Hold];

    pub fn as_str(self) -> &'static str {
        match self {
            MissingLeg::Unwind => "unwind",
            MissingLeg::Hold => "hold",
        }
    }
}

/// The default threshold: an opportunity is taken when it nets at least 1 cent per contract after fees.
pub const DEFAULT_MIN_NET: MicroUsd = MicroUsd::from_cents(1);
/// The default capital of one trade: 100 dollars.
pub const DEFAULT_CAPITAL_PER_TRADE: MicroUsd = MicroUsd(100_000_000);
/// The default capital of the whole run: 1,000 dollars.
pub const DEFAULT_CAPITAL_TOTAL: MicroUsd = MicroUsd(1_000_000_000);
/// The default time from detection to a leg's order reaching its venue.
pub const DEFAULT_LATENCY_MS: i64 = 250;
/// The longest latency a run accepts: one minute.
pub const MAX_LATENCY_MS: i64 = 60_000;

/// The assumptions of one backtest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BacktestParams {
    /// Range start, inclusive: the books as they stood at this instant.
    pub from: Timestamp,
    /// Range end, inclusive.
    pub to: Timestamp,
    /// An opportunity is taken when its net edge per contract is at least this (inclusive); its size is the
    /// depth walk's at this threshold.
    pub min_net: MicroUsd,
    /// The most one trade may cost (both legs and their fees); `None`: no limit.
    pub capital_per_trade: Option<MicroUsd>,
    /// The most all open trades may cost together; capital comes back when a trade settles. `None`: no limit.
    pub capital_total: Option<MicroUsd>,
    /// From detection to a leg's order reaching its venue; the leg fills against the book as it stood then.
    pub latency_ms: i64,
    pub leg_order: LegOrder,
    pub missing_leg: MissingLeg,
    /// venue_b's taker rate per category (venue_a's formula is fixed).
    pub fees: FeeModel,
    /// Only window pairs of this interval.
    pub interval_code: Option<IntervalCode>,
}

impl BacktestParams {
    /// The defaults over `[from, to]`.
    pub fn new(from: Timestamp, to: Timestamp) -> Self {
        BacktestParams {
            from,
            to,
            min_net: DEFAULT_MIN_NET,
            capital_per_trade: Some(DEFAULT_CAPITAL_PER_TRADE),
            capital_total: Some(DEFAULT_CAPITAL_TOTAL),
            latency_ms: DEFAULT_LATENCY_MS,
            leg_order: LegOrder::default(),
            missing_leg: MissingLeg::default(),
            fees: FeeModel::SPEC,
            interval_code: None,
        }
    }

    /// The same run with no latency (the report's comparison run).
    pub fn without_latency(&self) -> Self {
        BacktestParams { latency_ms: 0, ..*self }
    }

    /// What is wrong with these assumptions, as `(field, reason)`; `Ok` when a run can start.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.from > self.to {
            return Err(("from", "from must be at or before to".into()));
        }
        if self.min_net < MicroUsd::ZERO {
            return Err(("min_net_cents", "min_net_cents must be 0 or more".into()));
        }
        for (field, c) in [
            ("capital_per_trade_dollars", self.capital_per_trade),
            ("capital_total_dollars", self.capital_total),
        ] {
            if c.is_some_and(|c| c <= MicroUsd::ZERO) {
                return Err((
                    field,
                    format!("{field} must be more than 0 (leave it out for no limit)"),
                ));
            }
        }
        if !(0..=MAX_LATENCY_MS).contains(&self.latency_ms) {
            return Err(("latency_ms", format!("latency_ms must be from 0 to {MAX_LATENCY_MS}")));
        }
        Ok(())
    }
}
