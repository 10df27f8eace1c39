//! Quoting: each venue's YES book requoted around the pair's fair value (the book random walk: levels
//! kept, resized or added so consecutive books differ by a few levels), and venue_b's tick-size switches
//! near the price edges.

use crossbook_core::{Amount, Exchange, Price};
use rand::Rng;

use super::{
    BOOK_UPDATE_P, CROSS_OFFSET, Key, Model,
    book::{YesBook, YesSide},
    ex_index,
    types::Update,
};

impl Model {
    /// Requotes trading markets (each with probability [`BOOK_UPDATE_P`], markets in a cross episode and
    /// empty books every step; all of them when `all`).
    pub(super) fn refresh_books(&mut self, out: &mut Vec<Update>, all: bool) {
        let keys: Vec<Key> = self
            .markets
            .iter()
            .filter(|(_, m)| m.trading() && !m.is_bulk())
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            let m = &self.markets[&key];
            let pair = &self.pairs[&m.pair];
            let episode = self.episode.as_ref().filter(|e| e.pair == m.pair);
            let empty = self.books.get(&key).is_none_or(YesBook::is_empty);
            if !all && episode.is_none() && !empty && !self.rng.random_bool(BOOK_UPDATE_P) {
                continue;
            }
            let (base, offset) = match episode {
                Some(ep) => {
                    let off = if ep.cheap == key.0 { -CROSS_OFFSET } else { CROSS_OFFSET };
                    (pair.fair.clamp(10, 90), off)
                }
                None => (pair.fair, pair.offsets[ex_index(key.0)]),
            };
            let mut mid = (base + offset).clamp(2, 98);
            if m.inverted {
                mid = 100 - mid;
            }
            let depth = m.depth;
            let lot = m.lot();
            let spread = if episode.is_some() {
                2
            } else {
                let mut s = m.spread;
                if self.rng.random_bool(0.03) {
                    s = (s + self.rng.random_range(-1..=1)).clamp(1, 3);
                    self.markets.get_mut(&key).expect("market").spread = s;
                }
                s
            };
            let mut bid = mid - spread / 2;
            let mut ask = bid + spread;
            if ask > 99 {
                ask = 99;
                bid = bid.min(98);
            }
            if bid < 1 {
                bid = 1;
                ask = ask.max(2);
            }
            let old = self.books.get(&key).cloned().unwrap_or_default();
            let new = self.requote(&old, bid, ask, depth, lot);
            let changes = old.diff(&new);
            self.books.insert(key.clone(), new);
            if !changes.is_empty() {
                let top = self.top_of(&key);
                out.push(Update::Book {
                    exchange: key.0,
                    market_id: key.1.clone(),
                    changes,
                    top,
                });
            }
        }
    }

    /// A new book with best bid `bid` and best ask `ask`, keeping (and sometimes resizing) the levels that
    /// stay in range so that consecutive books differ by a handful of levels.
    pub(super) fn requote(&mut self, old: &YesBook, bid: i64, ask: i64, depth: i64, lot: Amount) -> YesBook {
        let mut new = YesBook::default();
        for i in 0..depth {
            for (side, p) in [(YesSide::Bid, bid - i), (YesSide::Ask, ask + i)] {
                if !(1..=99).contains(&p) {
                    continue;
                }
                let (old_side, new_side) = match side {
                    YesSide::Bid => (&old.bids, &mut new.bids),
                    YesSide::Ask => (&old.asks, &mut new.asks),
                };
                let size = match old_side.get(&p) {
                    Some(s) if self.rng.random_bool(0.2) => self.resize(*s, lot),
                    Some(s) => *s,
                    None if i == 0 || self.rng.random_bool(0.85) => self.fresh_size(i, lot),
                    None => continue,
                };
                new_side.insert(p, size);
            }
        }
        new
    }

    pub(super) fn lots_per_unit(lot: Amount) -> i64 {
        (1_000_000 / lot.micros().max(1)).max(1)
    }

    pub(super) fn fresh_size(&mut self, level: i64, lot: Amount) -> Amount {
        let units = self.rng.random_range(10..=400) * (2 + level) / 2;
        let per = Self::lots_per_unit(lot);
        let frac = if per > 1 { self.rng.random_range(0..per) } else { 0 };
        Amount::from_micros((units * per + frac) * lot.micros())
    }

    pub(super) fn resize(&mut self, size: Amount, lot: Amount) -> Amount {
        let lots = size.micros() / lot.micros();
        let new = (lots * self.rng.random_range(70..=130) / 100).max(Self::lots_per_unit(lot));
        Amount::from_micros(new * lot.micros())
    }

    /// venue_b switches a market to a 0.001 tick near the edges (best bid ≤ 0.04 or best ask ≥ 0.96) and
    /// back to 0.01 once well inside (0.06–0.94).
    pub(super) fn update_ticks(&mut self, out: &mut Vec<Update>) {
        let fine = Price::from_micros(1_000);
        let coarse = Price::from_cents(1);
        let full = self.bulk.is_some();
        for (key, m) in self
            .markets
            .iter_mut()
            .filter(|(k, m)| k.0 == Exchange::VenueB && m.trading() && !m.is_bulk())
        {
            let Some(book) = self.books.get(key) else { continue };
            let bid = book.best_bid().map_or(50, |(p, _)| p);
            let ask = book.best_ask().map_or(50, |(p, _)| p);
            // At the full scale venue_b's BTC windows always quote in 0.001, as the live venue's do.
            let tick = if (full && m.series_id.starts_with("btc-up-or-down")) || bid <= 4 || ask >= 96 {
                fine
            } else if bid >= 6 && ask <= 94 {
                coarse
            } else {
                m.tick
            };
            if tick != m.tick {
                out.push(Update::TickSize {
                    market_id: m.market_id.clone(),
                    old: m.tick,
                    new: tick,
                });
                m.tick = tick;
            }
        }
    }
}
