//! The change generator's edits to a bulk book: a fresh book when a market starts trading, single-level
//! nudges and multi-level matches.

use crossbook_core::{Amount, Exchange, Price};
use rand::Rng;

use super::{Bulk, quiet};
use crate::model::{
    Key, Model,
    book::{LevelChange, YesBook, YesSide},
    ex_index,
    types::{SimMarket, Update},
};

impl Model {
    /// A full book around the market's fair value, as when it starts trading.
    pub(super) fn fresh_book(&mut self, key: &Key) -> YesBook {
        let m = &self.markets[key];
        let fair = self.pairs.get(&m.pair).map_or(50, |p| p.fair);
        let (spread, depth, lot) = (m.spread, m.depth, m.lot());
        let bid = (fair - spread / 2).clamp(1, 98);
        let ask = (bid + spread).min(99);
        self.requote(&YesBook::default(), bid, ask, depth, lot)
    }

    /// Gives a market that starts trading its book (sent as one change of every level) and makes it
    /// eligible for the change generator.
    pub(super) fn open_book(&mut self, bulk: &mut Bulk, key: &Key, out: &mut Vec<Update>) {
        let book = self.fresh_book(key);
        let changes = YesBook::default().diff(&book);
        self.books.insert(key.clone(), book);
        out.push(Update::Book {
            exchange: key.0,
            market_id: key.1.clone(),
            changes,
            top: self.top_of(key),
        });
        bulk.live[ex_index(key.0)].push(key.clone());
    }

    /// Applies `n` book changes to random non-quiet books of `ex`; returns how many were applied (fewer
    /// only when no eligible book was found).
    pub(super) fn churn(&mut self, bulk: &mut Bulk, ex: Exchange, n: u64, out: &mut Vec<Update>) -> u64 {
        let mut left = n;
        let mut misses = 0;
        let i = ex_index(ex);
        while left > 0 && misses < 64 {
            let live = &mut bulk.live[i];
            if live.is_empty() {
                break;
            }
            let at = self.rng.random_range(0..live.len());
            let trading =
                self.books.contains_key(&live[at]) && self.markets.get(&live[at]).is_some_and(SimMarket::trading);
            if !trading {
                live.swap_remove(at);
                continue;
            }
            if quiet(self.seed, self.now, &bulk.rates, &live[at].1) {
                misses += 1;
                continue;
            }
            let key = live[at].clone();
            let sweep = ex == Exchange::VenueB && left >= 2 && self.rng.random_range(0..100) < bulk.rates.match_percent;
            let used = if sweep {
                let levels = self.rng.random_range(2..=4).min(left);
                self.sweep(&key, levels as usize, out)
            } else {
                0
            };
            let used = if used == 0 { self.nudge(&key, out) } else { used };
            if used == 0 {
                misses += 1;
            } else {
                misses = 0;
            }
            left -= used.min(left);
        }
        n - left
    }

    /// One level of `key`'s book set to a new size: resized, added next to the ladder, or removed.
    fn nudge(&mut self, key: &Key, out: &mut Vec<Update>) -> u64 {
        let lot = self.markets[key].lot();
        let op = self.rng.random_range(0..10);
        let side = if self.rng.random_bool(0.5) {
            YesSide::Bid
        } else {
            YesSide::Ask
        };
        let book = self.books.get(key).cloned().unwrap_or_default();
        let (ladder, best_other) = match side {
            YesSide::Bid => (&book.bids, book.best_ask().map(|(p, _)| p)),
            YesSide::Ask => (&book.asks, book.best_bid().map(|(p, _)| p)),
        };
        let levels: Vec<(i64, Amount)> = match side {
            YesSide::Bid => ladder.iter().rev().map(|(p, s)| (*p, *s)).collect(),
            YesSide::Ask => ladder.iter().map(|(p, s)| (*p, *s)).collect(),
        };
        let (cents, old, new) = if op < 2 && levels.len() > 2 {
            // A resting order cancelled: a level behind the best goes.
            let (p, s) = levels[self.rng.random_range(1..levels.len())];
            (p, s, Amount::ZERO)
        } else if op < 4 {
            // A new order next to the ladder: inside the spread when there is room, else behind the worst.
            let step = if side == YesSide::Bid { 1 } else { -1 };
            let inside = levels.first().map(|(p, _)| p + step);
            let behind = levels
                .last()
                .map_or(if side == YesSide::Bid { 45 } else { 55 }, |(p, _)| p - step);
            let p = match (inside, best_other) {
                (Some(p), Some(o)) if (side == YesSide::Bid && p < o) || (side == YesSide::Ask && p > o) => p,
                _ => behind,
            };
            if !(1..=99).contains(&p) || ladder.contains_key(&p) {
                return 0;
            }
            let size = self.fresh_size(levels.len() as i64, lot);
            (p, Amount::ZERO, size)
        } else {
            let Some(&(p, s)) = levels.get(self.rng.random_range(0..levels.len().clamp(1, 3))) else {
                return 0;
            };
            let mut size = self.resize(s, lot);
            if size == s {
                size = Amount::from_micros(s.micros() + lot.micros());
            }
            (p, s, size)
        };
        let book = self.books.get_mut(key).expect("book of a live market");
        let ladder = match side {
            YesSide::Bid => &mut book.bids,
            YesSide::Ask => &mut book.asks,
        };
        if new == Amount::ZERO {
            ladder.remove(&cents);
        } else {
            ladder.insert(cents, new);
        }
        out.push(Update::Book {
            exchange: key.0,
            market_id: key.1.clone(),
            changes: vec![LevelChange { side, cents, old, new }],
            top: self.top_of(key),
        });
        1
    }

    /// A taker sweeping `levels` levels of one side (the last one partly): one update per level, all in
    /// this step (one timestamp), each with the top of book after the whole match, as the venue sends a
    /// match. Returns the levels changed (0 when the side is too thin to sweep).
    fn sweep(&mut self, key: &Key, levels: usize, out: &mut Vec<Update>) -> u64 {
        let lot = self.markets[key].lot();
        let side = if self.rng.random_bool(0.5) {
            YesSide::Bid
        } else {
            YesSide::Ask
        };
        let Some(book) = self.books.get_mut(key) else { return 0 };
        let ladder = match side {
            YesSide::Bid => &mut book.bids,
            YesSide::Ask => &mut book.asks,
        };
        if ladder.len() <= levels {
            return 0;
        }
        let prices: Vec<i64> = match side {
            YesSide::Bid => ladder.keys().rev().take(levels).copied().collect(),
            YesSide::Ask => ladder.keys().take(levels).copied().collect(),
        };
        let mut changes = Vec::with_capacity(levels);
        let mut filled = 0i64;
        for (n, p) in prices.iter().enumerate() {
            let old = ladder[p];
            let new = if n + 1 == prices.len() {
                Amount::from_micros(old.micros() / lot.micros() / 2 * lot.micros())
            } else {
                Amount::ZERO
            };
            if new == Amount::ZERO {
                ladder.remove(p);
            } else {
                ladder.insert(*p, new);
            }
            filled += old.micros() - new.micros();
            changes.push(LevelChange {
                side,
                cents: *p,
                old,
                new,
            });
        }
        let last = *prices.last().expect("at least two levels");
        if let Some(m) = self.markets.get_mut(key) {
            m.last_price = Some(Price::from_cents(last));
            m.last_size = Amount::from_micros(filled);
            m.volume = m.volume.saturating_add(Amount::from_micros(filled));
        }
        let top = self.top_of(key);
        let used = changes.len() as u64;
        for c in changes {
            out.push(Update::Book {
                exchange: key.0,
                market_id: key.1.clone(),
                changes: vec![c],
                top,
            });
        }
        used
    }
}
