//! Pricing one cross-venue pair: ask ladders per venue, the per-contract edge of a YES + NO pair, and the
//! choice of direction (contracts §6).
//!
//! Buying YES on one venue and NO on the other pays exactly 1 dollar whichever way the market resolves
//! (modulo the two venues resolving differently, which this model does not price). Per contract:
//!
//! ```text
//! gross = 1 − yes_ask − no_ask                      (rendered ×100 as gross_cents)
//! fee   = fee(yes_ask at its venue) + fee(no_ask at its venue)   at the pair's rates (PairFees)
//! net   = gross − fee
//! roi   = 100 × net / (yes_ask + no_ask + fee)      percent
//! ```
//!
//! All in micro-dollars (see [`super::units`]), so `net = gross − fee` holds exactly.

use serde::{Deserialize, Serialize};

use crate::{BookSnapshot, Exchange, Level, Outcome, Price, book::ask_from_opposite_bid, money::SCALE};

use super::{
    fees::PairFees,
    units::{MicroUsd, Roi},
};

/// The ask ladders of one binary market on one venue, best (lowest price) first.
///
/// Built only through the constructors, which keep levels with a price strictly between 0 and 1 and a
/// positive size: an ask at 0 or 1 can never be part of a profitable pair, and a level outside that range is
/// a feed error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AskLadders {
    /// Asks for YES contracts.
    pub yes: Vec<Level>,
    /// Asks for NO contracts.
    pub no: Vec<Level>,
}

impl AskLadders {
    /// venue_a asks, derived from the two bid ladders ([`crate::book::derive`]): YES asks from the NO bids,
    /// NO asks from the YES bids.
    pub fn from_venue_a(book: &BookSnapshot) -> Self {
        AskLadders {
            yes: clean(book.no_bids.iter().map(ask_from_opposite_bid)),
            no: clean(book.bids.iter().map(ask_from_opposite_bid)),
        }
    }

    /// venue_b asks: the real ask ladder of the YES token's book and of the NO token's book.
    ///
    /// The mirror (`1 −` the other token's best bid, PROTOCOLS part C) is deliberately not used: on venue_b
    /// a mirrored order is matched by the venue into the real book, and the real ask is what a taker pays.
    pub fn from_venue_b(yes_token: &BookSnapshot, no_token: &BookSnapshot) -> Self {
        AskLadders {
            yes: clean(yes_token.asks.iter().copied()),
            no: clean(no_token.asks.iter().copied()),
        }
    }

    /// Ladders given directly (tests, simulations); cleaned and sorted like the venue constructors.
    pub fn new(yes: impl IntoIterator<Item = Level>, no: impl IntoIterator<Item = Level>) -> Self {
        AskLadders {
            yes: clean(yes.into_iter()),
            no: clean(no.into_iter()),
        }
    }

    /// The ladder of one outcome.
    pub fn side(&self, outcome: Outcome) -> &[Level] {
        match outcome {
            Outcome::Yes => &self.yes,
            Outcome::No => &self.no,
        }
    }

    /// The best (lowest) ask of one outcome.
    pub fn best(&self, outcome: Outcome) -> Option<Price> {
        crate::book::best(self.side(outcome))
    }
}

/// Keeps levels with `0 < price < 1` and `size > 0`, sorted by ascending price (stable, so equal prices keep
/// their order).
fn clean(levels: impl Iterator<Item = Level>) -> Vec<Level> {
    let mut v: Vec<Level> = levels
        .filter(|l| l.price.micros() > 0 && l.price.micros() < SCALE && l.size.micros() > 0)
        .collect();
    v.sort_by_key(|l| l.price);
    v
}

/// Which venue buys which side. A pair has exactly two directions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Direction {
    /// Buy YES on venue_a and NO on venue_b.
    #[serde(rename = "yes_on_venue_a")]
    YesOnA,
    /// Buy YES on venue_b and NO on venue_a.
    #[serde(rename = "yes_on_venue_b")]
    YesOnB,
}

impl Direction {
    /// Both directions, in the order ties are broken (YES on venue_a first).
    pub const ALL: [Direction; 2] = [Direction::YesOnA, Direction::YesOnB];

    /// The venue on which YES is bought (`buy_yes_market`).
    pub fn buy_yes_market(self) -> Exchange {
        match self {
            Direction::YesOnA => Exchange::VenueA,
            Direction::YesOnB => Exchange::VenueB,
        }
    }
    /// The venue on which NO is bought (`buy_no_market`).
    pub fn buy_no_market(self) -> Exchange {
        match self {
            Direction::YesOnA => Exchange::VenueB,
            Direction::YesOnB => Exchange::VenueA,
        }
    }
    /// The venue of one leg.
    pub fn venue_of(self, outcome: Outcome) -> Exchange {
        match outcome {
            Outcome::Yes => self.buy_yes_market(),
            Outcome::No => self.buy_no_market(),
        }
    }
}

/// The exact per-contract economics of buying one YES and one NO contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    /// YES ask paid.
    pub yes_price: Price,
    /// NO ask paid.
    pub no_price: Price,
    /// `1 − yes − no`.
    pub gross: MicroUsd,
    /// Fee of the YES leg at its venue.
    pub yes_fee: MicroUsd,
    /// Fee of the NO leg at its venue.
    pub no_fee: MicroUsd,
    /// `yes_fee + no_fee`.
    pub fee: MicroUsd,
    /// `gross − fee`.
    pub net: MicroUsd,
    /// Capital committed: `yes + no + fee`.
    pub capital: MicroUsd,
    /// `100 × net / capital` percent.
    pub roi: Roi,
}

/// Prices one YES contract bought at `yes_ask` on `yes_venue` with one NO contract bought at `no_ask` on
/// `no_venue`, each leg's fee at `fees`.
pub fn price_pair(yes_venue: Exchange, yes_ask: Price, no_venue: Exchange, no_ask: Price, fees: PairFees) -> Edge {
    let cost = MicroUsd::from_price(yes_ask) + MicroUsd::from_price(no_ask);
    let gross = MicroUsd::from_micros(SCALE) - cost;
    let yes_fee = fees.taker_fee(yes_venue, yes_ask);
    let no_fee = fees.taker_fee(no_venue, no_ask);
    let fee = yes_fee + no_fee;
    let net = gross - fee;
    let capital = cost + fee;
    Edge {
        yes_price: yes_ask,
        no_price: no_ask,
        gross,
        yes_fee,
        no_fee,
        fee,
        net,
        capital,
        roi: Roi::from_ratio(net, capital),
    }
}

/// The top-of-book edge of one direction at `fees`, `None` when either leg has no ask.
pub fn evaluate(venue_a: &AskLadders, venue_b: &AskLadders, direction: Direction, fees: PairFees) -> Option<Edge> {
    let ladders = |ex: Exchange| {
        if ex == Exchange::VenueA { venue_a } else { venue_b }
    };
    let yes_venue = direction.buy_yes_market();
    let no_venue = direction.buy_no_market();
    let yes = ladders(yes_venue).best(Outcome::Yes)?;
    let no = ladders(no_venue).best(Outcome::No)?;
    Some(price_pair(yes_venue, yes, no_venue, no, fees))
}

/// Evaluates both directions at the top of book (at `fees`) and returns the better one: the higher net
/// edge, and on a tie YES on venue_a. `None` when neither direction has both asks.
///
/// Net edge alone decides because ROI is a function of it: the capital `yes + no + fee` equals
/// `1 − gross + fee = 1 − net`, so `roi = net / (1 − net)` grows with `net`.
pub fn best_direction(venue_a: &AskLadders, venue_b: &AskLadders, fees: PairFees) -> Option<(Direction, Edge)> {
    best_direction_top(
        TopAsks {
            venue_a_yes: venue_a.best(Outcome::Yes),
            venue_a_no: venue_a.best(Outcome::No),
            venue_b_yes: venue_b.best(Outcome::Yes),
            venue_b_no: venue_b.best(Outcome::No),
        },
        fees,
    )
}

/// The best ask of each outcome on each venue: all [`best_direction`] needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopAsks {
    pub venue_a_yes: Option<Price>,
    pub venue_a_no: Option<Price>,
    pub venue_b_yes: Option<Price>,
    pub venue_b_no: Option<Price>,
}

impl TopAsks {
    /// The best asks of a venue_a book and a venue_b token pair, read straight from the books: the same
    /// prices [`AskLadders::from_venue_a`] / [`AskLadders::from_venue_b`] would put first, without building
    /// (allocating, cleaning and sorting) the ladders. The scanner prices every pair at the top of book
    /// first and builds ladders only for the few that clear the threshold.
    pub fn of_books(venue_a: &BookSnapshot, venue_b_yes: &BookSnapshot, venue_b_no: &BookSnapshot) -> TopAsks {
        TopAsks::of_tops(
            &BookTop::of(venue_a),
            &BookTop::of(venue_b_yes),
            &BookTop::of(venue_b_no),
        )
    }

    /// The same prices from the books' summaries ([`BookTop`]), which the live books compute once when a
    /// book is written: a full pass then reads four prices per pair instead of walking four ladders.
    pub fn of_tops(venue_a: &BookTop, venue_b_yes: &BookTop, venue_b_no: &BookTop) -> TopAsks {
        TopAsks {
            venue_a_yes: venue_a.ask_from_no_bids,
            venue_a_no: venue_a.ask_from_bids,
            venue_b_yes: venue_b_yes.ask,
            venue_b_no: venue_b_no.ask,
        }
    }

    fn best(&self, venue: Exchange, outcome: Outcome) -> Option<Price> {
        match (venue, outcome) {
            (Exchange::VenueA, Outcome::Yes) => self.venue_a_yes,
            (Exchange::VenueA, Outcome::No) => self.venue_a_no,
            (Exchange::VenueB, Outcome::Yes) => self.venue_b_yes,
            (Exchange::VenueB, Outcome::No) => self.venue_b_no,
        }
    }
}

/// The top of one book as the pricing reads it: the best (lowest) price a taker can buy at from each ladder,
/// among the levels [`AskLadders`] keeps (`0 < price < 1`, `size > 0`). Computed once per book write
/// ([`BookTop::of`]), so pricing a pair at the top of book touches no ladder.
///
/// Which field a venue uses: a venue_b token book is bought from its `asks` ([`BookTop::ask`]); a venue_a
/// book sells YES at `1 −` its best NO bid ([`BookTop::ask_from_no_bids`]) and NO at `1 −` its best YES bid
/// ([`BookTop::ask_from_bids`]), as [`AskLadders::from_venue_a`] derives them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BookTop {
    /// Best ask of the `asks` ladder.
    pub ask: Option<Price>,
    /// Best ask implied by the `bids` ladder (`1 −` best bid).
    pub ask_from_bids: Option<Price>,
    /// Best ask implied by the `no_bids` ladder (`1 −` best NO bid).
    pub ask_from_no_bids: Option<Price>,
}

impl BookTop {
    /// The summary of a book (linear in its levels; no allocation).
    pub fn of(book: &BookSnapshot) -> BookTop {
        BookTop {
            ask: best_clean(book.asks.iter().copied()),
            ask_from_bids: best_clean(book.bids.iter().map(ask_from_opposite_bid)),
            ask_from_no_bids: best_clean(book.no_bids.iter().map(ask_from_opposite_bid)),
        }
    }
}

/// The lowest price among the levels [`clean`] keeps.
fn best_clean(levels: impl Iterator<Item = Level>) -> Option<Price> {
    levels
        .filter(|l| l.price.micros() > 0 && l.price.micros() < SCALE && l.size.micros() > 0)
        .map(|l| l.price)
        .min()
}

/// [`best_direction`] from the best asks alone.
pub fn best_direction_top(top: TopAsks, fees: PairFees) -> Option<(Direction, Edge)> {
    let mut best: Option<(Direction, Edge)> = None;
    for d in Direction::ALL {
        let (yes_venue, no_venue) = (d.buy_yes_market(), d.buy_no_market());
        let (Some(yes), Some(no)) = (top.best(yes_venue, Outcome::Yes), top.best(no_venue, Outcome::No)) else {
            continue;
        };
        let e = price_pair(yes_venue, yes, no_venue, no, fees);
        let better = match &best {
            None => true,
            Some((_, b)) => e.net > b.net,
        };
        if better {
            best = Some((d, e));
        }
    }
    best
}

#[cfg(test)]
pub(crate) mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::{Amount, Timestamp};

    pub(crate) use crate::arb::fixtures::lvl;

    fn c(x: &str) -> Price {
        x.parse().unwrap()
    }

    #[test]
    fn hand_worked_pairs() {
        // 1) YES on venue_a at 0.45, NO on venue_b at 0.50.
        //    gross = 100 × (1 − 0.95) = 5.00 c
        //    fee   = ceil(7 × 0.45 × 0.55 = 1.7325) = 2 c  +  0.07 × 0.5 × 0.5 = 0.0175 $ = 1.75 c  → 3.75 c
        //    net   = 5.00 − 3.75 = 1.25 c
        //    roi   = 100 × 1.25 / (95 + 3.75) = 1.2658…% → 1.27 %
        let e = price_pair(Exchange::VenueA, c("0.45"), Exchange::VenueB, c("0.50"), PairFees::SPEC);
        assert_eq!(e.gross, MicroUsd::from_cents(5));
        assert_eq!(e.fee, MicroUsd(37_500));
        assert_eq!(e.net, MicroUsd(12_500));
        assert_eq!(
            (e.gross.cents_f64(), e.fee.cents_f64(), e.net.cents_f64()),
            (5.0, 3.75, 1.25)
        );
        assert_eq!(e.roi.percent_f64(), 1.27);

        // 2) YES on venue_b at 0.40, NO on venue_a at 0.55.
        //    gross = 5.00 c; fee = 0.0168 $ (1.68 c, exact at 5 decimals) + ceil(1.7325) = 2 c → 3.68 c
        //    net = 1.32 c; roi = 1.32 / 98.68 = 1.3376…% → 1.34 %
        let e = price_pair(Exchange::VenueB, c("0.40"), Exchange::VenueA, c("0.55"), PairFees::SPEC);
        assert_eq!(
            (e.gross.cents_f64(), e.fee.cents_f64(), e.net.cents_f64()),
            (5.0, 3.68, 1.32)
        );
        assert_eq!(e.roi, Roi(134));

        // 3) A losing pair: 0.49 on venue_a + 0.50 on venue_b. gross 1 c; fee ceil(1.7493) = 2 c + 1.75 c;
        //    net = −2.75 c; roi = −2.75 / 102.75 = −2.676…% → −2.68 %.
        let e = price_pair(Exchange::VenueA, c("0.49"), Exchange::VenueB, c("0.50"), PairFees::SPEC);
        assert_eq!(e.net, MicroUsd(-27_500));
        assert_eq!(e.roi, Roi(-268));

        // 4) Deep in the tails: YES on venue_b at 0.0125, NO on venue_a at 0.95.
        //    gross = 100 × (1 − 0.9625) = 3.75 c
        //    fee_b = 0.07 × 0.0125 × 0.9875 = 0.000864062… → 0.00086 $ = 0.086 c
        //    fee_a = ceil(7 × 0.95 × 0.05 = 0.3325) = 1 c; fee = 1.086 c → rendered 1.09
        //    net = 3.75 − 1.086 = 2.664 c → rendered 2.66; roi = 2.664 / 97.336 = 2.7369…% → 2.74 %
        let e = price_pair(
            Exchange::VenueB,
            c("0.0125"),
            Exchange::VenueA,
            c("0.95"),
            PairFees::SPEC,
        );
        assert_eq!(e.fee, MicroUsd(10_860));
        assert_eq!(e.net, MicroUsd(26_640));
        assert_eq!(
            (e.fee.cents_f64(), e.net.cents_f64(), e.roi.percent_f64()),
            (1.09, 2.66, 2.74)
        );

        // 5) Same venue both legs (never produced by the scanner, but the formula is venue-agnostic):
        //    0.50 + 0.48 on venue_a: gross 2 c, fees 2 + 2 c, net −2 c.
        let e = price_pair(Exchange::VenueA, c("0.50"), Exchange::VenueA, c("0.48"), PairFees::SPEC);
        assert_eq!(e.net, MicroUsd::from_cents(-2));

        // 6) Example 1 at a venue_b rate of 0.02: fee = 2 c + 0.02 × 0.5 × 0.5 = 0.005 $ = 0.5 c → 2.5 c;
        //    net = 5 − 2.5 = 2.5 c; roi = 2.5 / 97.5 = 2.564…% → 2.56 %. venue_a's leg is unchanged.
        let low = PairFees {
            category: crate::Category::Sports,
            venue_b: "0.02".parse().unwrap(),
        };
        let e = price_pair(Exchange::VenueA, c("0.45"), Exchange::VenueB, c("0.50"), low);
        assert_eq!((e.yes_fee, e.no_fee), (MicroUsd::from_cents(2), MicroUsd(5_000)));
        assert_eq!((e.fee, e.net, e.roi), (MicroUsd(25_000), MicroUsd(25_000), Roi(256)));
    }

    #[test]
    fn venue_a_asks_come_from_opposite_bids() {
        let book = BookSnapshot {
            exchange: Exchange::VenueA,
            market_id: "KXBTC15M-26NOV211415-15".into(),
            asset_id: None,
            timestamp: Timestamp(0),
            bids: vec![lvl(4400, 10), lvl(4300, 20)],
            asks: vec![],
            no_bids: vec![lvl(5500, 7), lvl(5400, 3), lvl(10_000, 1), lvl(5300, 0)],
        };
        let a = AskLadders::from_venue_a(&book);
        // YES asks: 1 − 0.55 = 0.45 (7), 1 − 0.54 = 0.46 (3); the NO bid at 1.00 (YES ask 0) and the empty
        // level are dropped.
        assert_eq!(a.yes, vec![lvl(4500, 7), lvl(4600, 3)]);
        assert_eq!(a.no, vec![lvl(5600, 10), lvl(5700, 20)]);
        assert_eq!(a.best(Outcome::Yes), Some(c("0.45")));
    }

    #[test]
    fn both_directions_are_evaluated() {
        // venue_a: YES ask 0.45 (from NO bid 0.55), NO ask 0.56 (from YES bid 0.44).
        // venue_b: YES ask 0.40, NO ask 0.50.
        // YES on A + NO on B: 0.45 + 0.50 → net 1.25 c (worked above).
        // YES on B + NO on A: 0.40 + 0.56 → gross 4 c, fee 1.68 + ceil(1.7248) = 2 → net 0.32 c.
        let a = AskLadders::new([lvl(4500, 5)], [lvl(5600, 5)]);
        let b = AskLadders::new([lvl(4000, 5)], [lvl(5000, 5)]);
        assert_eq!(
            evaluate(&a, &b, Direction::YesOnB, PairFees::SPEC).unwrap().net,
            MicroUsd(3_200)
        );
        let (d, e) = best_direction(&a, &b, PairFees::SPEC).unwrap();
        assert_eq!(d, Direction::YesOnA);
        assert_eq!(e.net, MicroUsd(12_500));
        assert_eq!(
            (d.buy_yes_market(), d.buy_no_market()),
            (Exchange::VenueA, Exchange::VenueB)
        );

        // One direction missing a leg: the other one is chosen even if it loses.
        let b_no_yes = AskLadders::new([], [lvl(5000, 5)]);
        let (d, e) = best_direction(&a, &b_no_yes, PairFees::SPEC).unwrap();
        assert_eq!(d, Direction::YesOnA);
        assert_eq!(e.net, MicroUsd(12_500));
        assert!(best_direction(&AskLadders::default(), &b, PairFees::SPEC).is_none());
    }

    fn ladders() -> impl Strategy<Value = AskLadders> {
        let level = (1i64..1_000_000, 1i64..1_000_000_000).prop_map(|(p, s)| Level {
            price: Price(p),
            size: Amount(s),
        });
        (
            prop::collection::vec(level.clone(), 0..4),
            prop::collection::vec(level, 0..4),
        )
            .prop_map(|(y, n)| AskLadders::new(y, n))
    }

    /// Any ladder, including the levels the constructors drop (price 0 or ≥ 1, size 0) and any order.
    fn raw_levels() -> impl Strategy<Value = Vec<Level>> {
        proptest::collection::vec((0i64..=1_000_100, 0i64..5), 0..6).prop_map(|v| {
            v.into_iter()
                .map(|(p, s)| Level {
                    price: Price(p),
                    size: Amount::from_units(s),
                })
                .collect()
        })
    }

    fn book(bids: Vec<Level>, asks: Vec<Level>, no_bids: Vec<Level>) -> BookSnapshot {
        BookSnapshot {
            exchange: Exchange::VenueA,
            market_id: "M".into(),
            asset_id: None,
            timestamp: Timestamp::from_millis(0),
            bids,
            asks,
            no_bids,
        }
    }

    proptest! {
        #[test]
        fn top_of_book_pricing_equals_the_ladders(
            a_bids in raw_levels(), a_no_bids in raw_levels(), b_yes in raw_levels(), b_no in raw_levels()
        ) {
            let va = book(a_bids, vec![], a_no_bids);
            let (by, bn) = (book(vec![], b_yes, vec![]), book(vec![], b_no, vec![]));
            let ladders = best_direction(&AskLadders::from_venue_a(&va), &AskLadders::from_venue_b(&by, &bn), PairFees::SPEC);
            prop_assert_eq!(best_direction_top(TopAsks::of_books(&va, &by, &bn), PairFees::SPEC), ladders);
        }

        #[test]
        fn net_is_gross_minus_fee(y in 1i64..1_000_000, n in 1i64..1_000_000, ya in any::<bool>(), na in any::<bool>()) {
            let ex = |a: bool| if a { Exchange::VenueA } else { Exchange::VenueB };
            let e = price_pair(ex(ya), Price(y), ex(na), Price(n), PairFees::SPEC);
            prop_assert_eq!(e.gross.micros(), 1_000_000 - y - n);
            prop_assert_eq!(e.fee, crate::arb::fees::taker_fee(ex(ya), Price(y)) + crate::arb::fees::taker_fee(ex(na), Price(n)));
            prop_assert_eq!(e.net, e.gross - e.fee);
            prop_assert_eq!(e.capital.micros(), y + n + e.fee.micros());
            // The capital is 1 − net, which is why ROI never reorders what net orders.
            prop_assert_eq!(e.capital.micros(), 1_000_000 - e.net.micros());
            // ROI has the sign of the net edge.
            prop_assert!(e.roi.basis_points() == 0 || e.roi.basis_points().signum() == e.net.micros().signum());
        }

        #[test]
        fn chosen_direction_is_never_worse(a in ladders(), b in ladders()) {
            let both: Vec<(Direction, Edge)> =
                Direction::ALL.iter().filter_map(|&d| evaluate(&a, &b, d, PairFees::SPEC).map(|e| (d, e))).collect();
            match best_direction(&a, &b, PairFees::SPEC) {
                None => prop_assert!(both.is_empty()),
                Some((d, e)) => {
                    prop_assert_eq!(Some(e), evaluate(&a, &b, d, PairFees::SPEC));
                    for (_, other) in &both {
                        prop_assert!(e.net >= other.net);
                    }
                }
            }
        }
    }
}
