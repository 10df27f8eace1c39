//! The full-scale simulator: a catalog the size of a real venue and book changes at a real venue's rate.
//!
//! At [`SimScale::Full`] the demo catalog is kept and a bulk catalog is added next to it, generated from the
//! seed: rolling up/down window series of four more coins (venue_b pre-lists its 5m, 15m and hourly windows
//! a day ahead, venue_a lists current and next 15m windows and a day of hourly strike ladders), games of
//! four more leagues over the next three days, and long-dated question groups that close months away.
//! Together at least 5,000 venue_a markets and 10,000 venue_b markets (20,000 tokens).
//!
//! Bulk markets are kept apart from the demo dynamics so that a step costs what it emits, not what is
//! listed:
//! - their phase changes and pruning come from a time-ordered schedule, not from a scan of the catalog;
//! - their books change only through the change generator ([`SimRates`]): each step works out how many
//!   level changes are due (the configured average, with bursts) and applies exactly that many to books
//!   drawn at random, skipping books that are quiet for the current period;
//! - on venue_b a share of the changes are matches: one taker sweeping two to four levels, sent as several
//!   `price_change` frames with one timestamp, each carrying the best bid and ask after the whole match.

use std::{
    collections::{BTreeMap, HashMap},
    fmt,
    str::FromStr,
};

use crossbook_core::{Amount, Category, Exchange, IntervalCode, Price, Timestamp};
use rand::Rng;

use super::{
    Key, Model, Pair, PairKind,
    book::{LevelChange, YesBook, YesSide},
    catalog::{TAG_CRYPTO, TAG_GAMES, TAG_POLITICS, TAG_SPORTS, TAG_UPDOWN},
    ex_index,
    types::{Phase, SimEvent, SimMarket, SimSeries, Tag, Update},
};
use crate::{calendar::window_containing, ids};

/// Pair keys of bulk markets start with this.
pub(crate) const BULK: &str = "bulk:";

/// How much the simulated venues list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SimScale {
    /// A few dozen markets per venue: the demo catalog.
    #[default]
    Demo,
    /// A real venue's size: the demo catalog plus at least 5,000 venue_a markets and 20,000 venue_b tokens,
    /// with book changes at the [`SimRates`].
    Full,
}

impl fmt::Display for SimScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SimScale::Demo => "demo",
            SimScale::Full => "full",
        })
    }
}

impl FromStr for SimScale {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "demo" => Ok(SimScale::Demo),
            "full" => Ok(SimScale::Full),
            other => Err(format!("unknown simulator scale {other:?}: expected demo or full")),
        }
    }
}

/// Book-change rates of the full-scale catalog. A change is one price level of one market's book set to a
/// new size (venue_a: one `orderbook_delta`; venue_b: one level of a market, sent as a `price_change` item
/// for each subscribed outcome token).
///
/// Bursts of `burst_secs` at `burst_multiple` times the average come every `burst_every_secs`; the rate
/// between bursts is lowered so that the average over a whole period is the configured average.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimRates {
    /// Average venue_a book changes per second (public figure: about 2,200).
    pub venue_a_per_sec: u64,
    /// Average venue_b book changes per second (public figure: about 24,000).
    pub venue_b_per_sec: u64,
    /// Rate during a burst, as a multiple of the average (1 = no bursts).
    pub burst_multiple: u64,
    pub burst_secs: u64,
    pub burst_every_secs: u64,
    /// Share of books, in percent, that get no change at all during each quiet period.
    pub quiet_percent: u64,
    /// Length of a quiet period; a different share of books is quiet in each.
    pub quiet_secs: u64,
    /// Share of venue_b changes, in percent, that belong to matches sweeping several levels.
    pub match_percent: u64,
}

impl Default for SimRates {
    fn default() -> Self {
        SimRates {
            venue_a_per_sec: 2_200,
            venue_b_per_sec: 24_000,
            burst_multiple: 10,
            burst_secs: 10,
            burst_every_secs: 300,
            quiet_percent: 20,
            quiet_secs: 300,
            match_percent: 10,
        }
    }
}

impl SimRates {
    /// Why these rates cannot hold their average, if they cannot: the bursts alone must not exceed it.
    pub fn validate(&self) -> Result<(), String> {
        if self.burst_multiple == 0 {
            return Err("burst multiple must be at least 1".into());
        }
        if self.burst_multiple > 1 {
            if self.burst_secs == 0 || self.burst_every_secs == 0 {
                return Err("burst length and burst period must be positive".into());
            }
            if self.burst_multiple * self.burst_secs > self.burst_every_secs {
                return Err(format!(
                    "bursts of {} s at {}x every {} s exceed the average: the period must be at least {} s",
                    self.burst_secs,
                    self.burst_multiple,
                    self.burst_every_secs,
                    self.burst_multiple * self.burst_secs
                ));
            }
        }
        if self.quiet_percent > 90 {
            return Err("quiet share must be at most 90 percent".into());
        }
        if self.quiet_secs == 0 {
            return Err("quiet period must be positive".into());
        }
        if self.match_percent > 100 {
            return Err("match share must be at most 100 percent".into());
        }
        Ok(())
    }

    fn per_sec(&self, ex: Exchange) -> u64 {
        match ex {
            Exchange::VenueA => self.venue_a_per_sec,
            Exchange::VenueB => self.venue_b_per_sec,
        }
    }

    fn bursting(&self) -> bool {
        self.burst_multiple > 1 && self.burst_secs > 0
    }
}

/// A rolling window series of the bulk catalog.
#[derive(Debug, Clone)]
struct Rolling {
    exchange: Exchange,
    coin: &'static Coin,
    code: IntervalCode,
    /// Markets per event: 1 for up/down, more for strike ladders.
    ladder: usize,
    /// How far ahead of now windows are listed, in seconds.
    lead_s: i64,
    /// Start of the next window to list (Unix seconds).
    next_start: i64,
}

#[derive(Debug)]
struct Coin {
    symbol: &'static str,
    name: &'static str,
    /// Rough price in dollars, for strike ladders.
    dollars: i64,
}

const COINS: [Coin; 4] = [
    Coin {
        symbol: "SOL",
        name: "Solana",
        dollars: 180,
    },
    Coin {
        symbol: "XRP",
        name: "XRP",
        dollars: 3,
    },
    Coin {
        symbol: "DOGE",
        name: "Dogecoin",
        dollars: 1,
    },
    Coin {
        symbol: "BNB",
        name: "BNB",
        dollars: 900,
    },
];

const LEAGUES: [(&str, &str); 4] = [
    ("BBL", "Basketball"),
    ("HKL", "Hockey"),
    ("FBL", "Football"),
    ("BSL", "Baseball"),
];

/// The bulk catalog's bookkeeping and the change generator's state.
#[derive(Debug, Clone)]
pub(crate) struct Bulk {
    pub(crate) rates: SimRates,
    /// Model time (ms) → bulk markets with a phase change or pruning due then.
    due: BTreeMap<i64, Vec<Key>>,
    /// Bulk markets that had a book when last seen, per venue (dead entries are dropped when drawn).
    live: [Vec<Key>; 2],
    /// Carried fraction of the changes due, per venue, in units of 1 / [`Bulk::denominator`].
    carry: [i128; 2],
    rolling: Vec<Rolling>,
    /// Start of each venue's first burst (ms after the epoch, modulo the burst period).
    burst_phase_ms: [i64; 2],
    /// Book changes emitted so far, per venue.
    pub(crate) emitted: [u64; 2],
    /// Level changes published so far per bulk market, the generator's and the rest (kept after a market
    /// is pruned), so that a capture can be checked book by book.
    pub(crate) emitted_by_market: HashMap<Key, u64>,
    /// Set once the initial catalog is listed: later listings get their books as updates.
    running: bool,
}

impl Bulk {
    /// `add` in [`Bulk::due_changes`] is 1000 × changes·ms/s (rates are per second, times in ms); this
    /// turns it into changes, including the base rate's own denominator.
    fn denominator(&self) -> i128 {
        let r = &self.rates;
        if r.bursting() {
            1000 * 1000 * (r.burst_every_secs - r.burst_secs) as i128
        } else {
            1000 * 1000
        }
    }

    /// Changes due for `ex` over model time `(t0, t1]` (ms): the integral of the rate, with the fraction
    /// carried to the next step so that no change is lost to rounding.
    fn due_changes(&mut self, ex: Exchange, t0: i64, t1: i64) -> u64 {
        let r = self.rates;
        let avg = r.per_sec(ex) as i128;
        let i = ex_index(ex);
        let add = if r.bursting() {
            let every = (r.burst_every_secs * 1000) as i64;
            let len = (r.burst_secs * 1000) as i64;
            let burst_ms = overlap(t0, t1, self.burst_phase_ms[i], every, len) as i128;
            let quiet_ms = (t1 - t0) as i128 - burst_ms;
            let (m, e, l) = (r.burst_multiple as i128, every as i128 / 1000, len as i128 / 1000);
            // base rate = avg · (every − m·len) / (every − len); burst rate = m · avg.
            1000 * (avg * (e - m * l) * quiet_ms + avg * m * (e - l) * burst_ms)
        } else {
            1000 * avg * (t1 - t0) as i128
        };
        self.carry[i] += add;
        let d = self.denominator();
        let n = self.carry[i] / d;
        self.carry[i] %= d;
        n as u64
    }

    #[cfg(test)]
    /// Whether model time `t_ms` is inside one of `ex`'s bursts.
    pub(crate) fn in_burst(&self, ex: Exchange, t_ms: i64) -> bool {
        let r = &self.rates;
        r.bursting()
            && overlap(
                t_ms,
                t_ms + 1,
                self.burst_phase_ms[ex_index(ex)],
                (r.burst_every_secs * 1000) as i64,
                (r.burst_secs * 1000) as i64,
            ) == 1
    }
}

/// Milliseconds of `(t0, t1]` that fall in windows `[phase + k·every, phase + k·every + len)`.
fn overlap(t0: i64, t1: i64, phase: i64, every: i64, len: i64) -> i64 {
    if t1 <= t0 || every <= 0 {
        return 0;
    }
    let first = (t0 - phase).div_euclid(every);
    let last = (t1 - phase).div_euclid(every);
    let mut total = 0;
    for k in first..=last {
        let s = phase + k * every;
        let e = s + len;
        total += (t1.min(e) - t0.max(s)).max(0);
    }
    total
}

/// What one bulk market is.
struct Listing {
    exchange: Exchange,
    series: SimSeries,
    /// venue_a event ticker or venue_b event slug.
    event_name: String,
    event_title: String,
    sub_title: String,
    tags: Vec<Tag>,
    category: Category,
    interval: Option<IntervalCode>,
    created: i64,
    open: i64,
    close: i64,
    /// Per market: venue_a ticker (ignored on venue_b), question, yes label, no label.
    markets: Vec<(String, String, String, String)>,
    tick: Price,
    retain_ms: i64,
    mutually_exclusive: bool,
}

impl Model {
    /// Adds the bulk catalog of the full scale and starts its change generator.
    pub(super) fn init_bulk(&mut self, rates: SimRates) {
        let now_s = self.now.secs();
        let burst_phase_ms = [
            (ids::key_hash(self.seed, "burst:a") % (rates.burst_every_secs.max(1) * 1000)) as i64,
            (ids::key_hash(self.seed, "burst:b") % (rates.burst_every_secs.max(1) * 1000)) as i64,
        ];
        let mut bulk = Bulk {
            rates,
            due: BTreeMap::new(),
            live: [Vec::new(), Vec::new()],
            carry: [0, 0],
            rolling: Vec::new(),
            burst_phase_ms,
            emitted: [0, 0],
            emitted_by_market: HashMap::new(),
            running: false,
        };
        for coin in &COINS {
            for (ex, code, ladder, lead_s) in [
                (Exchange::VenueB, IntervalCode::M5, 1, 86_400),
                (Exchange::VenueB, IntervalCode::M15, 1, 86_400),
                (Exchange::VenueB, IntervalCode::H1, 1, 86_400),
                (Exchange::VenueA, IntervalCode::M15, 1, 900),
                (Exchange::VenueA, IntervalCode::H1, 15, 86_400),
            ] {
                bulk.rolling.push(Rolling {
                    exchange: ex,
                    coin,
                    code,
                    ladder,
                    lead_s,
                    next_start: window_containing(code, now_s).0,
                });
            }
        }
        let mut ignored = Vec::new();
        self.list_rolling(&mut bulk, now_s, &mut ignored);
        self.list_games(&mut bulk, now_s);
        self.list_long_dated(&mut bulk, now_s);
        // The catalog starts with its books filled, like the demo one.
        for key in bulk.live.iter().flatten().cloned().collect::<Vec<_>>() {
            let book = self.fresh_book(&key);
            self.books.insert(key, book);
        }
        bulk.running = true;
        self.bulk = Some(Box::new(bulk));
    }

    /// One step of the bulk catalog: due phase changes, newly listed windows, then the book changes due
    /// over `(t0, now]`.
    pub(super) fn step_bulk(&mut self, t0: i64, out: &mut Vec<Update>) {
        let Some(mut bulk) = self.bulk.take() else { return };
        let now = self.now;
        self.list_rolling(&mut bulk, now.secs(), out);
        self.run_schedule(&mut bulk, now, out);
        // A clock that jumped (a paused process) does not unload a backlog of changes at once.
        let from = t0.max(now.millis() - 5_000);
        for ex in Exchange::ALL {
            let n = bulk.due_changes(ex, from, now.millis());
            let done = self.churn(&mut bulk, ex, n, out);
            bulk.emitted[ex_index(ex)] += done;
        }
        self.bulk = Some(bulk);
    }

    #[cfg(test)]
    /// Whether `market_id`'s book is in a quiet period now (no changes while it lasts).
    pub(crate) fn is_quiet(&self, market_id: &str) -> bool {
        self.bulk
            .as_ref()
            .is_some_and(|b| quiet(self.seed, self.now, &b.rates, market_id))
    }

    #[cfg(test)]
    pub(crate) fn bulk(&self) -> Option<&Bulk> {
        self.bulk.as_deref()
    }

    fn schedule(bulk: &mut Bulk, at_ms: i64, key: Key) {
        bulk.due.entry(at_ms).or_default().push(key);
    }

    /// When `m` next needs attention: its next phase change, or its pruning once settled.
    fn next_due(m: &SimMarket, retain_ms: i64) -> i64 {
        match m.phase {
            Phase::Upcoming => m.open_time.millis(),
            Phase::Open => m.close_time.millis(),
            Phase::Closed => m.close_time.millis() + m.settle_delay_ms,
            Phase::Settled => m.settled_at.map_or(m.close_time.millis(), Timestamp::millis) + retain_ms,
        }
    }

    fn run_schedule(&mut self, bulk: &mut Bulk, now: Timestamp, out: &mut Vec<Update>) {
        while let Some(entry) = bulk.due.first_entry() {
            if *entry.key() > now.millis() {
                break;
            }
            let keys = entry.remove();
            for key in keys {
                let Some(m) = self.markets.get(&key) else { continue };
                let retain = self.pairs.get(&m.pair).map_or(0, |p| p.retain_ms);
                if m.phase == Phase::Settled {
                    if now.millis() >= Self::next_due(m, retain) {
                        self.prune_bulk(&key);
                    } else {
                        Self::schedule(bulk, Self::next_due(m, retain), key);
                    }
                    continue;
                }
                let was_trading = m.trading();
                while let Some(m) = self.markets.get(&key) {
                    let next = match m.phase {
                        Phase::Upcoming if now >= m.open_time => Phase::Open,
                        Phase::Open if now >= m.close_time => Phase::Closed,
                        Phase::Closed if now.millis() >= m.close_time.millis() + m.settle_delay_ms => Phase::Settled,
                        _ => break,
                    };
                    self.enter_phase(&key, next, out);
                }
                let m = &self.markets[&key];
                if m.trading() && !was_trading {
                    self.open_book(bulk, &key, out);
                }
                let at = Self::next_due(&self.markets[&key], retain);
                Self::schedule(bulk, at, key);
            }
        }
    }

    fn prune_bulk(&mut self, key: &Key) {
        let Some(m) = self.markets.remove(key) else { return };
        for t in m.tokens.iter().flatten() {
            self.tokens.remove(t);
        }
        self.books.remove(key);
        self.pairs.remove(&m.pair);
        let ek = (key.0, m.event_id.clone());
        let empty = self.events.get_mut(&ek).is_some_and(|e| {
            e.markets.retain(|id| id != &m.market_id);
            e.markets.is_empty()
        });
        if empty && let Some(slug) = self.events.remove(&ek).and_then(|e| e.slug) {
            self.slugs.remove(&slug);
        }
    }

    /// A full book around the market's fair value, as when it starts trading.
    fn fresh_book(&mut self, key: &Key) -> YesBook {
        let m = &self.markets[key];
        let fair = self.pairs.get(&m.pair).map_or(50, |p| p.fair);
        let (spread, depth, lot) = (m.spread, m.depth, m.lot());
        let bid = (fair - spread / 2).clamp(1, 98);
        let ask = (bid + spread).min(99);
        self.requote(&YesBook::default(), bid, ask, depth, lot)
    }

    /// Gives a market that starts trading its book (sent as one change of every level) and makes it
    /// eligible for the change generator.
    fn open_book(&mut self, bulk: &mut Bulk, key: &Key, out: &mut Vec<Update>) {
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
    fn churn(&mut self, bulk: &mut Bulk, ex: Exchange, n: u64, out: &mut Vec<Update>) -> u64 {
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

    // ------------------------------------------------------------------ the bulk catalog

    /// Lists every rolling window that starts within its series' lead time.
    fn list_rolling(&mut self, bulk: &mut Bulk, now_s: i64, out: &mut Vec<Update>) {
        for i in 0..bulk.rolling.len() {
            loop {
                let r = bulk.rolling[i].clone();
                if r.next_start > now_s + r.lead_s {
                    break;
                }
                let (s, e) = window_containing(r.code, r.next_start);
                bulk.rolling[i].next_start = e;
                let listing = window_listing(&r, s, e);
                self.add_listing(bulk, listing, now_s, out);
            }
        }
    }

    fn list_games(&mut self, bulk: &mut Bulk, now_s: i64) {
        let mut r = ids::key_rng(self.seed, "bulk:games");
        let mut ignored = Vec::new();
        for (ex, count, per_game) in [(Exchange::VenueA, 300, 2), (Exchange::VenueB, 520, 1)] {
            for g in 0..count {
                let (league, sport) = LEAGUES[g % LEAGUES.len()];
                let away = r.random_range(1..=40);
                let home = (away + r.random_range(1..40)) % 40 + 1;
                let start = now_s - now_s % 900 + 900 * r.random_range(1..=288);
                let day = crate::calendar::yymondd(super::catalog::utc_date(start));
                let (a, h) = (format!("T{away:02}"), format!("T{home:02}"));
                let title = format!("{sport} Team {away} at Team {home}");
                let (event_name, markets) = match ex {
                    Exchange::VenueA => {
                        let event = format!("KX{league}GAME-{day}{a}{h}-{g}");
                        let markets = [&a, &h]
                            .into_iter()
                            .take(per_game)
                            .map(|t| {
                                (
                                    format!("{event}-{t}"),
                                    format!("{title} Winner?"),
                                    t.clone(),
                                    String::new(),
                                )
                            })
                            .collect();
                        (event, markets)
                    }
                    Exchange::VenueB => (
                        format!(
                            "{}-{}-{}-{day}-{g}",
                            league.to_lowercase(),
                            a.to_lowercase(),
                            h.to_lowercase()
                        ),
                        vec![(
                            String::new(),
                            format!("Team {away} vs. Team {home}"),
                            format!("Team {away}"),
                            format!("Team {home}"),
                        )],
                    ),
                };
                let series_id = match ex {
                    Exchange::VenueA => format!("KX{league}GAME"),
                    Exchange::VenueB => league.to_lowercase(),
                };
                let listing = Listing {
                    exchange: ex,
                    series: series(ex, &series_id, &format!("{sport} League"), "daily", "Sports", None),
                    event_name,
                    event_title: title.clone(),
                    sub_title: title,
                    tags: vec![TAG_SPORTS, TAG_GAMES],
                    category: Category::Sports,
                    interval: None,
                    created: now_s - 86_400,
                    open: now_s - 3_600,
                    close: start + 3 * 3_600,
                    markets,
                    tick: Price::from_cents(1),
                    retain_ms: 30 * 60_000,
                    mutually_exclusive: ex == Exchange::VenueA,
                };
                self.add_listing(bulk, listing, now_s, &mut ignored);
            }
        }
    }

    fn list_long_dated(&mut self, bulk: &mut Bulk, now_s: i64) {
        let mut r = ids::key_rng(self.seed, "bulk:long");
        let mut ignored = Vec::new();
        for (ex, events) in [(Exchange::VenueA, 340), (Exchange::VenueB, 820)] {
            for n in 0..events {
                let days = r.random_range(30..=400);
                let close = now_s - now_s % 86_400 + days * 86_400;
                let topic = ["Rate", "Index", "Election", "Award", "Launch"][n % 5];
                let title = format!("{topic} question {n}: which outcome by day {days}?");
                let (series_id, event_name, category) = match ex {
                    Exchange::VenueA => (
                        format!("KXLONG{topic}").to_uppercase(),
                        format!("KXLONG{}-{n}", topic.to_uppercase()),
                        "Economics",
                    ),
                    Exchange::VenueB => (
                        format!("long-{}", topic.to_lowercase()),
                        format!("{}-question-{n}-day-{days}", topic.to_lowercase()),
                        "Politics",
                    ),
                };
                let markets = (0..10)
                    .map(|k| {
                        (
                            format!("{event_name}-O{k}"),
                            format!("Will outcome {k} of {topic} question {n} happen by day {days}?"),
                            if ex == Exchange::VenueA {
                                format!("Outcome {k}")
                            } else {
                                "Yes".into()
                            },
                            if ex == Exchange::VenueA {
                                String::new()
                            } else {
                                "No".into()
                            },
                        )
                    })
                    .collect();
                let listing = Listing {
                    exchange: ex,
                    series: series(ex, &series_id, &format!("{topic} questions"), "custom", category, None),
                    event_name,
                    event_title: title.clone(),
                    sub_title: format!("By day {days}"),
                    tags: vec![TAG_POLITICS],
                    category: Category::Other,
                    interval: None,
                    created: now_s - 30 * 86_400,
                    open: now_s - 30 * 86_400,
                    close,
                    markets,
                    tick: Price::from_cents(1),
                    retain_ms: 24 * 3_600_000,
                    mutually_exclusive: true,
                };
                self.add_listing(bulk, listing, now_s, &mut ignored);
            }
        }
    }

    /// Lists one bulk event with its markets and schedules their lifecycle. Markets that trade at once get
    /// a book at the next step (or at start, see [`Model::init_bulk`]).
    fn add_listing(&mut self, bulk: &mut Bulk, l: Listing, now_s: i64, out: &mut Vec<Update>) {
        if l.close <= now_s {
            return;
        }
        let ex = l.exchange;
        let mut r = ids::key_rng(self.seed, &format!("{BULK}{ex}:{}", l.event_name));
        self.ensure_series(l.series.clone());
        let (event_id, slug) = match ex {
            Exchange::VenueA => (l.event_name.clone(), None),
            Exchange::VenueB => {
                let id = self.fresh_gamma_id(&mut r, 7);
                self.slugs.insert(l.event_name.clone(), id.clone());
                (id, Some(l.event_name.clone()))
            }
        };
        let mut market_ids = Vec::new();
        for (k, (ticker, question, yes, no)) in l.markets.iter().enumerate() {
            let (market_id, gamma_id, mslug, tokens, wire_uuid) = match ex {
                Exchange::VenueA => (ticker.clone(), None, None, None, ids::uuid(&mut r)),
                Exchange::VenueB => (
                    ids::hash32(&mut r),
                    Some(self.fresh_gamma_id(&mut r, 8)),
                    Some(if l.markets.len() == 1 {
                        l.event_name.clone()
                    } else {
                        format!("{}-{k}", l.event_name)
                    }),
                    Some([ids::token_id(&mut r), ids::token_id(&mut r)]),
                    ids::hash32(&mut r),
                ),
            };
            let pair_key = format!("{BULK}{ex}:{market_id}");
            self.pairs.insert(
                pair_key.clone(),
                Pair {
                    kind: PairKind::Other,
                    fair: r.random_range(8..=92),
                    offsets: [0, 0],
                    start: Timestamp::from_secs(l.open),
                    end: Timestamp::from_secs(l.close),
                    strike: None,
                    final_cents: None,
                    result: None,
                    retain_ms: l.retain_ms,
                },
            );
            let m = SimMarket {
                exchange: ex,
                market_id: market_id.clone(),
                event_id: event_id.clone(),
                series_id: l.series.series_id.clone(),
                gamma_id,
                slug: mslug,
                wire_uuid,
                question: question.clone(),
                yes_label: yes.clone(),
                no_label: no.clone(),
                description: format!("This market resolves to \"{yes}\" if the answer to \"{question}\" is yes."),
                category: l.category,
                interval: l.interval,
                created: Timestamp::from_secs(l.created),
                open_time: Timestamp::from_secs(l.open),
                close_time: Timestamp::from_secs(l.close),
                settle_delay_ms: 60_000,
                phase: Phase::Upcoming,
                strike_cents: None,
                final_cents: None,
                result: None,
                settled_at: None,
                tokens,
                tick: l.tick,
                volume: Default::default(),
                open_interest: Default::default(),
                last_price: None,
                last_size: Default::default(),
                pair: pair_key,
                inverted: false,
                spread: r.random_range(1..=3),
                depth: r.random_range(4..=7),
            };
            let key = (ex, market_id.clone());
            market_ids.push(market_id);
            self.add_market(m);
            out.push(Update::Listed {
                exchange: ex,
                market_id: key.1.clone(),
            });
            let now = Timestamp::from_secs(now_s);
            if now >= self.markets[&key].open_time {
                self.markets.get_mut(&key).expect("listed").phase = Phase::Open;
            }
            if self.markets[&key].trading() {
                if bulk.running {
                    // Listed while running: the book arrives as an update.
                    self.open_book(bulk, &key, out);
                } else {
                    bulk.live[ex_index(ex)].push(key.clone());
                }
            }
            let retain = l.retain_ms;
            Self::schedule(bulk, Self::next_due(&self.markets[&key], retain), key);
        }
        self.events.insert(
            (ex, event_id.clone()),
            SimEvent {
                exchange: ex,
                event_id,
                slug,
                series_id: l.series.series_id.clone(),
                title: l.event_title,
                sub_title: l.sub_title,
                description: String::new(),
                category: l.series.category.clone(),
                tags: l.tags,
                interval: l.interval,
                start: Timestamp::from_secs(l.open),
                end: Timestamp::from_secs(l.close),
                created: Timestamp::from_secs(l.created),
                markets: market_ids,
                mutually_exclusive: l.mutually_exclusive,
            },
        );
    }
}

fn series(
    ex: Exchange,
    id: &str,
    title: &str,
    frequency: &str,
    category: &str,
    interval: Option<IntervalCode>,
) -> SimSeries {
    SimSeries {
        exchange: ex,
        series_id: id.into(),
        gamma_id: (ex == Exchange::VenueB).then(|| (10_500 + ids::key_hash(0, id) % 400).to_string()),
        title: title.into(),
        frequency: frequency.into(),
        category: category.into(),
        interval,
    }
}

fn window_listing(r: &Rolling, s: i64, e: i64) -> Listing {
    let sym = r.coin.symbol;
    let code = r.code;
    let (series_id, event_name) = match r.exchange {
        Exchange::VenueA => {
            let kind = if r.ladder > 1 { "D" } else { "15M" };
            let series = format!("KX{sym}{kind}");
            (series.clone(), format!("{series}-{e}"))
        }
        Exchange::VenueB => (
            format!("{}-up-or-down-{}", sym.to_lowercase(), super::catalog::recurrence(code)),
            format!("{}-updown-{code}-{s}", sym.to_lowercase()),
        ),
    };
    let title = if r.ladder > 1 {
        format!("{} price at {} UTC", r.coin.name, e)
    } else {
        format!("{} Up or Down {code} from {s}", r.coin.name)
    };
    let markets = if r.ladder > 1 {
        let step = (r.coin.dollars * 100 / 50).max(1);
        (0..r.ladder as i64)
            .map(|k| {
                let strike = r.coin.dollars * 100 + (k - r.ladder as i64 / 2) * step;
                (
                    format!("{event_name}-T{strike}"),
                    format!(
                        "{} above {}.{:02} at the close?",
                        r.coin.name,
                        strike / 100,
                        strike % 100
                    ),
                    format!("Above {}.{:02}", strike / 100, strike % 100),
                    String::new(),
                )
            })
            .collect()
    } else {
        vec![(format!("{event_name}-00"), title.clone(), "Up".into(), "Down".into())]
    };
    Listing {
        exchange: r.exchange,
        series: series(
            r.exchange,
            &series_id,
            &format!("{sym} Up or Down {code}"),
            super::catalog::recurrence(code),
            "Crypto",
            Some(code),
        ),
        event_name,
        event_title: title.clone(),
        sub_title: title,
        tags: vec![TAG_CRYPTO, TAG_UPDOWN],
        category: Category::Crypto,
        interval: Some(code),
        created: s - r.lead_s,
        open: s,
        close: e,
        markets,
        tick: Price::from_cents(1),
        retain_ms: 10 * 60_000,
        mutually_exclusive: r.ladder > 1,
    }
}

/// Whether a book is quiet at `now`: a per-period draw over the market id, so a quiet book stays quiet for
/// the whole period and another share is quiet in the next one.
fn quiet(seed: u64, now: Timestamp, r: &SimRates, market_id: &str) -> bool {
    let epoch = now.millis().div_euclid((r.quiet_secs.max(1) * 1000) as i64) as u64;
    ids::key_hash(seed ^ epoch.wrapping_mul(0x9e37_79b9_7f4a_7c15), market_id) % 100 < r.quiet_percent
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::model::types::Top;

    /// 2026-05-12T11:07:31.412Z.
    const T0: i64 = 1_778_584_051_412;

    fn full(rates: SimRates) -> Model {
        Model::with_scale(7, Timestamp::from_millis(T0), SimScale::Full, rates)
    }

    /// Rates small enough to step a debug build through minutes quickly, with a burst inside the run.
    fn small_rates() -> SimRates {
        SimRates {
            venue_a_per_sec: 200,
            venue_b_per_sec: 1_000,
            burst_multiple: 10,
            burst_secs: 5,
            burst_every_secs: 60,
            ..SimRates::default()
        }
    }

    /// The generator's changes in `updates`: bulk-market book updates of one level (opening and closing a
    /// book changes every level at once).
    fn generated<'a>(m: &'a Model, updates: &'a [Update], ex: Exchange) -> impl Iterator<Item = &'a Update> {
        updates.iter().filter(move |u| match u {
            Update::Book {
                exchange,
                market_id,
                changes,
                ..
            } => *exchange == ex && changes.len() == 1 && m.market(ex, market_id).is_some_and(SimMarket::is_bulk),
            _ => false,
        })
    }

    #[test]
    fn full_scale_lists_a_venue_sized_catalog_deterministically() {
        let m = full(SimRates::default());
        let a = m.markets(Exchange::VenueA).count();
        let tokens = m.markets(Exchange::VenueB).filter_map(|m| m.tokens.as_ref()).count() * 2;
        assert!(a >= 5_000, "venue_a markets: {a}");
        assert!(tokens >= 20_000, "venue_b tokens: {tokens}");
        let b: Vec<&SimMarket> = m.markets(Exchange::VenueB).filter(|m| m.is_bulk()).collect();
        for code in [IntervalCode::M5, IntervalCode::M15, IntervalCode::H1] {
            let n = b.iter().filter(|m| m.interval == Some(code)).count();
            // A day of windows pre-listed for each of four coins.
            assert!(n >= 4 * (86_400 / code.seconds() as usize), "{code}: {n} windows");
        }
        assert!(b.iter().filter(|m| m.category == Category::Sports).count() >= 500);
        let far = T0 + 30 * 86_400_000;
        assert!(b.iter().filter(|m| m.close_time.millis() >= far).count() >= 8_000);
        assert!(
            b.iter().filter(|m| m.protocol_v2()).count() >= 1_000,
            "a share of V2 markets"
        );
        // venue_b's BTC windows quote in 0.001 at this scale; the demo scale keeps 0.01 inside the range.
        let btc: Vec<&SimMarket> = m
            .markets(Exchange::VenueB)
            .filter(|m| m.series_id.starts_with("btc-up-or-down") && m.trading())
            .collect();
        assert!(!btc.is_empty() && btc.iter().all(|m| m.tick == Price::from_micros(1_000)));
        // Same seed, same catalog.
        let again = full(SimRates::default());
        let ids = |m: &Model| {
            m.markets(Exchange::VenueB)
                .map(|m| m.market_id.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&m), ids(&again));
        // Every bulk book that trades is filled and uncrossed.
        for mk in b.iter().filter(|m| m.trading()) {
            let book = m.yes_book(Exchange::VenueB, &mk.market_id).expect("book");
            assert!(book.best_bid().unwrap().0 < book.best_ask().unwrap().0);
        }
    }

    #[test]
    fn demo_scale_is_the_demo_model() {
        let now = Timestamp::from_millis(T0);
        let mut a = Model::new(7, now);
        let mut b = Model::with_scale(7, now, SimScale::Demo, SimRates::default());
        assert_eq!(b.scale(), SimScale::Demo);
        for i in 1..=50 {
            let t = Timestamp::from_millis(T0 + i * 200);
            assert_eq!(a.step(t), b.step(t));
        }
        assert_eq!(b.generated_changes(Exchange::VenueB), 0);
    }

    #[test]
    fn change_rates_hold_their_average_and_burst_to_the_multiple() {
        let rates = small_rates();
        let mut m = full(rates);
        let secs = 120;
        let mut per_sec: [BTreeMap<i64, u64>; 2] = [BTreeMap::new(), BTreeMap::new()];
        let mut per_market: BTreeMap<(Exchange, String), u64> = BTreeMap::new();
        for i in 1..=secs * 5 {
            let t = T0 + i * 200;
            let out = m.step(Timestamp::from_millis(t));
            for ex in Exchange::ALL {
                let n = generated(&m, &out, ex).count() as u64;
                *per_sec[ex_index(ex)].entry((t - 1) / 1000).or_default() += n;
                // Every level change of a bulk book counts: the generator's, a book opening, trades.
                for u in &out {
                    let (id, n) = match u {
                        Update::Book {
                            exchange,
                            market_id,
                            changes,
                            ..
                        } if *exchange == ex => (market_id, changes.len() as u64),
                        Update::Trade { trade, .. } if trade.exchange == ex => (&trade.market_id, 1),
                        _ => continue,
                    };
                    if m.market(ex, id).is_some_and(SimMarket::is_bulk) {
                        *per_market.entry((ex, id.clone())).or_default() += n;
                    }
                }
            }
        }
        for ((ex, id), n) in &per_market {
            assert_eq!(m.generated_changes_of(*ex, id), *n, "{ex} {id}: the per-book counter");
        }
        for ex in Exchange::ALL {
            let avg = rates.per_sec(ex);
            let total: u64 = per_sec[ex_index(ex)].values().sum();
            let want = avg * secs as u64;
            assert!(
                total.abs_diff(want) * 100 <= want,
                "{ex}: {total} changes in {secs} s, want {want} ± 1 %"
            );
            assert_eq!(
                m.generated_changes(ex),
                total,
                "{ex}: the counter matches what was emitted"
            );
            let bulk = m.bulk().unwrap();
            let (mut burst, mut calm) = (Vec::new(), Vec::new());
            let buckets = &per_sec[ex_index(ex)];
            // The first and last seconds are partly outside the run.
            for (s, n) in buckets.iter().skip(1).take(buckets.len() - 2) {
                let whole = (0..1000).step_by(100).all(|ms| bulk.in_burst(ex, s * 1000 + ms));
                let none = (0..1000).step_by(100).all(|ms| !bulk.in_burst(ex, s * 1000 + ms));
                if whole {
                    burst.push(*n);
                } else if none {
                    calm.push(*n);
                }
            }
            assert!(
                burst.len() >= 6,
                "{ex}: two periods hold at least 6 whole burst seconds"
            );
            for n in &burst {
                assert!(
                    n.abs_diff(avg * 10) * 50 <= avg * 10,
                    "{ex}: a burst second has {n}, want {}",
                    avg * 10
                );
            }
            let base = avg * (60 - 50) / (60 - 5);
            for n in &calm {
                assert!(
                    n.abs_diff(base) <= base / 20 + 2,
                    "{ex}: a calm second has {n}, want {base}"
                );
            }
        }
    }

    #[test]
    fn matches_are_several_level_updates_with_the_top_after_the_whole_match() {
        let rates = SimRates {
            match_percent: 100,
            ..small_rates()
        };
        let mut m = full(rates);
        let out = m.step(Timestamp::from_millis(T0 + 200));
        let changed: Vec<&Update> = generated(&m, &out, Exchange::VenueB).collect();
        assert!(!changed.is_empty());
        // Group consecutive updates of one market: each group is one match of 2–4 levels.
        let mut groups: Vec<Vec<&Update>> = Vec::new();
        for u in changed {
            let Update::Book { market_id, .. } = u else {
                unreachable!()
            };
            match groups.last_mut() {
                Some(g) if matches!(g[0], Update::Book { market_id: id, .. } if id == market_id) => g.push(u),
                _ => groups.push(vec![u]),
            }
        }
        let multi: Vec<&Vec<&Update>> = groups.iter().filter(|g| g.len() >= 2).collect();
        assert!(
            multi.len() * 2 >= groups.len(),
            "most changes belong to multi-level matches"
        );
        for g in multi {
            let tops: Vec<Top> = g
                .iter()
                .map(|u| match u {
                    Update::Book { top, .. } => *top,
                    _ => unreachable!(),
                })
                .collect();
            assert!(tops.windows(2).all(|w| w[0] == w[1]), "one top for the whole match");
            let sides: Vec<YesSide> = g
                .iter()
                .map(|u| match u {
                    Update::Book { changes, .. } => changes[0].side,
                    _ => unreachable!(),
                })
                .collect();
            assert!(sides.windows(2).all(|w| w[0] == w[1]), "a sweep takes one side");
            if let (Some((bid, _)), Some((ask, _))) = (tops[0].bid, tops[0].ask) {
                assert!(bid < ask, "the top after a match is not crossed");
            }
        }
    }

    #[test]
    fn quiet_books_get_no_changes_for_their_period() {
        let mut m = full(small_rates());
        let quiet: Vec<String> = m
            .markets(Exchange::VenueB)
            .filter(|mk| mk.is_bulk() && mk.trading() && m.is_quiet(&mk.market_id))
            .map(|mk| mk.market_id.clone())
            .collect();
        let share = quiet.len() * 100 / m.markets(Exchange::VenueB).filter(|mk| mk.is_bulk()).count();
        assert!((10..=30).contains(&share), "about 20 % of books are quiet: {share} %");
        // Stay inside the current quiet period (300 s periods; T0 is 251.412 s into one).
        let mut touched = 0;
        for i in 1..=200 {
            let out = m.step(Timestamp::from_millis(T0 + i * 200));
            touched += generated(&m, &out, Exchange::VenueB)
                .filter(|u| matches!(u, Update::Book { market_id, .. } if quiet.contains(market_id)))
                .count();
        }
        assert_eq!(touched, 0, "quiet books stayed quiet");
        assert!(m.generated_changes(Exchange::VenueB) > 0);
    }

    #[test]
    fn windows_roll_with_new_listings_and_settle_on_schedule() {
        let mut m = full(small_rates());
        let before = m.markets(Exchange::VenueB).filter(|mk| mk.is_bulk()).count();
        let mut listed = 0;
        let mut settled = 0;
        // 6 minutes: at least one 5-minute window per coin opens, closes and settles.
        for i in 1..=6 * 60 {
            let out = m.step(Timestamp::from_millis(T0 + i * 1000));
            listed += out.iter().filter(|u| matches!(u, Update::Listed { .. })).count();
            settled += out
                .iter()
                .filter(|u| {
                    matches!(
                        u,
                        Update::Phase {
                            phase: Phase::Settled,
                            exchange: Exchange::VenueB,
                            ..
                        }
                    )
                })
                .count();
        }
        assert!(listed >= 4, "new windows were listed: {listed}");
        assert!(settled >= 4, "windows settled: {settled}");
        let after = m.markets(Exchange::VenueB).filter(|mk| mk.is_bulk()).count();
        assert!(
            after.abs_diff(before) < 50,
            "the catalog keeps its size as windows roll"
        );
    }

    #[test]
    fn rates_that_cannot_hold_their_average_are_refused() {
        let r = SimRates {
            burst_multiple: 10,
            burst_secs: 10,
            burst_every_secs: 60,
            ..SimRates::default()
        };
        assert!(r.validate().unwrap_err().contains("at least 100 s"));
        assert!(SimRates::default().validate().is_ok());
        assert_eq!("full".parse::<SimScale>(), Ok(SimScale::Full));
        assert!("huge".parse::<SimScale>().is_err());
    }
}
