//! Market lifecycle: phase changes (open, closed, settled) as model time passes, with the updates they
//! emit, and pruning of settled markets, empty events and pairs once their retention has passed.

use std::collections::BTreeSet;

use crossbook_core::{Exchange, Outcome, Timestamp};
use rand::Rng;

use super::{
    Key, Model, PairKind,
    book::YesBook,
    types::{Phase, Top, Update},
};

impl Model {
    pub(super) fn update_phases(&mut self, now: Timestamp, out: &mut Vec<Update>) {
        // Bulk markets change phase from their own schedule (see `scale`).
        let keys: Vec<Key> = self
            .markets
            .iter()
            .filter(|(_, m)| !m.is_bulk())
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            self.advance_phases(&key, now, out);
        }
    }

    /// Moves `key` through every phase change due by `now` (it may open, close and settle in one step).
    pub(super) fn advance_phases(&mut self, key: &Key, now: Timestamp, out: &mut Vec<Update>) {
        while let Some(m) = self.markets.get(key) {
            let next = match m.phase {
                Phase::Upcoming if now >= m.open_time => Phase::Open,
                Phase::Open if now >= m.close_time => Phase::Closed,
                Phase::Closed if now.millis() >= m.close_time.millis() + m.settle_delay_ms => Phase::Settled,
                _ => break,
            };
            self.enter_phase(key, next, out);
        }
    }

    pub(super) fn enter_phase(&mut self, key: &Key, phase: Phase, out: &mut Vec<Update>) {
        let (pair_key, inverted, close_time, settle_delay) = {
            let m = &self.markets[key];
            (m.pair.clone(), m.inverted, m.close_time, m.settle_delay_ms)
        };
        let jitter = self.oracle_jitter(&pair_key, key.0);
        let kind = self.pairs[&pair_key].kind;
        match phase {
            Phase::Upcoming => {}
            Phase::Open => {
                if let PairKind::Window { asset, .. } = kind {
                    let px = self.asset_cents(asset);
                    let pair = self.pairs.get_mut(&pair_key).expect("pair of market");
                    let strike = *pair.strike.get_or_insert(px);
                    self.markets.get_mut(key).expect("market").strike_cents = Some(strike + jitter);
                }
            }
            Phase::Closed => {
                if let Some(book) = self.books.remove(key) {
                    let changes = book.diff(&YesBook::default());
                    if !changes.is_empty() {
                        let m = &self.markets[key];
                        let top = Top {
                            last_price: m.last_price,
                            last_size: m.last_size,
                            volume: m.volume,
                            open_interest: m.open_interest,
                            ..Top::default()
                        };
                        out.push(Update::Book {
                            exchange: key.0,
                            market_id: key.1.clone(),
                            changes,
                            top,
                        });
                    }
                }
                let result = match kind {
                    PairKind::Window { asset, .. } => {
                        let px = self.asset_cents(asset);
                        let pair = self.pairs.get_mut(&pair_key).expect("pair of market");
                        let fin = *pair.final_cents.get_or_insert(px) + jitter;
                        let m = self.markets.get_mut(key).expect("market");
                        m.final_cents = Some(fin);
                        let strike = m.strike_cents.unwrap_or(fin);
                        fin >= strike
                    }
                    PairKind::Game | PairKind::Other => {
                        let fair = self.pairs[&pair_key].fair;
                        let draw = self.rng.random_range(0..100);
                        let pair = self.pairs.get_mut(&pair_key).expect("pair of market");
                        *pair.result.get_or_insert(draw < fair) != inverted
                    }
                };
                self.markets.get_mut(key).expect("market").result =
                    Some(if result { Outcome::Yes } else { Outcome::No });
            }
            Phase::Settled => {
                self.markets.get_mut(key).expect("market").settled_at =
                    Some(Timestamp::from_millis(close_time.millis() + settle_delay));
            }
        }
        self.markets.get_mut(key).expect("market").phase = phase;
        out.push(Update::Phase {
            exchange: key.0,
            market_id: key.1.clone(),
            phase,
        });
    }

    /// Drops settled markets once their pair's retention has passed, then empty events and pairs.
    pub(super) fn prune(&mut self, now: Timestamp) {
        let pairs = &self.pairs;
        let gone: Vec<Key> = self
            .markets
            .iter()
            .filter(|(_, m)| {
                !m.is_bulk()
                    && m.settled_at
                        .is_some_and(|t| now.millis() > t.millis() + pairs.get(&m.pair).map_or(0, |p| p.retain_ms))
            })
            .map(|(k, _)| k.clone())
            .collect();
        if gone.is_empty() {
            return;
        }
        for key in &gone {
            if let Some(m) = self.markets.remove(key) {
                for t in m.tokens.iter().flatten() {
                    self.tokens.remove(t);
                }
            }
            self.books.remove(key);
        }
        let markets = &self.markets;
        self.events
            .retain(|(ex, _), e| e.markets.iter().any(|id| markets.contains_key(&(*ex, id.clone()))));
        let events = &self.events;
        self.slugs
            .retain(|_, id| events.contains_key(&(Exchange::VenueB, id.clone())));
        let live: BTreeSet<&String> = self.markets.values().map(|m| &m.pair).collect();
        self.pairs.retain(|k, _| live.contains(k));
    }
}
