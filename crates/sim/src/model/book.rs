//! The canonical book of one binary market and the venue views derived from it.
//!
//! The model keeps a single YES book per market (bids and asks in whole cents). Both venues' wire books are
//! exact transformations of it, so what a venue sends and what the model holds can never drift apart:
//!
//! - venue_a sends two bid-only ladders: YES bids are the YES bids; a NO bid at `1 − p` stands for every YES
//!   ask at `p` (buying NO at `1 − p` is selling YES at `p`).
//! - venue_b sends one full book per outcome token: the first token's book is the YES book; the second
//!   token's book is its mirror (bid at `1 − p` for every YES ask at `p`, ask at `1 − q` for every YES bid `q`).

use std::collections::BTreeMap;

use crossbook_core::{Amount, Price};

/// Which side of the YES book a level is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum YesSide {
    /// Someone wants to buy YES.
    Bid,
    /// Someone wants to sell YES (venue_a shows it as a NO bid at `1 − p`).
    Ask,
}

/// One level that changed: `old` → `new` absolute size (0 = absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LevelChange {
    pub side: YesSide,
    /// YES price in whole cents (1–99).
    pub cents: i64,
    pub old: Amount,
    pub new: Amount,
}

impl LevelChange {
    /// The YES price.
    pub fn price(&self) -> Price {
        Price::from_cents(self.cents)
    }
    /// Signed change of size (venue_a `delta_fp`).
    pub fn delta(&self) -> Amount {
        Amount::from_micros(self.new.micros() - self.old.micros())
    }
}

/// The YES book of one market: price in whole cents → resting size.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct YesBook {
    pub bids: BTreeMap<i64, Amount>,
    pub asks: BTreeMap<i64, Amount>,
}

/// A price ladder as `(price, size)` pairs in the order the venue sends it.
pub type Ladder = Vec<(Price, Amount)>;

impl YesBook {
    /// Best (highest) YES bid.
    pub fn best_bid(&self) -> Option<(i64, Amount)> {
        self.bids.iter().next_back().map(|(p, s)| (*p, *s))
    }
    /// Best (lowest) YES ask.
    pub fn best_ask(&self) -> Option<(i64, Amount)> {
        self.asks.iter().next().map(|(p, s)| (*p, *s))
    }
    pub fn is_empty(&self) -> bool {
        self.bids.is_empty() && self.asks.is_empty()
    }

    /// Every level whose size differs between `self` and `new`, bids then asks, ascending price.
    pub fn diff(&self, new: &YesBook) -> Vec<LevelChange> {
        let mut out = Vec::new();
        for (side, a, b) in [
            (YesSide::Bid, &self.bids, &new.bids),
            (YesSide::Ask, &self.asks, &new.asks),
        ] {
            let mut prices: Vec<i64> = a.keys().chain(b.keys()).copied().collect();
            prices.sort_unstable();
            prices.dedup();
            for p in prices {
                let old = a.get(&p).copied().unwrap_or(Amount::ZERO);
                let new = b.get(&p).copied().unwrap_or(Amount::ZERO);
                if old != new {
                    out.push(LevelChange {
                        side,
                        cents: p,
                        old,
                        new,
                    });
                }
            }
        }
        out
    }

    /// venue_a `yes_dollars`: YES bids, ascending (best last).
    pub fn venue_a_yes(&self) -> Ladder {
        self.bids.iter().map(|(p, s)| (Price::from_cents(*p), *s)).collect()
    }

    /// venue_a `no_dollars`: NO bids at `1 − p` for each YES ask `p`, ascending (best last).
    pub fn venue_a_no(&self) -> Ladder {
        self.asks
            .iter()
            .rev()
            .map(|(p, s)| (Price::from_cents(100 - p), *s))
            .collect()
    }

    /// venue_b book of outcome token `index` (0 = the YES outcome, 1 = its mirror): `(bids ascending, asks
    /// descending)`, best level last in both, as the venue's REST `/book` and WS `book` frames order them.
    pub fn token_view(&self, index: usize) -> (Ladder, Ladder) {
        if index == 0 {
            let bids = self.bids.iter().map(|(p, s)| (Price::from_cents(*p), *s)).collect();
            let asks = self
                .asks
                .iter()
                .rev()
                .map(|(p, s)| (Price::from_cents(*p), *s))
                .collect();
            (bids, asks)
        } else {
            let bids = self
                .asks
                .iter()
                .rev()
                .map(|(p, s)| (Price::from_cents(100 - p), *s))
                .collect();
            let asks = self
                .bids
                .iter()
                .map(|(p, s)| (Price::from_cents(100 - p), *s))
                .collect();
            (bids, asks)
        }
    }

    /// Best bid and ask of venue_b token `index`.
    pub fn token_top(&self, index: usize) -> (Option<Price>, Option<Price>) {
        let bid = self.best_bid().map(|(p, _)| p);
        let ask = self.best_ask().map(|(p, _)| p);
        if index == 0 {
            (bid.map(Price::from_cents), ask.map(Price::from_cents))
        } else {
            (
                ask.map(|p| Price::from_cents(100 - p)),
                bid.map(|p| Price::from_cents(100 - p)),
            )
        }
    }
}

/// How one YES-book level change appears on venue_b token `index`: `(price, side "BUY"|"SELL")`.
pub fn token_level(change: &LevelChange, index: usize) -> (Price, &'static str) {
    match (index, change.side) {
        (0, YesSide::Bid) => (Price::from_cents(change.cents), "BUY"),
        (0, YesSide::Ask) => (Price::from_cents(change.cents), "SELL"),
        (_, YesSide::Bid) => (Price::from_cents(100 - change.cents), "SELL"),
        (_, YesSide::Ask) => (Price::from_cents(100 - change.cents), "BUY"),
    }
}

/// How one YES-book level change appears on venue_a: `(price in its own leg, side "yes"|"no")`.
pub fn venue_a_level(change: &LevelChange) -> (Price, &'static str) {
    match change.side {
        YesSide::Bid => (Price::from_cents(change.cents), "yes"),
        YesSide::Ask => (Price::from_cents(100 - change.cents), "no"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book() -> YesBook {
        let u = Amount::from_units;
        YesBook {
            bids: [(43, u(500)), (45, u(210)), (47, u(312))].into_iter().collect(),
            asks: [(48, u(95)), (50, u(40)), (51, u(1000))].into_iter().collect(),
        }
    }

    #[test]
    fn venue_views_are_exact_mirrors() {
        let b = book();
        let no: Vec<i64> = b.venue_a_no().iter().map(|(p, _)| p.micros() / 10_000).collect();
        assert_eq!(no, vec![49, 50, 52], "NO bids ascending, best (1 − best ask) last");
        let (bids, asks) = b.token_view(0);
        assert_eq!(bids.last().unwrap().0, Price::from_cents(47));
        assert_eq!(asks.last().unwrap().0, Price::from_cents(48));
        let (bids1, asks1) = b.token_view(1);
        assert_eq!(bids1.last().unwrap().0, Price::from_cents(52));
        assert_eq!(asks1.last().unwrap().0, Price::from_cents(53));
        assert!(bids1.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(asks1.windows(2).all(|w| w[0].0 > w[1].0));
        assert_eq!(
            b.token_top(1),
            (Some(Price::from_cents(52)), Some(Price::from_cents(53)))
        );
    }

    #[test]
    fn diff_lists_every_changed_level() {
        let a = book();
        let mut b = a.clone();
        b.bids.remove(&43);
        b.asks.insert(48, Amount::from_units(80));
        b.bids.insert(46, Amount::from_units(7));
        let d = a.diff(&b);
        assert_eq!(d.len(), 3);
        assert_eq!(d[0].cents, 43);
        assert_eq!(d[0].delta(), Amount::from_units(-500));
        assert_eq!(venue_a_level(&d[2]), (Price::from_cents(52), "no"));
        assert_eq!(token_level(&d[2], 1), (Price::from_cents(52), "BUY"));
    }
}
