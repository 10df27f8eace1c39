//! The price of buying a size of one outcome with a taker order against an ask ladder, as the depth walk
//! prices each leg: the asks are taken best first until the size is filled or the ladder runs out, and each
//! contract pays its level's price and the venue's taker fee at that price.
//!
//! Sums are exact: `price × size` and `fee × size` are added in 1e-12 dollar and rounded half-up once to the
//! micro-dollar, as [`super::depth::walk`] sums its profit.

use serde::{Deserialize, Serialize};

use crate::{Amount, Level, Price};

use super::units::{MicroUsd, SCALE_I128, div_round_half_up};

/// What a taker order for a size pays against one ask ladder.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Execution {
    /// Contracts asked for.
    pub requested: Amount,
    /// Contracts the ladder filled: `requested`, or all it offered when that is less.
    pub filled: Amount,
    /// Contracts the whole ladder offered.
    pub available: Amount,
    /// What the filled contracts cost before fees.
    pub cost: MicroUsd,
    /// The taker fees of the filled contracts (each contract's fee at its level's price).
    pub fee: MicroUsd,
    /// The levels taken, best first, each with the contracts taken there.
    pub taken: Vec<Level>,
}

impl Execution {
    /// The average price paid per filled contract, before fees, rounded half-up to the micro-dollar; `None`
    /// when nothing filled.
    pub fn average_price(&self) -> Option<MicroUsd> {
        (self.filled.micros() > 0).then(|| {
            let per = div_round_half_up(
                i128::from(self.cost.micros()) * SCALE_I128,
                i128::from(self.filled.micros()),
            );
            MicroUsd(i64::try_from(per).unwrap_or(i64::MAX))
        })
    }

    /// The worst (highest) price paid: the last level taken; `None` when nothing filled.
    pub fn worst_price(&self) -> Option<Price> {
        self.taken.last().map(|l| l.price)
    }

    /// Whether the ladder held the whole size.
    pub fn complete(&self) -> bool {
        self.filled == self.requested
    }
}

/// Buys `size` contracts against `asks` (best first, as [`super::AskLadders`] keeps them), each paying
/// `fee(price)` per contract on top of its price.
pub fn execute(asks: &[Level], size: Amount, fee: impl Fn(Price) -> MicroUsd) -> Execution {
    let mut left = size.micros().max(0);
    let (mut cost_pico, mut fee_pico) = (0i128, 0i128);
    let mut taken = Vec::new();
    let mut available = 0i64;
    for level in asks {
        available = available.saturating_add(level.size.micros());
        if left == 0 {
            continue;
        }
        let take = left.min(level.size.micros());
        if take <= 0 {
            continue;
        }
        cost_pico += i128::from(level.price.micros()) * i128::from(take);
        fee_pico += i128::from(fee(level.price).micros()) * i128::from(take);
        taken.push(Level {
            price: level.price,
            size: Amount(take),
        });
        left -= take;
    }
    let micros = |pico: i128| MicroUsd(i64::try_from(div_round_half_up(pico, SCALE_I128)).unwrap_or(i64::MAX));
    Execution {
        requested: size,
        filled: Amount(size.micros().max(0) - left),
        available: Amount(available),
        cost: micros(cost_pico),
        fee: micros(fee_pico),
        taken,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::{
        Exchange,
        arb::{fees::taker_fee, pricing::tests::lvl},
    };

    #[test]
    fn walks_the_asks_best_first_and_prices_each_contract_at_its_level() {
        // 10 @ 0.45, 20 @ 0.46, 5 @ 0.50; buy 25.
        let asks = [lvl(4500, 10), lvl(4600, 20), lvl(5000, 5)];
        let e = execute(&asks, Amount::from_units(25), |p| taker_fee(Exchange::VenueA, p));
        assert_eq!(e.filled, Amount::from_units(25));
        assert_eq!(e.available, Amount::from_units(35));
        assert!(e.complete());
        assert_eq!(e.taken, vec![lvl(4500, 10), lvl(4600, 15)]);
        // 10 × 0.45 + 15 × 0.46 = 4.50 + 6.90 = 11.40.
        assert_eq!(e.cost, MicroUsd::from_cents(1_140));
        // venue_a: ceil(7 × 0.45 × 0.55) = ceil(1.7325) = 2 c; ceil(7 × 0.46 × 0.54) = ceil(1.7388) = 2 c.
        assert_eq!(e.fee, MicroUsd::from_cents(50));
        // 11.40 / 25 = 0.456.
        assert_eq!(e.average_price(), Some(MicroUsd(456_000)));
        assert_eq!(e.worst_price(), Some(Price(460_000)));
    }

    #[test]
    fn a_short_ladder_fills_what_it_has() {
        let asks = [lvl(3000, 4)];
        // venue_b at 0.07: 0.07 × 0.3 × 0.7 = 0.0147 dollars per contract.
        let e = execute(&asks, Amount::from_units(10), |p| taker_fee(Exchange::VenueB, p));
        assert_eq!((e.filled, e.available), (Amount::from_units(4), Amount::from_units(4)));
        assert!(!e.complete());
        assert_eq!(e.cost, MicroUsd::from_cents(120));
        assert_eq!(e.fee, MicroUsd(58_800));
        assert_eq!(e.average_price(), Some(MicroUsd(300_000)));
    }

    #[test]
    fn an_empty_ladder_fills_nothing() {
        let e = execute(&[], Amount::from_units(10), |p| taker_fee(Exchange::VenueA, p));
        assert_eq!((e.filled, e.cost, e.fee), (Amount(0), MicroUsd::ZERO, MicroUsd::ZERO));
        assert_eq!((e.average_price(), e.worst_price()), (None, None));
    }

    #[test]
    fn fractional_sizes_sum_exactly_and_round_once() {
        // 0.333333 contracts at 0.333333 twice: each product is 0.111110888889 dollars; summed before rounding.
        let asks = [
            Level {
                price: Price(333_333),
                size: Amount(333_333),
            },
            Level {
                price: Price(333_333),
                size: Amount(333_333),
            },
        ];
        let e = execute(&asks, Amount(666_666), |_| MicroUsd::ZERO);
        assert_eq!(e.cost, MicroUsd(222_222));
    }

    proptest! {
        /// Buying more never lowers the average or the worst price, and the filled size is the smaller of the
        /// size asked and the ladder's.
        #[test]
        fn more_size_never_costs_less_per_contract(
            levels in proptest::collection::vec((1i64..=99, 1i64..=50), 0..8),
            a in 1i64..=200,
            extra in 0i64..=200,
        ) {
            let mut asks: Vec<Level> = levels.iter().map(|&(c, n)| lvl(c * 100, n)).collect();
            asks.sort_by_key(|l| l.price);
            let fee = |p| taker_fee(Exchange::VenueA, p);
            let small = execute(&asks, Amount::from_units(a), fee);
            let big = execute(&asks, Amount::from_units(a + extra), fee);
            let total: i64 = asks.iter().map(|l| l.size.micros()).sum();
            prop_assert_eq!(small.filled.micros(), (a * 1_000_000).min(total));
            prop_assert!(big.cost >= small.cost && big.fee >= small.fee);
            if let (Some(s), Some(b)) = (small.average_price(), big.average_price()) {
                prop_assert!(b >= s);
                prop_assert!(big.worst_price() >= small.worst_price());
            }
        }
    }
}
