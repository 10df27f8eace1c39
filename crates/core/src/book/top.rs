//! Top of book, mid and spread.
//!
//! The best bid and ask of one outcome with their sizes, and the mid and spread quoted from them. Mid and
//! spread are rounded to a quote tick of 0.0001 dollar here, in exact micro-dollars, so every route renders
//! the same numbers; converting them to JSON numbers is the server's job.

use super::{BookSnapshot, Level, derive::ask_from_opposite_bid};
use crate::{Exchange, Price, money::round_half_up};

/// The tick mid and spread are rounded to: 0.0001 dollar, in micro-dollars.
pub const QUOTE_TICK: i64 = 100;

/// Decimal digits of a micro-dollar dropped when rounding to [`QUOTE_TICK`].
const QUOTE_TICK_DIGITS: u32 = 2;

/// The best price of a best-first ladder.
pub fn best(ladder: &[Level]) -> Option<Price> {
    ladder.first().map(|l| l.price)
}

/// `(bid + ask) / 2` rounded half-up to [`QUOTE_TICK`]: a mid exactly between two ticks goes to the upper one
/// (toward +∞; prices are never negative).
pub fn mid(bid: Price, ask: Price) -> Price {
    let twice = bid.micros().saturating_add(ask.micros());
    let step = 2 * QUOTE_TICK;
    let mut ticks = twice.div_euclid(step);
    if twice.rem_euclid(step) * 2 >= step {
        ticks += 1;
    }
    Price(ticks * QUOTE_TICK)
}

/// `ask − bid` rounded half-up to [`QUOTE_TICK`], halves away from zero. A crossed book (bid above ask)
/// keeps its negative spread.
pub fn spread(bid: Price, ask: Price) -> Price {
    let d = ask.micros().saturating_sub(bid.micros());
    Price(round_half_up(d, QUOTE_TICK_DIGITS).saturating_mul(QUOTE_TICK))
}

/// The best bid and best ask of one outcome, each with its size; `None` for an empty side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TopOfBook {
    pub bid: Option<Level>,
    pub ask: Option<Level>,
}

impl TopOfBook {
    /// The first level of each best-first ladder.
    pub fn of(bids: &[Level], asks: &[Level]) -> Self {
        TopOfBook {
            bid: bids.first().copied(),
            ask: asks.first().copied(),
        }
    }

    /// The YES side of a venue_a book: the best YES bid, and the YES ask derived from the best NO bid.
    pub fn venue_a_yes(book: &BookSnapshot) -> Self {
        TopOfBook {
            bid: book.bids.first().copied(),
            ask: book.no_bids.first().map(ask_from_opposite_bid),
        }
    }

    /// The top of book a row of `exchange` shows: on venue_a the YES side ([`Self::venue_a_yes`]), on venue_b
    /// the token's own ladders (each outcome token has its own book).
    pub fn of_book(exchange: Exchange, book: &BookSnapshot) -> Self {
        match exchange {
            Exchange::VenueA => Self::venue_a_yes(book),
            Exchange::VenueB => Self::of(&book.bids, &book.asks),
        }
    }

    pub fn bid_price(&self) -> Option<Price> {
        self.bid.map(|l| l.price)
    }

    pub fn ask_price(&self) -> Option<Price> {
        self.ask.map(|l| l.price)
    }

    /// [`mid`] when both sides exist.
    pub fn mid(&self) -> Option<Price> {
        Some(mid(self.bid_price()?, self.ask_price()?))
    }

    /// [`spread`] when both sides exist.
    pub fn spread(&self) -> Option<Price> {
        Some(spread(self.bid_price()?, self.ask_price()?))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::{Amount, Exchange, Timestamp};

    fn p(m: i64) -> Price {
        Price(m)
    }

    fn lv(micros: i64, units: i64) -> Level {
        Level {
            price: Price(micros),
            size: Amount::from_units(units),
        }
    }

    #[test]
    fn mid_rounds_half_up_to_the_quote_tick() {
        assert_eq!(mid(p(530_000), p(550_000)), p(540_000));
        // 0.53 and 0.5401 → 0.53505 → 0.5351.
        assert_eq!(mid(p(530_000), p(540_100)), p(535_100));
        // Exactly half a tick above a tick goes up; a micro less goes down.
        assert_eq!(mid(p(0), p(100)), p(100));
        assert_eq!(mid(p(0), p(99)), p(0));
        assert_eq!(mid(p(500_000), p(500_101)), p(500_100));
        assert_eq!(mid(p(500_000), p(500_099)), p(500_000));
        // Odd micro sums: 0.500001 + 0.500100 → 0.5000505 → 0.5001.
        assert_eq!(mid(p(500_001), p(500_100)), p(500_100));
        // Bounds and crossed books.
        assert_eq!(mid(p(0), p(1_000_000)), p(500_000));
        assert_eq!(mid(p(1_000_000), p(1_000_000)), p(1_000_000));
        assert_eq!(mid(p(600_000), p(580_000)), p(590_000));
    }

    #[test]
    fn spread_rounds_half_away_from_zero_to_the_quote_tick() {
        assert_eq!(spread(p(530_000), p(550_000)), p(20_000));
        assert_eq!(spread(p(530_000), p(540_100)), p(10_100));
        assert_eq!(spread(p(500_000), p(500_000)), p(0));
        assert_eq!(spread(p(500_000), p(500_050)), p(100), "half a tick up");
        assert_eq!(spread(p(500_000), p(500_049)), p(0));
        assert_eq!(spread(p(500_000), p(500_150)), p(200));
        // Crossed: negative, halves away from zero.
        assert_eq!(spread(p(600_000), p(580_000)), p(-20_000));
        assert_eq!(spread(p(500_050), p(500_000)), p(-100));
        assert_eq!(spread(p(500_049), p(500_000)), p(0));
    }

    #[test]
    fn top_of_book_with_sizes() {
        let t = TopOfBook::of(&[lv(470_000, 312), lv(460_000, 88)], &[lv(480_000, 95)]);
        assert_eq!(t.bid, Some(lv(470_000, 312)));
        assert_eq!(t.ask, Some(lv(480_000, 95)));
        assert_eq!((t.mid(), t.spread()), (Some(p(475_000)), Some(p(10_000))));

        let one_sided = TopOfBook::of(&[], &[lv(480_000, 95)]);
        assert_eq!((one_sided.bid_price(), one_sided.ask_price()), (None, Some(p(480_000))));
        assert_eq!((one_sided.mid(), one_sided.spread()), (None, None));
        assert_eq!(TopOfBook::default().mid(), None);
        assert_eq!(best(&[lv(1, 1), lv(2, 1)]), Some(p(1)));
        assert_eq!(best(&[]), None);

        // venue_a: the YES ask is 1 − the best NO bid, with its size.
        let book = BookSnapshot {
            exchange: Exchange::VenueA,
            market_id: "M".into(),
            asset_id: None,
            timestamp: Timestamp(0),
            bids: vec![lv(470_000, 312)],
            asks: vec![],
            no_bids: vec![lv(520_000, 95), lv(510_000, 150)],
        };
        let t = TopOfBook::venue_a_yes(&book);
        assert_eq!((t.bid, t.ask), (Some(lv(470_000, 312)), Some(lv(480_000, 95))));
        assert_eq!(t.ask_price(), best(&book.derived_yes_asks()));
    }

    proptest! {
        #[test]
        fn mid_and_spread_match_a_rational_reference(b in 0i64..=1_000_000, a in 0i64..=1_000_000) {
            // Reference in exact rationals: mid = (a + b) / 2 dollars, rounded to the nearest 1/10_000,
            // halves up; spread = (a − b), rounded to the nearest 1/10_000, halves away from zero.
            let mid_ticks = (a + b + QUOTE_TICK).div_euclid(2 * QUOTE_TICK);
            prop_assert_eq!(mid(p(b), p(a)), p(mid_ticks * QUOTE_TICK));
            let d = a - b;
            let spread_ticks = d.signum() * ((d.abs() + QUOTE_TICK / 2) / QUOTE_TICK);
            prop_assert_eq!(spread(p(b), p(a)), p(spread_ticks * QUOTE_TICK));
            // Both land on the tick and within half a tick of the exact value.
            prop_assert_eq!(mid(p(b), p(a)).micros() % QUOTE_TICK, 0);
            prop_assert!((2 * mid(p(b), p(a)).micros() - (a + b)).abs() <= QUOTE_TICK);
            prop_assert!((spread(p(b), p(a)).micros() - d).abs() <= QUOTE_TICK / 2);
        }
    }
}
