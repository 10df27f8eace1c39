//! Trades: random taker fills, the forced whale, injected trades ([`Model::inject_trade`]), and the fill
//! itself against the best level of a YES book, recorded on the venue's tape in that venue's terms.

use crossbook_core::{
    Amount, Exchange, Outcome, Price, TakerSide,
    whale::{draw_pool, utc_day},
};
use rand::Rng;

use super::{
    Key, Model, PREVIEW_WHALE_EVERY_MS, TAPE_LEN, TRADE_P, WHALE_EVERY_MS,
    book::{LevelChange, YesSide},
    ex_index,
    types::{Phase, SimTrade, Update},
};
use crate::ids;

impl Model {
    /// Executes a taker order now against the best level: on venue_a a buy of `outcome` (venue_a takers
    /// only buy, so a `Sell` of YES is recorded as a buy of NO and the reverse); on venue_b `side` on the
    /// token of `outcome` (`Yes` = first outcome). `market_id` is a venue_a ticker or venue_b condition id.
    /// Returns the updates to publish (`None` when the market does not trade or the needed side of its book
    /// is empty).
    pub fn inject_trade(
        &mut self,
        ex: Exchange,
        market_id: &str,
        outcome: Outcome,
        side: TakerSide,
        size: Amount,
    ) -> Option<Vec<Update>> {
        let key = (ex, market_id.to_string());
        if !self.markets.get(&key)?.trading() {
            return None;
        }
        // Buying YES (or selling NO) lifts YES asks; buying NO (or selling YES) hits YES bids.
        let lifts_yes_ask = (outcome == Outcome::Yes) == (side == TakerSide::Buy);
        let token = match outcome {
            Outcome::Yes => 0,
            Outcome::No => 1,
        };
        let mut out = Vec::new();
        self.version += 1;
        self.execute(&key, lifts_yes_ask, size, Some(token), &mut out)?;
        self.count_bulk_changes(&out);
        Some(out)
    }

    pub(super) fn random_trades(&mut self, out: &mut Vec<Update>) {
        let keys: Vec<Key> = self
            .markets
            .iter()
            .filter(|(_, m)| m.trading() && !m.is_bulk())
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            if !self.rng.random_bool(TRADE_P) {
                continue;
            }
            let lifts_ask = self.rng.random_bool(0.5);
            // Pareto(α = 1, x_min = 3 contracts): P(size > s) = 3 / s, truncated at 20,000.
            let u = self.rng.random_range(1..=65_536i64);
            let contracts = (3 * 65_536 / u).clamp(1, 20_000);
            let lot = self.markets[&key].lot();
            let per = Self::lots_per_unit(lot);
            let frac = if per > 1 { self.rng.random_range(0..per) } else { 0 };
            let size = Amount::from_micros((contracts * per + frac) * lot.micros());
            self.execute(&key, lifts_ask, size, None, out);
        }
    }

    pub(super) fn whale_if_due(&mut self, out: &mut Vec<Update>) {
        if self.now.millis() - self.last_whale.millis() < WHALE_EVERY_MS {
            return;
        }
        let first = Exchange::ALL[self.whale_turn % 2];
        self.whale_turn += 1;
        for ex in [
            first,
            if first == Exchange::VenueA {
                Exchange::VenueB
            } else {
                Exchange::VenueA
            },
        ] {
            let has_asks = |k: &Key| self.books.get(k).is_some_and(|b| !b.asks.is_empty());
            let mut candidates: Vec<Key> = self
                .markets
                .iter()
                .filter(|(k, m)| {
                    k.0 == ex
                        && m.phase == Phase::Open
                        && m.interval.is_some()
                        && m.category == crossbook_core::Category::Crypto
                        && has_asks(k)
                })
                .map(|(k, _)| k.clone())
                .collect();
            if candidates.is_empty() {
                candidates = self
                    .markets
                    .iter()
                    .filter(|(k, m)| k.0 == ex && m.trading() && has_asks(k))
                    .map(|(k, _)| k.clone())
                    .collect();
            }
            if candidates.is_empty() {
                continue;
            }
            let key = candidates[self.rng.random_range(0..candidates.len())].clone();
            if self.whale_on(&key, out) {
                return;
            }
        }
    }

    /// A whale of 1,200–4,000 dollars lifting the best YES ask of `key` (token 0 on venue_b); `false` when
    /// the book has no ask or the market does not trade.
    fn whale_on(&mut self, key: &Key, out: &mut Vec<Update>) -> bool {
        let Some((ask, _)) = self.books.get(key).and_then(|b| b.best_ask()) else {
            return false;
        };
        let dollars = self.rng.random_range(1_200..=4_000);
        let contracts = (dollars * 100 + ask - 1) / ask;
        // Notional = ask × contracts ≥ the drawn dollars, above the public feed's 500 and the webhook's 1,000.
        self.execute(key, true, Amount::from_units(contracts), Some(0), out)
            .is_some()
    }

    /// The events the service's public preview most likely unlocks: the first of the day's pool drawn by
    /// the service's own [`draw_pool`] over this model's tradable events. The service draws from the active
    /// events of its store with the most volume, which the model cannot see exactly, and unlocks the first
    /// 3 by default; the pool's order is a per-day hash, so the first few of a draw over (nearly) the same
    /// events are the same events. Taking twice as many covers the events the two sets do not share.
    fn preview_events(&self) -> Vec<(Exchange, String)> {
        const PREVIEW_TARGETS: usize = 6;
        let candidates: Vec<(Exchange, String)> = self
            .events
            .keys()
            .filter(|k| self.whale_market(k).is_some())
            .cloned()
            .collect();
        draw_pool(&utc_day(self.now), &candidates, PREVIEW_TARGETS)
    }

    /// A market of the event `key` that trades and has an ask to lift, the first by id.
    fn whale_market(&self, key: &(Exchange, String)) -> Option<Key> {
        let event = self.events.get(key)?;
        event.markets.iter().map(|id| (key.0, id.clone())).find(|k| {
            self.markets.get(k).is_some_and(|m| m.trading()) && self.books.get(k).is_some_and(|b| !b.asks.is_empty())
        })
    }

    /// Without this, whales land on crypto windows only, and the few events the anonymous public feed
    /// unlocks (a per-day draw over all events) rarely had one: the preview stayed empty for minutes. So
    /// every [`PREVIEW_WHALE_EVERY_MS`] a whale lands on one of [`Self::preview_events`], in turn.
    pub(super) fn preview_whale_if_due(&mut self, out: &mut Vec<Update>) {
        if self.now.millis() - self.last_preview_whale.millis() < PREVIEW_WHALE_EVERY_MS {
            return;
        }
        self.last_preview_whale = self.now;
        let events = self.preview_events();
        if events.is_empty() {
            return;
        }
        let event = &events[self.preview_turn % events.len()];
        self.preview_turn += 1;
        if let Some(key) = self.whale_market(event) {
            self.whale_on(&key, out);
        }
    }

    /// Fills a taker against the best level of one side of the YES book and records the trade. `token`
    /// chooses the venue_b representation (YES token or its mirror); random when `None`.
    pub(super) fn execute(
        &mut self,
        key: &Key,
        lifts_yes_ask: bool,
        size: Amount,
        token: Option<usize>,
        out: &mut Vec<Update>,
    ) -> Option<SimTrade> {
        let book = self.books.get_mut(key)?;
        let (side, (cents, avail)) = if lifts_yes_ask {
            (YesSide::Ask, book.best_ask()?)
        } else {
            (YesSide::Bid, book.best_bid()?)
        };
        let left = avail.micros() - size.micros();
        let ladder = match side {
            YesSide::Bid => &mut book.bids,
            YesSide::Ask => &mut book.asks,
        };
        let new = if left > 0 {
            ladder.insert(cents, Amount::from_micros(left));
            Amount::from_micros(left)
        } else {
            ladder.remove(&cents);
            Amount::ZERO
        };
        let change = LevelChange {
            side,
            cents,
            old: avail,
            new,
        };
        let book_after = book.clone();
        let yes_price = Price::from_cents(cents);
        let ex = key.0;
        let idx = ex_index(ex);
        self.trade_seq[idx] += 1;
        let seq = self.trade_seq[idx];
        let m = self.markets.get_mut(key)?;
        let (trade_id, token_id, outcome, taker_side, price, wallet, pseudonym) = match ex {
            Exchange::VenueA => {
                let (outcome, price) = if lifts_yes_ask {
                    (Outcome::Yes, yes_price)
                } else {
                    (Outcome::No, yes_price.complement())
                };
                (
                    ids::uuid(&mut self.rng),
                    None,
                    outcome,
                    TakerSide::Buy,
                    price,
                    None,
                    None,
                )
            }
            Exchange::VenueB => {
                let t = token.unwrap_or_else(|| self.rng.random_range(0..2));
                let (outcome, taker_side, price) = match (lifts_yes_ask, t) {
                    (true, 0) => (Outcome::Yes, TakerSide::Buy, yes_price),
                    (true, _) => (Outcome::No, TakerSide::Sell, yes_price.complement()),
                    (false, 0) => (Outcome::Yes, TakerSide::Sell, yes_price),
                    (false, _) => (Outcome::No, TakerSide::Buy, yes_price.complement()),
                };
                let token_id = m.tokens.as_ref().map(|ts| ts[t.min(1)].clone());
                (
                    ids::hash32(&mut self.rng),
                    token_id,
                    outcome,
                    taker_side,
                    price,
                    Some(format!("0x{}", ids::hex(&mut self.rng, 40))),
                    Some(pseudonym(&mut self.rng)),
                )
            }
        };
        m.volume = m.volume.saturating_add(size);
        m.open_interest = m.open_interest.saturating_add(Amount::from_micros(size.micros() / 2));
        m.last_price = Some(yes_price);
        m.last_size = size;
        let trade = SimTrade {
            exchange: ex,
            trade_id,
            market_id: m.market_id.clone(),
            event_id: m.event_id.clone(),
            token_id,
            outcome,
            taker_side,
            price,
            size,
            at: self.now,
            seq,
            wallet,
            pseudonym,
        };
        if trade.notional() >= Amount::from_units(1_000) {
            self.last_whale = self.now;
        }
        let tape = &mut self.trades[idx];
        tape.push_front(trade.clone());
        tape.truncate(TAPE_LEN);
        let top = self.top_of(key);
        out.push(Update::Trade {
            trade: Box::new(trade.clone()),
            change,
            book: Box::new(book_after),
            top,
        });
        Some(trade)
    }
}

/// venue_b-style display pseudonym (`Brisk-Ledger`).
fn pseudonym(rng: &mut impl Rng) -> String {
    const A: [&str; 8] = ["Brisk", "Quiet", "Amber", "Lucky", "Silent", "Rapid", "Mellow", "Bold"];
    const B: [&str; 8] = [
        "Ledger", "Orchid", "Falcon", "Harbor", "Comet", "Willow", "Summit", "Otter",
    ];
    format!(
        "{}-{}",
        A[rng.random_range(0..A.len())],
        B[rng.random_range(0..B.len())]
    )
}
