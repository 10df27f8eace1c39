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

use crossbook_core::{Exchange, IntervalCode, Timestamp};

use super::{
    Key, Model, ex_index,
    types::{Phase, SimMarket, Update},
};
use crate::{calendar::window_containing, ids};

mod changes;
mod listings;

use listings::{COINS, Rolling};

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
                self.advance_phases(&key, now, out);
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
}

/// Whether a book is quiet at `now`: a per-period draw over the market id, so a quiet book stays quiet for
/// the whole period and another share is quiet in the next one.
fn quiet(seed: u64, now: Timestamp, r: &SimRates, market_id: &str) -> bool {
    let epoch = now.millis().div_euclid((r.quiet_secs.max(1) * 1000) as i64) as u64;
    ids::key_hash(seed ^ epoch.wrapping_mul(0x9e37_79b9_7f4a_7c15), market_id) % 100 < r.quiet_percent
}

#[cfg(test)]
mod tests;
