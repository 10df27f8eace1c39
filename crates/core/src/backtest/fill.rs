//! The money of one trade, exact: each leg's fill, the sale of an unmatched leg, and the trade's result.
//!
//! Amounts are summed in 1e-12 dollar (a micro-dollar price times a micro-contract size is exact there) and
//! rounded half-up to the micro-dollar once per figure, so a trade's net result is exactly the depth walk's
//! `max_profit` when its legs fill as the walk priced them.

use serde::{Deserialize, Serialize};

use crate::{
    Amount, Exchange, Level, Outcome, Price, Timestamp,
    arb::{MicroUsd, execute},
};

/// 1e-12 dollar per micro-dollar × micro-contract.
pub(crate) const PICO_PER_MICRO: i128 = 1_000_000;

/// Rounds an amount in 1e-12 dollar half-up (away from zero) to the micro-dollar.
pub(crate) fn micros(pico: i128) -> MicroUsd {
    let half = PICO_PER_MICRO / 2;
    let q = if pico >= 0 {
        (pico + half) / PICO_PER_MICRO
    } else {
        -((-pico + half) / PICO_PER_MICRO)
    };
    MicroUsd(i64::try_from(q).unwrap_or(if q > 0 { i64::MAX } else { i64::MIN }))
}

/// The sum of micro-dollar amounts, exact (in `i128`, saturating at the bounds of [`MicroUsd`]).
pub(crate) fn total(amounts: impl Iterator<Item = MicroUsd>) -> MicroUsd {
    micros(amounts.map(|a| i128::from(a.micros())).sum::<i128>() * PICO_PER_MICRO)
}

/// What a taker order met: contracts, their value (paid or received) and the fees, exact.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Taken {
    pub(crate) size: Amount,
    pub(crate) value_pico: i128,
    pub(crate) fee_pico: i128,
    /// The last (worst) level's price.
    pub(crate) worst: Option<Price>,
}

/// Takes up to `size` from `levels` (best first), each contract paying `fee(price)`.
pub(crate) fn take(levels: &[Level], size: Amount, fee: impl Fn(Price) -> MicroUsd) -> Taken {
    let e = execute(levels, size, &fee);
    let mut t = Taken {
        size: e.filled,
        worst: e.worst_price(),
        ..Taken::default()
    };
    for l in &e.taken {
        let n = i128::from(l.size.micros());
        t.value_pico += i128::from(l.price.micros()) * n;
        t.fee_pico += i128::from(fee(l.price).micros()) * n;
    }
    t
}

/// Where one leg of a trade trades.
#[derive(Debug, Clone)]
pub(crate) struct LegRef {
    pub(crate) venue: Exchange,
    /// The book's slot in the run; `None` when the pair has no such book.
    pub(crate) slot: Option<usize>,
    /// The catalog market (venue_a ticker, venue_b condition id).
    pub(crate) market_id: String,
    /// venue_a ticker or venue_b token id.
    pub(crate) identifier: String,
}

/// One leg of a trade as filled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegFill {
    pub venue: Exchange,
    /// The outcome bought.
    pub outcome: Outcome,
    /// The catalog market (venue_a ticker, venue_b condition id).
    pub market_id: String,
    /// venue_a ticker or venue_b token id.
    pub identifier: String,
    /// When the order met the book.
    pub at: Timestamp,
    /// The highest price the order accepted (the depth walk's last price on this leg at detection).
    pub limit: Price,
    /// Contracts asked for and filled.
    pub requested: Amount,
    pub filled: Amount,
    /// The average price paid, before fees; `None` when nothing filled.
    pub average_price: Option<MicroUsd>,
    pub cost: MicroUsd,
    pub fee: MicroUsd,
    #[serde(skip)]
    pub(crate) cost_pico: i128,
    #[serde(skip)]
    pub(crate) fee_pico: i128,
}

impl LegFill {
    pub(crate) fn new(
        leg: &LegRef,
        outcome: Outcome,
        at: Timestamp,
        limit: Price,
        requested: Amount,
        t: Taken,
    ) -> Self {
        let average_price = (t.size.micros() > 0).then(|| {
            let per = t.value_pico / i128::from(t.size.micros());
            // Half-up on the division's remainder.
            let rem = t.value_pico % i128::from(t.size.micros());
            let per = if rem * 2 >= i128::from(t.size.micros()) {
                per + 1
            } else {
                per
            };
            MicroUsd(i64::try_from(per).unwrap_or(i64::MAX))
        });
        LegFill {
            venue: leg.venue,
            outcome,
            market_id: leg.market_id.clone(),
            identifier: leg.identifier.clone(),
            at,
            limit,
            requested,
            filled: t.size,
            average_price,
            cost: micros(t.value_pico),
            fee: micros(t.fee_pico),
            cost_pico: t.value_pico,
            fee_pico: t.fee_pico,
        }
    }
}

/// Unmatched contracts of one leg sold into their book's bids.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unwind {
    pub venue: Exchange,
    pub outcome: Outcome,
    pub at: Timestamp,
    /// Contracts that were unmatched, and those the bids took.
    pub unmatched: Amount,
    pub sold: Amount,
    /// What the sale brought before fees, and its fees.
    pub proceeds: MicroUsd,
    pub fee: MicroUsd,
    #[serde(skip)]
    pub(crate) proceeds_pico: i128,
    #[serde(skip)]
    pub(crate) fee_pico: i128,
}

impl Unwind {
    pub(crate) fn new(venue: Exchange, outcome: Outcome, at: Timestamp, unmatched: Amount, t: Taken) -> Self {
        Unwind {
            venue,
            outcome,
            at,
            unmatched,
            sold: t.size,
            proceeds: micros(t.value_pico),
            fee: micros(t.fee_pico),
            proceeds_pico: t.value_pico,
            fee_pico: t.fee_pico,
        }
    }
}
