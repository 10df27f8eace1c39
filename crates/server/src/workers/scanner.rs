//! The arbitrage scanner (spec 4.3, 6.1; contracts §6) and what it shares with the arbitrage routes.
//!
//! # One computation, two callers
//! [`scan_live`] runs the core [`scan_pairs`] over the catalog ([`ArbCatalog`]) and the in-memory books
//! (`state.live`, read in place under its lock, never copied). `/v1/arbitrage/current` calls it per request
//! with the caller's parameters; the scanner calls it every `scan_interval_ms` with the defaults and
//! `min_net_cents = 0`, so the two can never disagree on an opportunity.
//!
//! # The catalog
//! [`ArbCache`] (in [`AppState::arb`]) holds the active markets of both venues as core
//! [`Listing`]s, the operator's pair overrides and the pairs formed at the default window tolerance. It is
//! loaded from the store, at most every [`CATALOG_TTL`] (and again after a catalog sync the scanner hears of
//! on the bus, or a change of the overrides through [`ArbCache::invalidate`]), never per pass or per request.
//! A request with a non-default `window_tolerance_seconds` pairs the cached listings again (linear in the
//! catalog).
//!
//! # A pass
//! 1. scan at `now` (books older than 30 s drop their pair; the top 5 ask levels are captured);
//! 2. [`EpisodeBook::observe`]: a detection within 120 s of its episode's last sighting extends it, else opens
//!    one; the changes are written in one batch ([`ArbitrageStore::record_episodes`]). A failed write is
//!    logged; the next pass writes the same episodes again (upserts), so nothing is lost for long;
//! 3. [`Cooldown::select`]: opportunities at or above `webhook_min_net_cents` whose episode key was not
//!    published in the last `opportunity_cooldown_seconds` are published as
//!    [`DomainEvent::ArbitrageOpportunity`], the payload being the opportunity object of spec 2.9/2.10 as
//!    the webhook's `data` (without the captured `orderbook`, which `data` only carries on request).
//!
//! At start the episode book is restored from the store (episodes last seen within the gap), so a restart
//! extends the episodes in progress instead of opening duplicates.

use std::{
    borrow::Cow,
    collections::HashMap,
    sync::{Arc, Mutex, RwLock},
    time::{Duration, Instant},
};

use crossbook_core::{
    BookSnapshot, Exchange, Timestamp,
    arb::{
        BookSource, Cooldown, EPISODE_GAP_SECONDS, EpisodeBook, Listing, MarketPair, MicroUsd, Opportunity, PairKind,
        PairOverride, ScanParams, SpreadParams, SpreadRow, pair_markets, render, scan_pairs, spreads_for_pairs,
    },
};
use crossbook_store::{Store, StoreResult};
use crossbook_venues::{BookKey, BookMap, DomainEvent, LiveBooks};
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::AppState;

/// Longest time the cached catalog is used before it is read from the store again.
pub const CATALOG_TTL: Duration = Duration::from_secs(5);

/// The window tolerance of the scanner and the default of `/v1/arbitrage/current` (spec 4.3).
pub const DEFAULT_WINDOW_TOLERANCE_SECONDS: i64 = 60;

/// The book staleness of the scanner and the default of `/v1/arbitrage/current` (spec 4.3).
pub const DEFAULT_MAX_STALENESS_SECONDS: i64 = 30;

// ------------------------------------------------------------------------------------------------ catalog

/// A pair as indexes into [`ArbCatalog::listings`], so the catalog can keep its pairs next to the listings
/// they borrow from.
#[derive(Debug, Clone)]
struct PairIdx {
    a: usize,
    b: usize,
    kind: PairKind,
    event_id: String,
}

/// Pairings at non-default tolerances one catalog keeps.
const MAX_OTHER_PAIRINGS: usize = 8;

/// [`pair_markets`] as indexes into `listings`.
fn pair_indexes(listings: &[Listing], overrides: &[PairOverride], window_tolerance_seconds: i64) -> Vec<PairIdx> {
    let index_of = |l: &Listing| {
        // Every pair borrows from `listings`: its position is the element offset of the reference.
        (l as *const Listing as usize - listings.as_ptr() as usize) / std::mem::size_of::<Listing>()
    };
    pair_markets(listings, overrides, window_tolerance_seconds)
        .into_iter()
        .map(|p| PairIdx {
            a: index_of(p.venue_a),
            b: index_of(p.venue_b),
            kind: p.kind.into_owned(),
            event_id: p.event_id.into_owned(),
        })
        .collect()
}

/// The scanner's view of the catalog: listings, overrides, and the pairs at the default tolerance.
#[derive(Debug)]
pub struct ArbCatalog {
    pub listings: Vec<Listing>,
    pub overrides: Vec<PairOverride>,
    default_pairs: Vec<PairIdx>,
    /// Pairings at other tolerances, kept for the catalog's life (a pairing of 10,000 windows costs ~100 ms,
    /// and a caller repeating `window_tolerance_seconds` should pay it once). At most
    /// [`MAX_OTHER_PAIRINGS`] are kept.
    other_pairs: Mutex<HashMap<i64, Arc<Vec<PairIdx>>>>,
    /// The [`LiveBooks`] key of every book the pairs read, by what [`BookSource::book`] is asked for
    /// (venue_a ticker, venue_b token id), built once so that a lookup allocates nothing.
    book_keys: [KeyMap; 2],
    loaded: Instant,
}

impl ArbCatalog {
    /// Builds the catalog and pairs it once at the default tolerance.
    pub fn new(listings: Vec<Listing>, overrides: Vec<PairOverride>) -> Self {
        let default_pairs = pair_indexes(&listings, &overrides, DEFAULT_WINDOW_TOLERANCE_SECONDS);
        let mut book_keys: [KeyMap; 2] = Default::default();
        for l in &listings {
            let m = &l.market;
            match m.exchange {
                Exchange::VenueA => {
                    book_keys[0].insert(m.market_id.clone(), BookKey::venue_a(&m.market_id));
                }
                Exchange::VenueB => {
                    for t in [&m.yes_token_id, &m.no_token_id].into_iter().flatten() {
                        book_keys[1].insert(t.clone(), BookKey::venue_b(&m.market_id, t));
                    }
                }
            }
        }
        ArbCatalog {
            listings,
            overrides,
            default_pairs,
            other_pairs: Mutex::default(),
            book_keys,
            loaded: Instant::now(),
        }
    }

    /// The pairs at `window_tolerance_seconds`, each tolerance paired once per catalog.
    pub fn pairs(&self, window_tolerance_seconds: i64) -> Vec<MarketPair<'_>> {
        if window_tolerance_seconds == DEFAULT_WINDOW_TOLERANCE_SECONDS {
            return self.borrow_pairs(&self.default_pairs);
        }
        let cached = self
            .other_pairs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&window_tolerance_seconds)
            .cloned();
        let idx = cached.unwrap_or_else(|| {
            // Paired outside the lock: concurrent first callers may both pair, which is harmless.
            let idx = Arc::new(pair_indexes(&self.listings, &self.overrides, window_tolerance_seconds));
            let mut other = self.other_pairs.lock().unwrap_or_else(|e| e.into_inner());
            if other.len() >= MAX_OTHER_PAIRINGS {
                other.clear();
            }
            other.insert(window_tolerance_seconds, idx.clone());
            idx
        });
        // The map may drop this pairing while the caller scans, so its names are copied; the listings are
        // borrowed as usual.
        idx.iter()
            .map(|p| MarketPair {
                venue_a: &self.listings[p.a],
                venue_b: &self.listings[p.b],
                kind: Cow::Owned(p.kind.clone()),
                event_id: Cow::Owned(p.event_id.clone()),
            })
            .collect()
    }

    fn borrow_pairs<'s>(&'s self, idx: &'s [PairIdx]) -> Vec<MarketPair<'s>> {
        idx.iter()
            .map(|p| MarketPair {
                venue_a: &self.listings[p.a],
                venue_b: &self.listings[p.b],
                kind: Cow::Borrowed(&p.kind),
                event_id: Cow::Borrowed(&p.event_id),
            })
            .collect()
    }

    /// Number of pairs at the default tolerance.
    pub fn pair_count(&self) -> usize {
        self.default_pairs.len()
    }
}

/// Ticker or token id → live-book key (foldhash, as [`BookMap`]: the scan looks up every pair's books).
type KeyMap = HashMap<String, BookKey, foldhash::fast::RandomState>;

/// The cached [`ArbCatalog`], shared by the scanner and the routes.
#[derive(Debug)]
pub struct ArbCache {
    current: RwLock<Option<Arc<ArbCatalog>>>,
    /// Serialises reloads, so a burst of requests after expiry reads the store once.
    reload: tokio::sync::Mutex<()>,
    ttl: Duration,
}

impl Default for ArbCache {
    fn default() -> Self {
        ArbCache::new(CATALOG_TTL)
    }
}

impl ArbCache {
    pub fn new(ttl: Duration) -> Self {
        ArbCache {
            current: RwLock::new(None),
            reload: tokio::sync::Mutex::new(()),
            ttl,
        }
    }

    fn fresh(&self) -> Option<Arc<ArbCatalog>> {
        let cur = self.current.read().unwrap_or_else(|e| e.into_inner());
        cur.as_ref().filter(|c| c.loaded.elapsed() < self.ttl).cloned()
    }

    /// The catalog, read from the store when the cached one is older than the TTL or invalidated.
    pub async fn catalog(&self, store: &dyn Store) -> StoreResult<Arc<ArbCatalog>> {
        if let Some(c) = self.fresh() {
            return Ok(c);
        }
        let _guard = self.reload.lock().await;
        if let Some(c) = self.fresh() {
            return Ok(c);
        }
        let (listings, overrides) = tokio::try_join!(store.arbitrage_listings(), store.pair_overrides())?;
        let catalog = Arc::new(ArbCatalog::new(
            listings,
            overrides.into_iter().map(|o| o.pair).collect(),
        ));
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Some(catalog.clone());
        Ok(catalog)
    }

    /// Installs a catalog (tests and benchmarks that build one by hand); it expires like a loaded one.
    pub fn set(&self, catalog: ArbCatalog) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(catalog));
    }

    /// Forgets the cached catalog: the next use reads the store.
    pub fn invalidate(&self) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

// ------------------------------------------------------------------------------------------------ books

/// The live books as a [`BookSource`]: stale books count as missing.
struct LiveSource<'m> {
    map: &'m BookMap,
    book_keys: &'m [KeyMap; 2],
}

impl BookSource for LiveSource<'_> {
    fn book(&self, exchange: Exchange, key: &str) -> Option<&BookSnapshot> {
        let keys = &self.book_keys[usize::from(exchange == Exchange::VenueB)];
        self.map.get(keys.get(key)?).filter(|e| !e.stale).map(|e| &e.book)
    }
}

/// The opportunities of the catalog over the live books (see the module docs).
pub fn scan_live(catalog: &ArbCatalog, live: &LiveBooks, params: &ScanParams) -> Vec<Opportunity> {
    let pairs = catalog.pairs(params.window_tolerance_seconds);
    live.with_books(|map| {
        let source = LiveSource {
            map,
            book_keys: &catalog.book_keys,
        };
        scan_pairs(&pairs, &source, params)
    })
}

/// The price-spread rows of the catalog over the live books.
pub fn spreads_live(catalog: &ArbCatalog, live: &LiveBooks, params: &SpreadParams) -> Vec<SpreadRow> {
    let pairs = catalog.pairs(params.window_tolerance_seconds);
    live.with_books(|map| {
        let source = LiveSource {
            map,
            book_keys: &catalog.book_keys,
        };
        spreads_for_pairs(&pairs, &source, params)
    })
}

/// The `data` of an `arbitrage.opportunity` webhook: the opportunity object without the captured depth.
pub fn webhook_data(o: &Opportunity) -> Value {
    let mut v = render::opportunity_current_json(o);
    if let Some(map) = v.as_object_mut() {
        map.remove("orderbook");
    }
    v
}

// ------------------------------------------------------------------------------------------------ worker

/// How the scanner runs.
#[derive(Clone)]
pub struct Settings {
    /// Time between two passes (`scan_interval_ms`).
    pub interval: Duration,
    /// Publication threshold (`webhook_min_net_cents`), inclusive.
    pub webhook_min_net: MicroUsd,
    /// Per-opportunity publication cooldown (`opportunity_cooldown_seconds`).
    pub cooldown_seconds: i64,
    /// The current time (a parameter so tests control it).
    pub clock: Arc<dyn Fn() -> Timestamp + Send + Sync>,
}

impl Settings {
    /// The service's settings.
    pub fn from_config(config: &crate::config::Config) -> Settings {
        Settings {
            interval: Duration::from_millis(config.scan_interval_ms.max(1)),
            webhook_min_net: MicroUsd::cents_ceil_from_f64(config.webhook_min_net_cents)
                .unwrap_or(MicroUsd::from_cents(1)),
            cooldown_seconds: i64::try_from(config.opportunity_cooldown_seconds).unwrap_or(i64::MAX),
            clock: Arc::new(Timestamp::now),
        }
    }
}

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Opportunities found.
    pub opportunities: usize,
    /// Episodes opened and extended.
    pub opened: usize,
    pub extended: usize,
    /// Opportunities published on the bus.
    pub published: usize,
}

/// The scanner's state between passes.
pub struct Scanner {
    state: AppState,
    settings: Settings,
    episodes: EpisodeBook,
    cooldown: Cooldown,
}

impl Scanner {
    pub fn new(state: AppState, settings: Settings) -> Self {
        let cooldown = Cooldown::new(settings.cooldown_seconds);
        Scanner {
            state,
            settings,
            episodes: EpisodeBook::new(),
            cooldown,
        }
    }

    /// Resumes the episodes in progress from the store.
    pub async fn restore(&mut self) -> StoreResult<usize> {
        let now = (self.settings.clock)();
        let since = Timestamp::from_millis(now.millis().saturating_sub(EPISODE_GAP_SECONDS * 1000));
        let recent = self.state.store.recent_episodes(since).await?;
        let n = recent.len();
        self.episodes.restore(recent);
        Ok(n)
    }

    /// One pass at the settings' clock (see the module docs). Store failures are logged, not returned.
    pub async fn pass(&mut self) -> PassReport {
        let now = (self.settings.clock)();
        let catalog = match self.state.arb.catalog(self.state.store.as_ref()).await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "arbitrage scanner: cannot read the catalog; skipping this pass");
                return PassReport::default();
            }
        };
        let params = ScanParams {
            include_orderbook: true,
            ..ScanParams::new(now)
        };
        let opps = scan_live(&catalog, &self.state.live, &params);
        let changes = self.episodes.observe(&opps, now);
        let opened = changes.iter().filter(|c| c.is_opened()).count();
        let episodes: Vec<_> = changes.into_iter().map(|c| c.episode().clone()).collect();
        if let Err(e) = self.state.store.record_episodes(&episodes).await {
            tracing::warn!(error = %e, episodes = episodes.len(), "arbitrage scanner: cannot record episodes");
        }
        let publish = self.cooldown.select(&opps, self.settings.webhook_min_net, now);
        for o in &publish {
            self.state
                .bus
                .publish(DomainEvent::ArbitrageOpportunity(Arc::new(webhook_data(o))));
        }
        metrics::gauge!("crossbook_arbitrage_opportunities").set(opps.len() as f64);
        PassReport {
            opportunities: opps.len(),
            opened,
            extended: episodes.len() - opened,
            published: publish.len(),
        }
    }

    /// Runs passes every `interval` until `cancel`; a catalog sync on the bus makes the next pass reload
    /// the catalog.
    pub async fn run(mut self, cancel: CancellationToken) {
        let mut events = self.state.bus.subscribe();
        match self.restore().await {
            Ok(n) if n > 0 => tracing::info!(episodes = n, "arbitrage scanner resumed the episodes in progress"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "arbitrage scanner: cannot resume episodes"),
        }
        let mut listening = true;
        let mut tick = tokio::time::interval(self.settings.interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tick.tick() => {
                    let started = Instant::now();
                    self.pass().await;
                    metrics::histogram!("crossbook_arbitrage_scan_seconds").record(started.elapsed().as_secs_f64());
                }
                ev = events.recv(), if listening => match ev {
                    Ok(DomainEvent::CatalogSynced { .. }) => self.state.arb.invalidate(),
                    Ok(_) | Err(RecvError::Lagged(_)) => {}
                    // The sender lives in the state, so this does not happen; the TTL still refreshes.
                    Err(RecvError::Closed) => listening = false,
                },
            }
        }
    }
}

/// Starts the scanner for the service's configuration.
pub fn spawn(state: &AppState, tracker: &TaskTracker, cancel: &CancellationToken) {
    spawn_with(state, Settings::from_config(&state.config), tracker, cancel);
}

/// Starts the scanner with explicit settings.
pub fn spawn_with(state: &AppState, settings: Settings, tracker: &TaskTracker, cancel: &CancellationToken) {
    let scanner = Scanner::new(state.clone(), settings);
    tracker.spawn(scanner.run(cancel.clone()));
}
