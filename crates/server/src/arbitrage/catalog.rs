//! The pair catalog and its cache: the active markets of both venues as core [`Listing`]s, the operator's
//! pair overrides and rejected pairs, and the pairs formed from them, loaded from the store at most every [`CATALOG_TTL`] (and
//! again after [`ArbCache::invalidate`]), never per pass or per request. Once a catalog is held, reloads
//! run in the background while the held one stays in use. A non-default
//! `window_tolerance_seconds` pairs the cached listings again (linear in the catalog), kept per catalog.
//!
//! Every pair formed is kept for `/v1/arbitrage/pairs` ([`ArbCatalog::listed_pairs`]), but only the pairs
//! without a [`SkipReason`] (not rejected by the operator, YES on the same side on both venues) are scanned:
//! [`ArbCatalog::pairs`] and the default pairs below leave the others out, so `current`, the scanner, the
//! spreads and the webhooks never price them.
//!
//! Built once per catalog, for the pairs at the default tolerance (the scanner's, and `current`'s unless
//! the caller changes the tolerance):
//! - each pair's three books (venue_a market, venue_b YES and NO token) as [`BookKey`]s, resolved to
//!   [`LiveBooks`] slots on first use ([`ArbCatalog::pair_slots`]), so a pass reads books by index with no
//!   string hashing;
//! - the index from book to the pairs that read it ([`ArbCatalog::pairs_of_books`]), so the scanner
//!   re-prices only the pairs of a changed book. A new catalog (TTL, invalidation after a catalog sync)
//!   comes with a new index.

use std::{
    borrow::Cow,
    collections::HashMap,
    sync::{Arc, Mutex, RwLock},
    time::{Duration, Instant},
};

use crossbook_core::{
    Exchange,
    arb::{Listing, MarketPair, PairKind, PairOverride, SkipReason, pair_markets},
};
use crossbook_live::{BookKey, BookSlot, LiveBooks};
use crossbook_store::{Store, StoreResult};

use super::DEFAULT_WINDOW_TOLERANCE_SECONDS;

/// Longest time the cached catalog is used before it is read from the store again.
pub const CATALOG_TTL: Duration = Duration::from_secs(5);

/// A pair as indexes into [`ArbCatalog::listings`], so the catalog can keep its pairs next to the listings
/// they borrow from.
#[derive(Debug, Clone)]
struct PairIdx {
    a: usize,
    b: usize,
    kind: PairKind,
    event_id: String,
    /// Why the pair is not scanned (rejected, YES outcomes differ); `None` for a scanned pair.
    skip: Option<SkipReason>,
}

/// Pairings at non-default tolerances one catalog keeps.
const MAX_OTHER_PAIRINGS: usize = 8;

/// [`pair_markets`] as indexes into `listings`, every pair formed, each with its [`SkipReason`] against
/// `rejected`. A skipped pair keeps its markets (they do not pair with anything else): rejecting a wrong pair
/// must not let the matcher hand one of its markets to another pair the operator has not seen.
///
/// `scan_inverted` (`arbitrage_scan_inverted_pairs`) keeps pairs whose YES outcomes differ in the scan.
fn pair_indexes(
    listings: &[Listing],
    overrides: &[PairOverride],
    rejected: &HashMap<PairOverride, Option<String>>,
    scan_inverted: bool,
    window_tolerance_seconds: i64,
) -> Vec<PairIdx> {
    let index_of = |l: &Listing| {
        // Every pair borrows from `listings`: its position is the element offset of the reference.
        (l as *const Listing as usize - listings.as_ptr() as usize) / std::mem::size_of::<Listing>()
    };
    pair_markets(listings, overrides, window_tolerance_seconds)
        .into_iter()
        .map(|p| PairIdx {
            a: index_of(p.venue_a),
            b: index_of(p.venue_b),
            skip: p
                .skip_reason(|k| rejected.contains_key(k))
                .filter(|r| !(scan_inverted && *r == SkipReason::YesOutcomesDiffer)),
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
    /// The operator's rejected pairs with their reasons.
    rejected: HashMap<PairOverride, Option<String>>,
    /// Whether pairs whose YES outcomes differ are scanned (`arbitrage_scan_inverted_pairs`).
    scan_inverted: bool,
    /// Every pair formed at the default tolerance, scanned or not (what `/v1/arbitrage/pairs` lists).
    listed_pairs: Vec<PairIdx>,
    /// The scanned pairs at the default tolerance: `listed_pairs` without the skipped ones.
    default_pairs: Vec<PairIdx>,
    /// Pairings at other tolerances, kept for the catalog's life (a pairing of 10,000 windows costs ~100 ms,
    /// and a caller repeating `window_tolerance_seconds` should pay it once). At most
    /// [`MAX_OTHER_PAIRINGS`] are kept.
    other_pairs: Mutex<HashMap<i64, Arc<Vec<PairIdx>>>>,
    /// The [`LiveBooks`] key of every book the pairs read, by what [`BookSource::book`] is asked for
    /// (venue_a ticker, venue_b token id), built once so that a lookup allocates nothing. Used by the
    /// pairings at other tolerances, whose books are not resolved to slots.
    ///
    /// [`BookSource::book`]: crossbook_core::arb::BookSource::book
    pub(super) book_keys: [KeyMap; 2],
    /// The books of each default pair: venue_a market, venue_b YES token, venue_b NO token (`None` when the
    /// venue_b market lacks that token id).
    pair_keys: Vec<[Option<BookKey>; 3]>,
    /// Book → the default pairs that read it (indexes into `default_pairs`, ascending).
    book_pairs: HashMap<BookKey, Vec<u32>, foldhash::fast::RandomState>,
    /// `pair_keys` resolved to slots of the live books last scanned with (re-resolved when the live books
    /// compact their slots, see [`crossbook_live::books`]).
    slots: Mutex<Option<Arc<PairSlots>>>,
    loaded: Instant,
}

/// Each default pair's three books as [`LiveBooks`] slots, valid for one map and epoch.
#[derive(Debug)]
pub struct PairSlots {
    pub live_id: u64,
    pub epoch: u64,
    pub slots: Vec<[Option<BookSlot>; 3]>,
}

impl ArbCatalog {
    /// Builds the catalog with no rejected pairs and pairs it once at the default tolerance.
    pub fn new(listings: Vec<Listing>, overrides: Vec<PairOverride>) -> Self {
        ArbCatalog::with_rejections(listings, overrides, Vec::new(), false)
    }

    /// Builds the catalog and pairs it once at the default tolerance; `rejections` (pair, reason) are
    /// listed but never scanned, and so are pairs whose YES outcomes differ unless `scan_inverted`.
    pub fn with_rejections(
        listings: Vec<Listing>,
        overrides: Vec<PairOverride>,
        rejections: Vec<(PairOverride, Option<String>)>,
        scan_inverted: bool,
    ) -> Self {
        let rejected: HashMap<PairOverride, Option<String>> = rejections.into_iter().collect();
        let listed_pairs = pair_indexes(
            &listings,
            &overrides,
            &rejected,
            scan_inverted,
            DEFAULT_WINDOW_TOLERANCE_SECONDS,
        );
        let default_pairs: Vec<PairIdx> = listed_pairs.iter().filter(|p| p.skip.is_none()).cloned().collect();
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
        let pair_keys: Vec<[Option<BookKey>; 3]> = default_pairs
            .iter()
            .map(|p| {
                let (a, b) = (&listings[p.a].market, &listings[p.b].market);
                let token = |t: &Option<String>| t.as_deref().map(|t| BookKey::venue_b(&b.market_id, t));
                [
                    Some(BookKey::venue_a(&a.market_id)),
                    token(&b.yes_token_id),
                    token(&b.no_token_id),
                ]
            })
            .collect();
        let mut book_pairs: HashMap<BookKey, Vec<u32>, foldhash::fast::RandomState> = HashMap::default();
        for (i, keys) in pair_keys.iter().enumerate() {
            for k in keys.iter().flatten() {
                let pairs = book_pairs.entry(k.clone()).or_default();
                // A pair naming one book twice (both tokens equal) is listed once.
                if pairs.last() != Some(&(i as u32)) {
                    pairs.push(i as u32);
                }
            }
        }
        ArbCatalog {
            listings,
            overrides,
            rejected,
            scan_inverted,
            listed_pairs,
            default_pairs,
            other_pairs: Mutex::default(),
            book_keys,
            pair_keys,
            book_pairs,
            slots: Mutex::default(),
            loaded: Instant::now(),
        }
    }

    /// The default pair at `index` (see [`ArbCatalog::pairs_of_books`]).
    pub fn pair(&self, index: usize) -> MarketPair<'_> {
        let p = &self.default_pairs[index];
        MarketPair {
            venue_a: &self.listings[p.a],
            venue_b: &self.listings[p.b],
            kind: Cow::Borrowed(&p.kind),
            event_id: Cow::Borrowed(&p.event_id),
        }
    }

    /// The default pairs that read any of `keys`, ascending and without repeats: what a change of those
    /// books can change.
    pub fn pairs_of_books<'k>(&self, keys: impl IntoIterator<Item = &'k BookKey>) -> Vec<u32> {
        let mut out: Vec<u32> = keys
            .into_iter()
            .filter_map(|k| self.book_pairs.get(k))
            .flatten()
            .copied()
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The default pairs' books as slots of `live`, resolved on first use and again when `live` renumbered
    /// its slots (rare) or is another map. Resolving takes the live books' write lock once.
    pub fn pair_slots(&self, live: &LiveBooks) -> Arc<PairSlots> {
        let mut cached = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = cached.as_ref()
            && s.live_id == live.id()
            && s.epoch == live.epoch()
        {
            return s.clone();
        }
        let resolved = live.resolve(self.pair_keys.iter().flatten().flatten());
        let mut it = resolved.slots.into_iter();
        let slots = self
            .pair_keys
            .iter()
            .map(|keys| keys.each_ref().map(|k| k.as_ref().and_then(|_| it.next())))
            .collect();
        let s = Arc::new(PairSlots {
            live_id: resolved.live_id,
            epoch: resolved.epoch,
            slots,
        });
        *cached = Some(s.clone());
        s
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
            let mut idx = pair_indexes(
                &self.listings,
                &self.overrides,
                &self.rejected,
                self.scan_inverted,
                window_tolerance_seconds,
            );
            idx.retain(|p| p.skip.is_none());
            let idx = Arc::new(idx);
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

    /// Number of scanned pairs at the default tolerance.
    pub fn pair_count(&self) -> usize {
        self.default_pairs.len()
    }

    /// Every pair formed at the default tolerance, scanned or not, in `event_id` order, each with why it is
    /// not scanned (`None`: scanned).
    pub fn listed_pairs(&self) -> impl Iterator<Item = (MarketPair<'_>, Option<SkipReason>)> {
        self.listed_pairs.iter().map(|p| {
            (
                MarketPair {
                    venue_a: &self.listings[p.a],
                    venue_b: &self.listings[p.b],
                    kind: Cow::Borrowed(&p.kind),
                    event_id: Cow::Borrowed(&p.event_id),
                },
                p.skip,
            )
        })
    }

    /// The operator's reason for rejecting the pair of these two markets: `None` when the pair is not
    /// rejected, `Some(None)` when rejected without a reason.
    pub fn rejection(&self, venue_a_market_id: &str, venue_b_market_id: &str) -> Option<Option<&str>> {
        let key = PairOverride {
            venue_a_market_id: venue_a_market_id.to_string(),
            venue_b_market_id: venue_b_market_id.to_string(),
        };
        self.rejected.get(&key).map(Option::as_deref)
    }
}

/// Ticker or token id → live-book key (foldhash, as the live books' index: the keys are ours, not callers').
pub(super) type KeyMap = HashMap<String, BookKey, foldhash::fast::RandomState>;

/// The cached [`ArbCatalog`], shared by the scanner and the routes.
#[derive(Debug)]
pub struct ArbCache {
    current: RwLock<Option<Arc<ArbCatalog>>>,
    /// Serialises reloads, so a burst of requests after expiry reads the store once.
    reload: tokio::sync::Mutex<()>,
    /// Set while a background reload runs, so an expired catalog starts one reload, not one per use.
    refreshing: std::sync::atomic::AtomicBool,
    /// Counts the catalogs installed, for a reader that waits for the next one ([`ArbCache::installed`]).
    generation: tokio::sync::watch::Sender<u64>,
    ttl: Duration,
    /// `arbitrage_scan_inverted_pairs`, applied to every catalog loaded.
    scan_inverted: bool,
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
            refreshing: std::sync::atomic::AtomicBool::new(false),
            generation: tokio::sync::watch::Sender::new(0),
            ttl,
            scan_inverted: false,
        }
    }

    /// The cache with pairs whose YES outcomes differ scanned (`true`) or only listed (`false`, the default).
    pub fn scanning_inverted_pairs(mut self, scan: bool) -> Self {
        self.scan_inverted = scan;
        self
    }

    fn fresh(&self) -> Option<Arc<ArbCatalog>> {
        let cur = self.current.read().unwrap_or_else(|e| e.into_inner());
        cur.as_ref().filter(|c| c.loaded.elapsed() < self.ttl).cloned()
    }

    /// The catalog. Read from the store when there is none (first use, or [`ArbCache::invalidate`]); when
    /// the cached one is older than the TTL, it is still returned while a reload runs in the background.
    /// Reading and indexing the catalog takes tens of milliseconds at scale, and the scanner's re-pricing
    /// of a book change (as the routes) must not wait for it.
    pub async fn catalog(self: &Arc<Self>, store: &Arc<dyn Store>) -> StoreResult<Arc<ArbCatalog>> {
        if let Some(c) = self.fresh() {
            return Ok(c);
        }
        let stale = self.current.read().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(stale) = stale {
            self.reload_in_background(store);
            return Ok(stale);
        }
        let _guard = self.reload.lock().await;
        if let Some(c) = self.fresh() {
            return Ok(c);
        }
        self.load(store.as_ref()).await
    }

    /// Starts reading the catalog again in the background (unless a reload already runs); the current one
    /// stays in use until the new one is installed. The scanner calls it after a catalog sync.
    pub fn reload_in_background(self: &Arc<Self>, store: &Arc<dyn Store>) {
        if self.refreshing.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return;
        }
        let (cache, store) = (self.clone(), store.clone());
        tokio::spawn(async move {
            let guard = cache.reload.lock().await;
            if let Err(e) = cache.load(store.as_ref()).await {
                tracing::warn!(error = %e, "arbitrage: cannot reload the catalog; the previous one stays in use");
            }
            drop(guard);
            cache.refreshing.store(false, std::sync::atomic::Ordering::Release);
        });
    }

    /// Reads the catalog from the store and installs it; callers hold `reload`.
    async fn load(&self, store: &dyn Store) -> StoreResult<Arc<ArbCatalog>> {
        let (listings, overrides, rejections) = tokio::try_join!(
            store.arbitrage_listings(),
            store.pair_overrides(),
            store.pair_rejections()
        )?;
        let catalog = Arc::new(ArbCatalog::with_rejections(
            listings,
            overrides.into_iter().map(|o| o.pair).collect(),
            rejections.into_iter().map(|r| (r.pair, r.reason)).collect(),
            self.scan_inverted,
        ));
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Some(catalog.clone());
        self.generation.send_modify(|g| *g += 1);
        Ok(catalog)
    }

    /// A receiver that sees each catalog installed from the store.
    pub fn installed(&self) -> tokio::sync::watch::Receiver<u64> {
        self.generation.subscribe()
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
