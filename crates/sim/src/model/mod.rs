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
//!   the last 40 s, one is forced (alternating venues), so every minute has at least one whale. Every 20 s
//!   another lands on one of the events the service's public whale preview most likely unlocks that day.

pub mod book;
mod catalog;
mod fair;
mod lifecycle;
mod quotes;
mod scale;
mod trades;
pub mod types;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crossbook_core::{Amount, BookSnapshot, Exchange, IntervalCode, Level, Price, Timestamp};
use rand::{Rng, SeedableRng, rngs::StdRng};

use self::{
    book::YesBook,
    types::{Phase, SimEvent, SimMarket, SimSeries, SimTrade, Top, Update},
};
pub use self::{
    catalog::{venue_a_btc_series, venue_b_btc_series},
    scale::{SimRates, SimScale},
};
use crate::ids;

/// Nominal model step; random walks are scaled to it when steps are further apart.
pub const STEP_MS: i64 = 200;
/// A whale is forced when none happened for this long (so one falls in every minute).
const WHALE_EVERY_MS: i64 = 40_000;
/// A whale on one of the events the public preview likely unlocks is forced this often (see
/// [`Model::preview_whale_if_due`]), so the anonymous whale feed shows trades within seconds of start.
const PREVIEW_WHALE_EVERY_MS: i64 = 20_000;
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
    last_preview_whale: Timestamp,
    preview_turn: usize,
    episode: Option<Episode>,
    next_episode_at: Timestamp,
    /// Cross episodes started so far (the first one prefers the 15-minute window).
    episodes: u64,
    /// The full scale's bulk catalog and change generator; `None` at the demo scale.
    bulk: Option<Box<scale::Bulk>>,
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
            // The first one a few seconds in: by then the service has the catalog and can draw its pool.
            last_preview_whale: Timestamp::from_millis(now.millis() - PREVIEW_WHALE_EVERY_MS + 5_000),
            preview_turn: 0,
            episode: None,
            next_episode_at: Timestamp::from_millis(now.millis() + 8_000),
            episodes: 0,
            bulk: None,
        };
        m.ensure_catalog(now.secs());
        let mut ignored = Vec::new();
        m.update_phases(now, &mut ignored);
        m.refresh_books(&mut ignored, true);
        m
    }

    /// A model at `scale`: at [`SimScale::Demo`] the same as [`Model::new`]; at [`SimScale::Full`] with the
    /// bulk catalog added and its books changing at `rates`.
    pub fn with_scale(seed: u64, now: Timestamp, scale: SimScale, rates: SimRates) -> Self {
        let mut m = Model::new(seed, now);
        if scale == SimScale::Full {
            m.init_bulk(rates);
            // venue_b's BTC windows quote in 0.001 at this scale.
            m.update_ticks(&mut Vec::new());
        }
        m
    }

    /// The scale this model lists.
    pub fn scale(&self) -> SimScale {
        if self.bulk.is_some() {
            SimScale::Full
        } else {
            SimScale::Demo
        }
    }

    /// Book changes the full scale's generator emitted so far on `ex` (0 at the demo scale).
    pub fn generated_changes(&self, ex: Exchange) -> u64 {
        self.bulk.as_ref().map_or(0, |b| b.emitted[ex_index(ex)])
    }

    /// Level changes published so far on one bulk market's book, by market id (0 for a market never
    /// changed, and at the demo scale): the generator's, and those of trades and of the book's opening (see
    /// `count_bulk_changes`). Each is sent on the wire as one level change to every socket that follows the
    /// book after its snapshot; on venue_b each is sent for both outcome tokens, so each token's book gets
    /// this many.
    pub fn generated_changes_of(&self, ex: Exchange, market_id: &str) -> u64 {
        self.bulk.as_ref().map_or(0, |b| {
            b.emitted_by_market
                .get(&(ex, market_id.to_string()))
                .copied()
                .unwrap_or(0)
        })
    }

    /// Advances the model to `now` (earlier instants are treated as "no time passed") and returns what
    /// happened, in order.
    pub fn step(&mut self, now: Timestamp) -> Vec<Update> {
        let now = now.max(self.now);
        let t0 = self.now.millis();
        let dt = now.millis() - t0;
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
        self.preview_whale_if_due(&mut out);
        self.update_ticks(&mut out);
        self.prune(now);
        self.step_bulk(t0, &mut out);
        self.count_bulk_changes(&out);
        out
    }

    /// Adds to each bulk market's count the level changes of its book that `out` publishes: the generator's
    /// changes, a market's whole book when it starts trading, and trades (a whale may take a bulk window's
    /// level). Each is sent on the wire as one level change per book (venue_a `orderbook_delta`, venue_b a
    /// `price_change` item per token, or the `book` after a trade), so the count is what a capture of the
    /// book must hold.
    fn count_bulk_changes(&mut self, out: &[Update]) {
        let Some(bulk) = self.bulk.as_mut() else { return };
        for u in out {
            let (exchange, market_id, n) = match u {
                Update::Book {
                    exchange,
                    market_id,
                    changes,
                    ..
                } => (*exchange, market_id, changes.len() as u64),
                Update::Trade { trade, .. } => (trade.exchange, &trade.market_id, 1),
                _ => continue,
            };
            let key = (exchange, market_id.clone());
            if self.markets.get(&key).is_some_and(SimMarket::is_bulk) {
                *bulk.emitted_by_market.entry(key).or_default() += n;
            }
        }
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

#[cfg(test)]
mod tests;
