//! The depth walk: how many contracts can be bought on both legs while every marginal contract still pays.
//!
//! Both ask ladders are walked best first, like a merge: at each step the cheapest remaining YES level is
//! paired with the cheapest remaining NO level, and `min(remaining YES size, remaining NO size)` contracts
//! are taken at that pair of prices. Every contract in such a chunk has the same per-contract net edge, so
//! walking chunk by chunk is walking "contract by contract in aggregate". The walk stops at the first chunk
//! whose net edge is below the threshold ("while the marginal contract still nets at least `min_net_cents`",
//! contracts §6), even though, with venue_a's round-up to the cent, a deeper chunk can occasionally net more
//! than a shallower one (one tick higher can cross a fee boundary and save a cent). A taker cannot reach a
//! deeper level without first buying the shallower ones, so those deeper contracts are not executable at the
//! shown edge.
//!
//! The threshold is `max(min_net, 0)`: a contract that loses money after fees is never included, even if a
//! caller passes a negative `min_net`.

use serde::{Deserialize, Serialize};

use crate::{Amount, Exchange, Level, Price};

use super::{
    fees::PairFees,
    pricing::price_pair,
    units::{MicroUsd, SCALE_I128, div_round_half_up},
};

/// One chunk of the walk: `size` contracts bought on both legs at one pair of prices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fill {
    /// YES ask of the chunk.
    pub yes_price: Price,
    /// NO ask of the chunk.
    pub no_price: Price,
    /// Contracts on each leg.
    pub size: Amount,
    /// Net edge per contract after both fees.
    pub net: MicroUsd,
}

/// Result of a depth walk.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Depth {
    /// Contracts executable on each leg at or above the threshold (`executable_size`).
    pub executable_size: Amount,
    /// Summed net edge of those contracts in dollars (`max_profit_dollars`): computed exactly as
    /// `Σ net × size` in 1e-12 dollar and rounded half-up once to the micro-dollar. It is exact whenever the
    /// sizes are whole contracts.
    pub max_profit: MicroUsd,
    /// The chunks taken, best first.
    pub fills: Vec<Fill>,
}

/// Walks a YES ask ladder on `yes_venue` against a NO ask ladder on `no_venue` (both best first, as
/// [`super::AskLadders`] keeps them) and takes contracts while the marginal contract nets at least
/// `max(min_net, 0)` after the fees at `fees`.
pub fn walk(
    yes_venue: Exchange,
    yes_asks: &[Level],
    no_venue: Exchange,
    no_asks: &[Level],
    min_net: MicroUsd,
    fees: PairFees,
) -> Depth {
    let threshold = min_net.max(MicroUsd::ZERO);
    let mut depth = Depth::default();
    let mut profit_pico: i128 = 0;
    let mut size_total: i128 = 0;
    let (mut i, mut j) = (0usize, 0usize);
    let mut yes_left = yes_asks.first().map_or(0, |l| l.size.micros());
    let mut no_left = no_asks.first().map_or(0, |l| l.size.micros());
    while i < yes_asks.len() && j < no_asks.len() {
        if yes_left <= 0 {
            i += 1;
            yes_left = yes_asks.get(i).map_or(0, |l| l.size.micros());
            continue;
        }
        if no_left <= 0 {
            j += 1;
            no_left = no_asks.get(j).map_or(0, |l| l.size.micros());
            continue;
        }
        let edge = price_pair(yes_venue, yes_asks[i].price, no_venue, no_asks[j].price, fees);
        if edge.net < threshold {
            break;
        }
        let take = yes_left.min(no_left);
        depth.fills.push(Fill {
            yes_price: edge.yes_price,
            no_price: edge.no_price,
            size: Amount(take),
            net: edge.net,
        });
        size_total += i128::from(take);
        profit_pico += i128::from(edge.net.micros()) * i128::from(take);
        yes_left -= take;
        no_left -= take;
    }
    depth.executable_size = Amount(i64::try_from(size_total).unwrap_or(i64::MAX));
    let profit = div_round_half_up(profit_pico, SCALE_I128);
    depth.max_profit = MicroUsd(i64::try_from(profit).unwrap_or(i64::MAX));
    depth
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::arb::{AskLadders, pricing::tests::lvl};

    #[test]
    fn hand_worked_walk() {
        // YES on venue_a: 0.45 × 10, 0.46 × 5, 0.48 × 100. NO on venue_b: 0.50 × 12, 0.51 × 100.
        // chunk 1: 0.45 + 0.50, 10 contracts, net 1.25 c          (hand-worked in pricing)
        // chunk 2: 0.46 + 0.50, 2 contracts: gross 4 c, fee ceil(7×.46×.54=1.7388)=2 + 1.75 → net 0.25 c
        // chunk 3: 0.46 + 0.51, 3 contracts: gross 3 c, fee 2 + 0.07×.51×.49=0.017493→1.749 c → net −0.749 c: stop.
        let yes = [lvl(4500, 10), lvl(4600, 5), lvl(4800, 100)];
        let no = [lvl(5000, 12), lvl(5100, 100)];
        let d = walk(
            Exchange::VenueA,
            &yes,
            Exchange::VenueB,
            &no,
            MicroUsd::ZERO,
            PairFees::SPEC,
        );
        assert_eq!(d.executable_size, Amount::from_units(12));
        // 10 × 1.25 c + 2 × 0.25 c = 13 c = 0.13 $.
        assert_eq!(d.max_profit, MicroUsd::from_cents(13));
        assert_eq!(d.fills.len(), 2);
        assert_eq!(d.fills[1].net, MicroUsd(2_500));

        // With min_net 1 cent only the first chunk qualifies.
        let d = walk(
            Exchange::VenueA,
            &yes,
            Exchange::VenueB,
            &no,
            MicroUsd::from_cents(1),
            PairFees::SPEC,
        );
        assert_eq!(
            (d.executable_size, d.max_profit),
            (Amount::from_units(10), MicroUsd(125_000))
        );
        // min_net exactly the first chunk's net is inclusive.
        let d = walk(
            Exchange::VenueA,
            &yes,
            Exchange::VenueB,
            &no,
            MicroUsd(12_500),
            PairFees::SPEC,
        );
        assert_eq!(d.executable_size, Amount::from_units(10));
        let d = walk(
            Exchange::VenueA,
            &yes,
            Exchange::VenueB,
            &no,
            MicroUsd(12_501),
            PairFees::SPEC,
        );
        assert_eq!(d, Depth::default());
    }

    #[test]
    fn a_lower_venue_b_rate_walks_deeper() {
        // The ladders of `hand_worked_walk` with venue_b at 0.02 (0.5 c at 0.50 and at 0.51):
        // chunk 1: 0.45 + 0.50 × 10: gross 5 c − (2 + 0.5) = 2.5 c
        // chunk 2: 0.46 + 0.50 × 2:  gross 4 c − (2 + 0.5) = 1.5 c
        // chunk 3: 0.46 + 0.51 × 3:  gross 3 c − (2 + 0.02 × .51 × .49 = 0.004998 → 0.5) = 0.5 c (lost money at 0.07)
        // chunk 4: 0.48 + 0.51:      gross 1 c − (ceil(1.7472) = 2 + 0.5) < 0: stop.
        let yes = [lvl(4500, 10), lvl(4600, 5), lvl(4800, 100)];
        let no = [lvl(5000, 12), lvl(5100, 100)];
        let fees = PairFees {
            category: crate::Category::Sports,
            venue_b: "0.02".parse().unwrap(),
        };
        let d = walk(Exchange::VenueA, &yes, Exchange::VenueB, &no, MicroUsd::ZERO, fees);
        let nets: Vec<_> = d.fills.iter().map(|f| (f.size, f.net)).collect();
        assert_eq!(
            nets,
            [
                (Amount::from_units(10), MicroUsd(25_000)),
                (Amount::from_units(2), MicroUsd(15_000)),
                (Amount::from_units(3), MicroUsd(5_000)),
            ]
        );
        // 10 × 2.5 + 2 × 1.5 + 3 × 0.5 = 29.5 c.
        assert_eq!(
            (d.executable_size, d.max_profit),
            (Amount::from_units(15), MicroUsd(295_000))
        );
    }

    #[test]
    fn fractional_sizes_and_empty_ladders() {
        // venue_b sizes carry 6 decimals: 2.5 and 1.234567 contracts at 1.25 c.
        let yes = [Level {
            price: Price(450_000),
            size: Amount(2_500_000),
        }];
        let no = [Level {
            price: Price(500_000),
            size: Amount(1_234_567),
        }];
        let d = walk(
            Exchange::VenueA,
            &yes,
            Exchange::VenueB,
            &no,
            MicroUsd::ZERO,
            PairFees::SPEC,
        );
        assert_eq!(d.executable_size, Amount(1_234_567));
        // 1.234567 × 0.0125 $ = 0.0154320875 $ → 0.015432 $ (half-up at the micro-dollar).
        assert_eq!(d.max_profit, MicroUsd(15_432));
        assert_eq!(
            walk(
                Exchange::VenueA,
                &[],
                Exchange::VenueB,
                &no,
                MicroUsd::ZERO,
                PairFees::SPEC
            ),
            Depth::default()
        );
        // A negative threshold never admits a losing contract.
        let losing = [Level {
            price: Price(600_000),
            size: Amount::from_units(1),
        }];
        let d = walk(
            Exchange::VenueA,
            &losing,
            Exchange::VenueB,
            &no,
            MicroUsd::from_cents(-50),
            PairFees::SPEC,
        );
        assert_eq!(d, Depth::default());
    }

    /// A ladder from a base price upwards in random steps.
    fn ladder_from(base: i64, steps: Vec<(i64, i64)>) -> Vec<Level> {
        let mut price = base;
        let mut v = Vec::new();
        for (step, size) in steps {
            price += step;
            v.push(Level {
                price: Price(price.clamp(1, 999_999)),
                size: Amount(size),
            });
        }
        AskLadders::new(v, []).yes
    }

    /// Two ladders whose best prices sum to about one dollar (from 8 cents under to 2 cents over), so that
    /// many walks take several chunks before the edge runs out; plus fully random ladders.
    fn ladders() -> impl Strategy<Value = (Vec<Level>, Vec<Level>)> {
        let steps = || prop::collection::vec((0i64..20_000, 1i64..50_000_000), 0..8);
        let near = (10_000i64..990_000, -20_000i64..80_000, steps(), steps())
            .prop_map(|(base, spread, ys, ns)| (ladder_from(base, ys), ladder_from(1_000_000 - base - spread, ns)));
        let level = (1i64..1_000_000, 1i64..1_000_000_000).prop_map(|(p, s)| Level {
            price: Price(p),
            size: Amount(s),
        });
        let random = (
            prop::collection::vec(level.clone(), 0..8),
            prop::collection::vec(level, 0..8),
        )
            .prop_map(|(y, n)| (AskLadders::new(y, []).yes, AskLadders::new(n, []).yes));
        prop_oneof![3 => near, 1 => random]
    }

    proptest! {
        #[test]
        fn walk_never_takes_a_losing_contract(
            (yes, no) in ladders(),
            ya in any::<bool>(),
            min_cents_x100 in -200i64..300,
        ) {
            let (yv, nv) = if ya { (Exchange::VenueA, Exchange::VenueB) } else { (Exchange::VenueB, Exchange::VenueA) };
            let min_net = MicroUsd(min_cents_x100 * 100);
            let d = walk(yv, &yes, nv, &no, min_net, PairFees::SPEC);
            let mut size = 0i64;
            let mut pico = 0i128;
            for f in &d.fills {
                let e = price_pair(yv, f.yes_price, nv, f.no_price, PairFees::SPEC);
                prop_assert_eq!(e.net, f.net);
                prop_assert!(f.net >= MicroUsd::ZERO, "losing contract taken: {:?}", f);
                prop_assert!(f.net >= min_net);
                prop_assert!(f.size.micros() > 0);
                size += f.size.micros();
                pico += i128::from(f.net.micros()) * i128::from(f.size.micros());
            }
            prop_assert_eq!(d.executable_size.micros(), size);
            prop_assert_eq!(i128::from(d.max_profit.micros()), div_round_half_up(pico, SCALE_I128));
            // Never more than either ladder offers.
            let total = |l: &[Level]| l.iter().map(|x| x.size.micros()).sum::<i64>();
            prop_assert!(size <= total(&yes) && size <= total(&no));
            // Maximal: if a leg still has contracts, the next chunk fails the threshold.
            if size < total(&yes) && size < total(&no) {
                let next_yes = next_price(&yes, size);
                let next_no = next_price(&no, size);
                let e = price_pair(yv, next_yes, nv, next_no, PairFees::SPEC);
                prop_assert!(e.net < min_net.max(MicroUsd::ZERO));
            }
        }
    }

    /// The price of the level holding the contract after the first `taken` micro-contracts.
    fn next_price(ladder: &[Level], taken: i64) -> Price {
        let mut acc = 0;
        for l in ladder {
            acc += l.size.micros();
            if acc > taken {
                return l.price;
            }
        }
        unreachable!("ladder exhausted")
    }
}
