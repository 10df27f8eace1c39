//! Asks derived from the opposite side's bids.
//!
//! venue_a books carry two bid ladders and no asks. A NO bid at `p` for `s` contracts is a YES ask at
//! `1 − p` for `s` (a YES buyer is matched with a NO buyer and the pair pays 1 dollar), and a YES bid at `p`
//! is a NO ask at `1 − p`. This is the one place that rule is written.

use super::{BookSnapshot, Level};

/// A bid at `p` for `s` as the opposite outcome's ask at `1 − p` for `s`.
pub fn ask_from_opposite_bid(bid: &Level) -> Level {
    Level {
        price: bid.price.complement(),
        size: bid.size,
    }
}

/// The asks implied by the opposite outcome's bids, ascending by price (stable: equal prices keep the bids'
/// order). Levels are kept as they are: no level is dropped.
pub fn asks_from_opposite_bids(bids: &[Level]) -> Vec<Level> {
    let mut asks: Vec<Level> = bids.iter().map(ask_from_opposite_bid).collect();
    asks.sort_by_key(|l| l.price);
    asks
}

impl BookSnapshot {
    /// venue_a YES asks: the NO bids at `1 − p`, ascending.
    pub fn derived_yes_asks(&self) -> Vec<Level> {
        asks_from_opposite_bids(&self.no_bids)
    }

    /// venue_a NO asks: the YES bids at `1 − p`, ascending.
    pub fn derived_no_asks(&self) -> Vec<Level> {
        asks_from_opposite_bids(&self.bids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Amount, Exchange, Price, Timestamp};

    fn lv(micros: i64, units: i64) -> Level {
        Level {
            price: Price(micros),
            size: Amount::from_units(units),
        }
    }

    #[test]
    fn a_bid_at_p_is_an_ask_at_one_minus_p_for_the_same_size() {
        assert_eq!(ask_from_opposite_bid(&lv(550_000, 7)), lv(450_000, 7));
        assert_eq!(ask_from_opposite_bid(&lv(0, 1)), lv(1_000_000, 1));
        assert_eq!(ask_from_opposite_bid(&lv(1_000_000, 1)), lv(0, 1));
        // Sub-tick prices stay exact.
        assert_eq!(ask_from_opposite_bid(&lv(123_457, 2)), lv(876_543, 2));
    }

    #[test]
    fn derived_ladders_ascend_whatever_the_bid_order() {
        // Best-first bids (descending) give best-first asks (ascending).
        let bids = [lv(520_000, 95), lv(510_000, 150), lv(490_000, 1000)];
        assert_eq!(
            asks_from_opposite_bids(&bids),
            vec![lv(480_000, 95), lv(490_000, 150), lv(510_000, 1000)]
        );
        // Any order in, ascending out; equal prices keep their order; nothing is dropped.
        let bids = [lv(400_000, 1), lv(600_000, 2), lv(600_000, 3), lv(500_000, 0)];
        assert_eq!(
            asks_from_opposite_bids(&bids),
            vec![lv(400_000, 2), lv(400_000, 3), lv(500_000, 0), lv(600_000, 1)]
        );
        assert!(asks_from_opposite_bids(&[]).is_empty());
    }

    #[test]
    fn a_venue_a_book_derives_both_sides() {
        let book = BookSnapshot {
            exchange: Exchange::VenueA,
            market_id: "M".into(),
            asset_id: None,
            timestamp: Timestamp(0),
            bids: vec![lv(470_000, 312), lv(460_000, 88)],
            asks: vec![],
            no_bids: vec![lv(520_000, 95), lv(510_000, 150)],
        };
        assert_eq!(book.derived_yes_asks(), vec![lv(480_000, 95), lv(490_000, 150)]);
        assert_eq!(book.derived_no_asks(), vec![lv(530_000, 312), lv(540_000, 88)]);
    }
}
