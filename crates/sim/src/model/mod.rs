//! The seeded market model: what the simulated venues list, their books, and their trades.
//!
//! The model is a plain value with no I/O and no clock of its own: [`Model::step`] takes `now` explicitly,
//! so tests drive hours of model time in microseconds and two models with the same seed stepped at the same
//! instants are identical. The servers call it from a tick task with the wall clock.
//!
//! Dynamics, per step (the servers step every 200 ms):
//! - BTC and ETH reference prices random-walk; each up/down window's fair value follows the chance that the
//!   price ends at or above the window's strike (a crude normal approximation in integer arithmetic).
//! - Games and one-venue questions random-walk around their opening fair value.
//! - Each venue quotes every trading market around the shared fair value plus a small per-venue offset
//!   (±1 cent), with a 1–3 cent spread and 4–8 levels a side; sizes drift. Every change is emitted as level
//!   changes, which the servers turn into venue_a deltas and venue_b `price_change` frames.
//! - Cross episodes: every 1–2.5 minutes (the first 8 s after start, for 45 s) one BTC window pair is pushed
//!   4 cents from fair value on each venue, in opposite directions, for 20–35 s, so buying YES on the cheap
//!   venue and NO on the other costs 94 cents: 6 cents gross, more than 1 cent net after both venues' fees
//!   at any price (at most 2 + 1.75 cents).
//! - Trades arrive at random with Pareto(α = 1) sizes; if no trade of 1,000 USD notional or more happened in
//!   the last 40 s, one is forced (alternating venues), so every minute has at least one whale.

pub mod book;
mod catalog;
pub mod types;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crossbook_core::{Amount, BookSnapshot, Exchange, IntervalCode, Level, Outcome, Price, TakerSide, Timestamp};
use rand::{Rng, SeedableRng, rngs::StdRng};

pub use self::catalog::{venue_a_btc_series, venue_b_btc_series};
use self::{
    book::{LevelChange, YesBook, YesSide},
    types::{Phase, SimEvent, SimMarket, SimSeries, SimTrade, Top, Update},
};
use crate::ids;

/// Nominal model step; random walks are scaled to it when steps are further apart.
pub const STEP_MS: i64 = 200;
/// A whale is forced when none happened for this long (so one falls in every minute).
const WHALE_EVERY_MS: i64 = 40_000;
/// Chance per step that a market's quotes move.
const BOOK_UPDATE_P: f64 = 0.35;
/// Chance per step that a market trades.
const TRADE_P: f64 = 0.012;
/// How far each venue is pushed from fair value during a cross episode, in cents.
const CROSS_OFFSET: i64 = 4;
/// Trades kept per venue for the REST tapes.
const TAPE_LEN: usize = 20_000;

/// Underlying asset of an up/down window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asset {
    Btc,
    Eth,
}

impl Asset {
    pub(crate) fn key(self) -> &'static str {
        match self {
            Asset::Btc => "btc",
            Asset::Eth => "eth",
        }
    }
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            Asset::Btc => "BTC",
            Asset::Eth => "ETH",
        }
    }
    /// Random-walk volatility in cents per √second (≈ 2.5 % a day).
    fn vol(self) -> i64 {
        match self {
            Asset::Btc => 645,
            Asset::Eth => 30,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PairKind {
    Window { asset: Asset, interval: IntervalCode },
    Game,
    Other,
}

/// The underlying that one market on each venue (or one venue only) quotes: it holds the fair value both
/// venues quote around, so cross-venue prices stay close except when an episode pushes them apart.
#[derive(Debug, Clone)]
pub(crate) struct Pair {
    pub(crate) kind: PairKind,
    /// Fair value of the pair's YES in cents.
    pub(crate) fair: i64,
    /// Per-venue quoting offset in cents (`[venue_a, venue_b]`).
    pub(crate) offsets: [i64; 2],
    pub(crate) start: Timestamp,
    pub(crate) end: Timestamp,
    /// Asset price (cents) when the window opened / closed.
    pub(crate) strike: Option<i64>,
    pub(crate) final_cents: Option<i64>,
    /// Whether the pair's YES won (games and questions).
    pub(crate) result: Option<bool>,
    /// How long settled markets of this pair stay listed.
    pub(crate) retain_ms: i64,
}

/// A window pair currently pushed apart so that a cross-venue arbitrage exists.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Episode {
    pair: String,
    /// The venue whose YES is cheap.
    cheap: Exchange,
    until: Timestamp,
}

fn ex_index(ex: Exchange) -> usize {
    match ex {
        Exchange::VenueA => 0,
        Exchange::VenueB => 1,
    }
}

type Key = (Exchange, String);

/// The whole simulated world of both venues.
#[derive(Debug, Clone)]
pub struct Model {
    seed: u64,
    rng: StdRng,
    now: Timestamp,
    version: u64,
    btc_cents: i64,
    eth_cents: i64,
    pairs: BTreeMap<String, Pair>,
    series: BTreeMap<Key, SimSeries>,
    events: BTreeMap<Key, SimEvent>,
    markets: BTreeMap<Key, SimMarket>,
    books: BTreeMap<Key, YesBook>,
    /// venue_b token id → (condition id, outcome index).
    tokens: BTreeMap<String, (String, usize)>,
    /// venue_b event slug → Gamma event id.
    slugs: BTreeMap<String, String>,
    gamma_ids: BTreeSet<String>,
    trades: [VecDeque<SimTrade>; 2],
    trade_seq: [u64; 2],
    last_whale: Timestamp,
    whale_turn: usize,
    episode: Option<Episode>,
    next_episode_at: Timestamp,
    /// Cross episodes started so far (the first one prefers the 15-minute window).
    episodes: u64,
}

impl Model {
    /// A model for `seed` as it looks at `now`: catalog listed, current windows open, books filled.
    pub fn new(seed: u64, now: Timestamp) -> Self {
        let mut init = ids::key_rng(seed, "prices");
        let mut m = Model {
            seed,
            rng: StdRng::seed_from_u64(ids::key_hash(seed, "main")),
            now,
            version: 0,
            btc_cents: 8_000_000 + init.random_range(-500_000..=500_000),
            eth_cents: 300_000 + init.random_range(-30_000..=30_000),
            pairs: BTreeMap::new(),
            series: BTreeMap::new(),
            events: BTreeMap::new(),
            markets: BTreeMap::new(),
            books: BTreeMap::new(),
            tokens: BTreeMap::new(),
            slugs: BTreeMap::new(),
            gamma_ids: BTreeSet::new(),
            trades: [VecDeque::new(), VecDeque::new()],
            trade_seq: [0, 0],
            last_whale: Timestamp::from_millis(now.millis() - WHALE_EVERY_MS + 5_000),
            whale_turn: 0,
            episode: None,
            next_episode_at: Timestamp::from_millis(now.millis() + 8_000),
            episodes: 0,
        };
        m.ensure_catalog(now.secs());
        let mut ignored = Vec::new();
        m.update_phases(now, &mut ignored);
        m.refresh_books(&mut ignored, true);
        m
    }

    /// Advances the model to `now` (earlier instants are treated as "no time passed") and returns what
    /// happened, in order.
    pub fn step(&mut self, now: Timestamp) -> Vec<Update> {
        let now = now.max(self.now);
        let dt = now.millis() - self.now.millis();
        self.now = now;
        self.version += 1;
        let mut out = Vec::new();
        self.walk_prices(dt);
        self.ensure_catalog(now.secs());
        self.update_phases(now, &mut out);
        self.update_episode(now);
        self.update_fairs();
        self.refresh_books(&mut out, false);
        self.random_trades(&mut out);
        self.whale_if_due(&mut out);
        self.update_ticks(&mut out);
        self.prune(now);
        out
    }

    // ------------------------------------------------------------------ read access

    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// Model time of the last step.
    pub fn now(&self) -> Timestamp {
        self.now
    }
    /// Number of steps and injections so far; every batch of updates carries the version it produced.
    pub fn version(&self) -> u64 {
        self.version
    }
    /// Current BTC reference price in cents.
    pub fn btc_cents(&self) -> i64 {
        self.btc_cents
    }
    pub fn series_of(&self, ex: Exchange) -> impl Iterator<Item = &SimSeries> {
        self.series.values().filter(move |s| s.exchange == ex)
    }
    pub fn series(&self, ex: Exchange, id: &str) -> Option<&SimSeries> {
        self.series.get(&(ex, id.to_string()))
    }
    pub fn events(&self, ex: Exchange) -> impl Iterator<Item = &SimEvent> {
        self.events.values().filter(move |e| e.exchange == ex)
    }
    pub fn event(&self, ex: Exchange, id: &str) -> Option<&SimEvent> {
        self.events.get(&(ex, id.to_string()))
    }
    /// venue_b event by slug.
    pub fn event_by_slug(&self, slug: &str) -> Option<&SimEvent> {
        self.slugs.get(slug).and_then(|id| self.event(Exchange::VenueB, id))
    }
    pub fn markets(&self, ex: Exchange) -> impl Iterator<Item = &SimMarket> {
        self.markets.values().filter(move |m| m.exchange == ex)
    }
    pub fn market(&self, ex: Exchange, id: &str) -> Option<&SimMarket> {
        self.markets.get(&(ex, id.to_string()))
    }
    /// venue_b market holding `token_id`, and the token's outcome index.
    pub fn market_by_token(&self, token_id: &str) -> Option<(&SimMarket, usize)> {
        let (cid, i) = self.tokens.get(token_id)?;
        Some((self.market(Exchange::VenueB, cid)?, *i))
    }
    /// The canonical YES book of a trading market (`None` when it has none).
    pub fn yes_book(&self, ex: Exchange, market_id: &str) -> Option<&YesBook> {
        self.books.get(&(ex, market_id.to_string()))
    }
    /// Trades of a venue, newest first.
    pub fn trades(&self, ex: Exchange) -> &VecDeque<SimTrade> {
        &self.trades[ex_index(ex)]
    }
    /// Top of book and statistics of a market.
    pub fn top(&self, ex: Exchange, market_id: &str) -> Top {
        let key = (ex, market_id.to_string());
        self.top_of(&key)
    }

    /// The book a venue would send for `id` (venue_a ticker; venue_b token id, or condition id for its
    /// first token), as a venue-neutral snapshot with ladders best first. venue_a: `bids` = YES bids,
    /// `no_bids` = NO bids, `asks` empty. venue_b: the token's bids and asks.
    pub fn book_snapshot(&self, ex: Exchange, id: &str) -> Option<BookSnapshot> {
        let level = |(price, size): (Price, Amount)| Level { price, size };
        let mut snap = match ex {
            Exchange::VenueA => {
                let m = self.market(ex, id)?;
                let book = self.yes_book(ex, id).cloned().unwrap_or_default();
                BookSnapshot {
                    exchange: ex,
                    market_id: m.market_id.clone(),
                    asset_id: None,
                    timestamp: self.now,
                    bids: book.venue_a_yes().into_iter().map(level).collect(),
                    asks: Vec::new(),
                    no_bids: book.venue_a_no().into_iter().map(level).collect(),
                }
            }
            Exchange::VenueB => {
                let (m, index) = match self.market_by_token(id) {
                    Some(found) => found,
                    None => (self.market(ex, id)?, 0),
                };
                let token = m.tokens.as_ref()?[index].clone();
                let book = self.yes_book(ex, &m.market_id).cloned().unwrap_or_default();
                let (bids, asks) = book.token_view(index);
                BookSnapshot {
                    exchange: ex,
                    market_id: m.market_id.clone(),
                    asset_id: Some(token),
                    timestamp: self.now,
                    bids: bids.into_iter().map(level).collect(),
                    asks: asks.into_iter().map(level).collect(),
                    no_bids: Vec::new(),
                }
            }
        };
        snap.normalise();
        Some(snap)
    }

    /// The open market of each venue for the current window of BTC `code` (both must be open).
    pub fn open_window_pair(&self, code: IntervalCode) -> Option<(&SimMarket, &SimMarket)> {
        self.pairs
            .iter()
            .filter(|(_, p)| {
                p.kind
                    == PairKind::Window {
                        asset: Asset::Btc,
                        interval: code,
                    }
            })
            .find_map(|(key, _)| self.open_pair_markets(key))
    }

    fn open_pair_markets(&self, pair: &str) -> Option<(&SimMarket, &SimMarket)> {
        let mut a = None;
        let mut b = None;
        for m in self
            .markets
            .values()
            .filter(|m| m.pair == pair && m.phase == Phase::Open)
        {
            match m.exchange {
                Exchange::VenueA => a = Some(m),
                Exchange::VenueB => b = Some(m),
            }
        }
        Some((a?, b?))
    }

    // ------------------------------------------------------------------ forced events

    /// Pushes the current BTC `code` window pair apart for `duration_ms` so that buying YES on `cheap` and
    /// NO on the other venue nets several cents after fees. Returns the venue_a ticker and venue_b
    /// condition id, or `None` when that window is not open on both venues. Takes effect at the next step.
    pub fn force_cross(&mut self, code: IntervalCode, cheap: Exchange, duration_ms: i64) -> Option<(String, String)> {
        let (key, ids) = self.pairs.iter().find_map(|(key, p)| {
            if p.kind
                != (PairKind::Window {
                    asset: Asset::Btc,
                    interval: code,
                })
            {
                return None;
            }
            let (a, b) = self.open_pair_markets(key)?;
            Some((key.clone(), (a.market_id.clone(), b.market_id.clone())))
        })?;
        self.episode = Some(Episode {
            pair: key,
            cheap,
            until: Timestamp::from_millis(self.now.millis() + duration_ms),
        });
        Some(ids)
    }

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
        Some(out)
    }

    // ------------------------------------------------------------------ dynamics

    fn walk_prices(&mut self, dt_ms: i64) {
        let n = (dt_ms / STEP_MS).clamp(1, 50);
        for _ in 0..n {
            self.btc_cents = (self.btc_cents + self.rng.random_range(-500..=500)).max(100_000);
            self.eth_cents = (self.eth_cents + self.rng.random_range(-23..=23)).max(10_000);
        }
    }

    fn asset_cents(&self, asset: Asset) -> i64 {
        match asset {
            Asset::Btc => self.btc_cents,
            Asset::Eth => self.eth_cents,
        }
    }

    /// Each venue's oracle differs a little (venue_a BRTI averages, venue_b Chainlink): a fixed per-window
    /// offset in cents.
    fn oracle_jitter(&self, pair: &str, ex: Exchange) -> i64 {
        match ex {
            Exchange::VenueA => 0,
            Exchange::VenueB => ids::key_rng(self.seed, &format!("{pair}:oracle")).random_range(-25..=25),
        }
    }

    fn update_phases(&mut self, now: Timestamp, out: &mut Vec<Update>) {
        let keys: Vec<Key> = self.markets.keys().cloned().collect();
        for key in keys {
            while let Some(m) = self.markets.get(&key) {
                let next = match m.phase {
                    Phase::Upcoming if now >= m.open_time => Phase::Open,
                    Phase::Open if now >= m.close_time => Phase::Closed,
                    Phase::Closed if now.millis() >= m.close_time.millis() + m.settle_delay_ms => Phase::Settled,
                    _ => break,
                };
                self.enter_phase(&key, next, out);
            }
        }
    }

    fn enter_phase(&mut self, key: &Key, phase: Phase, out: &mut Vec<Update>) {
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

    fn update_episode(&mut self, now: Timestamp) {
        if let Some(ep) = &self.episode {
            let alive = now < ep.until && self.open_pair_markets(&ep.pair).is_some();
            if !alive {
                self.episode = None;
                self.next_episode_at = Timestamp::from_millis(now.millis() + self.rng.random_range(60_000..=150_000));
            }
        }
        if self.episode.is_some() || now < self.next_episode_at {
            return;
        }
        // The first episode lasts longer so that a service started with the simulator sees it even if its
        // connectors take a while to subscribe.
        let duration = if self.episodes == 0 {
            45_000
        } else {
            self.rng.random_range(20_000..=35_000)
        };
        let mut candidates: Vec<(IntervalCode, String)> = Vec::new();
        for (key, p) in &self.pairs {
            let PairKind::Window {
                asset: Asset::Btc,
                interval,
            } = p.kind
            else {
                continue;
            };
            let Some((a, b)) = self.open_pair_markets(key) else {
                continue;
            };
            let left = a.close_time.millis().min(b.close_time.millis()) - now.millis();
            if left >= duration + 10_000 {
                candidates.push((interval, key.clone()));
            }
        }
        if candidates.is_empty() {
            return;
        }
        let pick = if self.episodes == 0 {
            // The first episode prefers the 15-minute window: the product everyone watches.
            let order = [
                IntervalCode::M15,
                IntervalCode::H1,
                IntervalCode::H24,
                IntervalCode::W1,
                IntervalCode::M5,
            ];
            order
                .iter()
                .find_map(|c| candidates.iter().find(|(i, _)| i == c))
                .cloned()
        } else {
            let i = self.rng.random_range(0..candidates.len());
            Some(candidates[i].clone())
        };
        if let Some((_, pair)) = pick {
            let cheap = if self.rng.random_bool(0.5) {
                Exchange::VenueA
            } else {
                Exchange::VenueB
            };
            self.episode = Some(Episode {
                pair,
                cheap,
                until: Timestamp::from_millis(now.millis() + duration),
            });
            self.episodes += 1;
        }
    }

    fn update_fairs(&mut self) {
        let now = self.now;
        let prices = (self.btc_cents, self.eth_cents);
        for pair in self.pairs.values_mut() {
            let target = match pair.kind {
                PairKind::Window { asset, .. } => match pair.strike {
                    Some(strike) if now >= pair.start => {
                        let px = if asset == Asset::Btc { prices.0 } else { prices.1 };
                        let remaining = ((pair.end.millis() - now.millis()) / 1000).max(0);
                        let sigma = asset.vol() * (remaining + 1).isqrt();
                        let z_milli = (px - strike) * 1000 / sigma.max(1);
                        50 + (z_milli * 40 / 1000).clamp(-46, 46)
                    }
                    _ => 50,
                },
                PairKind::Game | PairKind::Other => pair.fair,
            };
            if pair.fair < target && self.rng.random_bool(0.5) {
                pair.fair += 1;
            } else if pair.fair > target && self.rng.random_bool(0.5) {
                pair.fair -= 1;
            }
            if self.rng.random_bool(0.08) {
                pair.fair += if self.rng.random_bool(0.5) { 1 } else { -1 };
            }
            pair.fair = pair.fair.clamp(3, 97);
            for off in &mut pair.offsets {
                if self.rng.random_bool(0.01) {
                    *off = (*off + self.rng.random_range(-1..=1)).clamp(-1, 1);
                }
            }
        }
    }

    /// Requotes trading markets (each with probability [`BOOK_UPDATE_P`], markets in a cross episode and
    /// empty books every step; all of them when `all`).
    fn refresh_books(&mut self, out: &mut Vec<Update>, all: bool) {
        let keys: Vec<Key> = self
            .markets
            .iter()
            .filter(|(_, m)| m.trading())
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
    fn requote(&mut self, old: &YesBook, bid: i64, ask: i64, depth: i64, lot: Amount) -> YesBook {
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

    fn lots_per_unit(lot: Amount) -> i64 {
        (1_000_000 / lot.micros().max(1)).max(1)
    }

    fn fresh_size(&mut self, level: i64, lot: Amount) -> Amount {
        let units = self.rng.random_range(10..=400) * (2 + level) / 2;
        let per = Self::lots_per_unit(lot);
        let frac = if per > 1 { self.rng.random_range(0..per) } else { 0 };
        Amount::from_micros((units * per + frac) * lot.micros())
    }

    fn resize(&mut self, size: Amount, lot: Amount) -> Amount {
        let lots = size.micros() / lot.micros();
        let new = (lots * self.rng.random_range(70..=130) / 100).max(Self::lots_per_unit(lot));
        Amount::from_micros(new * lot.micros())
    }

    fn random_trades(&mut self, out: &mut Vec<Update>) {
        let keys: Vec<Key> = self
            .markets
            .iter()
            .filter(|(_, m)| m.trading())
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

    fn whale_if_due(&mut self, out: &mut Vec<Update>) {
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
            let Some((ask, _)) = self.books[&key].best_ask() else {
                continue;
            };
            let dollars = self.rng.random_range(1_200..=4_000);
            let contracts = (dollars * 100 + ask - 1) / ask;
            // Token 0 at the YES ask: notional = ask × contracts ≥ the drawn dollars.
            if self
                .execute(&key, true, Amount::from_units(contracts), Some(0), out)
                .is_some()
            {
                return;
            }
        }
    }

    /// Fills a taker against the best level of one side of the YES book and records the trade. `token`
    /// chooses the venue_b representation (YES token or its mirror); random when `None`.
    fn execute(
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

    /// venue_b switches a market to a 0.001 tick near the edges (best bid ≤ 0.04 or best ask ≥ 0.96) and
    /// back to 0.01 once well inside (0.06–0.94).
    fn update_ticks(&mut self, out: &mut Vec<Update>) {
        let fine = Price::from_micros(1_000);
        let coarse = Price::from_cents(1);
        for (key, m) in self
            .markets
            .iter_mut()
            .filter(|(k, m)| k.0 == Exchange::VenueB && m.trading())
        {
            let Some(book) = self.books.get(key) else { continue };
            let bid = book.best_bid().map_or(50, |(p, _)| p);
            let ask = book.best_ask().map_or(50, |(p, _)| p);
            let tick = if bid <= 4 || ask >= 96 {
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

    /// Drops settled markets once their pair's retention has passed, then empty events and pairs.
    fn prune(&mut self, now: Timestamp) {
        let pairs = &self.pairs;
        let gone: Vec<Key> = self
            .markets
            .iter()
            .filter(|(_, m)| {
                m.settled_at
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

    fn top_of(&self, key: &Key) -> Top {
        let book = self.books.get(key);
        let m = self.markets.get(key);
        Top {
            bid: book.and_then(YesBook::best_bid),
            ask: book.and_then(YesBook::best_ask),
            last_price: m.and_then(|m| m.last_price),
            last_size: m.map(|m| m.last_size).unwrap_or_default(),
            volume: m.map(|m| m.volume).unwrap_or_default(),
            open_interest: m.map(|m| m.open_interest).unwrap_or_default(),
        }
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

#[cfg(test)]
mod tests;
