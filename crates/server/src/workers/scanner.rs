//! The arbitrage scanner worker (spec 4.3, 6.1; contracts §6): the loop only. The catalog, the live scan and
//! the rendering are the [`crate::arbitrage`] service's, shared with `/v1/arbitrage/current`; the scanner
//! prices with the defaults and `min_net_cents = 0`, capturing the top 5 ask levels.
//!
//! # Event-driven re-pricing
//! The scanner listens to the bus. A [`DomainEvent::BookUpdated`] or [`DomainEvent::BooksStale`] re-prices
//! only the pairs that read those books ([`ArbCatalog::pairs_of_books`], an index built once per catalog),
//! through the same pricing as a full pass ([`scan_live_pairs`]). Before re-pricing, everything already
//! queued on the bus is drained, so a burst of changes to one book re-prices its pairs once.
//!
//! A [`RecvError::Lagged`] receiver lost events, hence book changes: it runs a full pass, so nothing is
//! silently missed. A catalog sync runs a full pass and reloads the catalog in the background
//! ([`ArbCache::reload_in_background`]): re-pricing goes on with the held catalog meanwhile (reading and
//! indexing it takes tens of milliseconds at scale), and a second full pass prices the new one when it is in
//! (new pairs may already cross).
//!
//! # The periodic pass (the safety net)
//! Every `scan_interval_ms` a full pass prices every pair. It is what expires opportunities whose books went
//! stale without an event (staleness is time, not a change) or whose window ended, and it extends the
//! `last_seen_at` of the episodes still showing.
//!
//! # What a pricing feeds (a re-pricing or a full pass, the same way)
//! 1. [`EpisodeBook::observe`]: a detection within 120 s of its episode's last sighting extends it, else opens
//!    one;
//! 2. [`Cooldown::select`]: opportunities at or above `webhook_min_net_cents` whose episode key was not
//!    published in the last `opportunity_cooldown_seconds` are published as
//!    [`DomainEvent::ArbitrageOpportunity`] (with the captured books; each consumer renders what it needs);
//! 3. [`Visible`]: [`DomainEvent::ArbitrageChanged`] for each opportunity that opened, changed (net or
//!    executable size) or closed, for the live stream.
//!
//! # Episode writes are batched
//! Episode changes are written with [`ArbitrageStore::record_episodes`] in batches, not per change: a busy
//! book changes many times a second and each change would otherwise be one database write. Changes wait at
//! most [`FLUSH_EVERY`] (or until the next full pass, which writes synchronously, or shutdown), merged per
//! episode (the latest state wins; the store upserts on the episode's identity). A failed write is logged
//! and its episodes stay queued for the next flush, unless a newer state of them replaced them.
//!
//! So a re-pricing publishes at once and its episode reaches the history within [`FLUSH_EVERY`]; a full
//! pass writes first and then publishes, as before.
//!
//! At start the episode book is restored from the store (episodes last seen within the gap), so a restart
//! extends the episodes in progress instead of opening duplicates.
//!
//! [`ArbitrageStore::record_episodes`]: crossbook_store::ArbitrageStore::record_episodes
//! [`ArbCache::reload_in_background`]: crate::arbitrage::ArbCache::reload_in_background
//! [`ArbCatalog::pairs_of_books`]: crate::arbitrage::ArbCatalog::pairs_of_books

use std::{
    collections::HashMap,
    sync::Arc,
    time::{Duration, Instant},
};

use crossbook_core::{
    Timestamp,
    arb::{
        Cooldown, EPISODE_GAP_SECONDS, Episode, EpisodeBook, EpisodeKey, MicroUsd, Opportunity, PairId, ScanParams,
        Visible,
    },
};
use crossbook_live::{BookKey, DomainEvent};
use crossbook_store::{StoreResult, WriteKind};
use tokio::sync::broadcast::{
    Receiver,
    error::{RecvError, TryRecvError},
};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::{
    AppState,
    arbitrage::{ArbCatalog, scan_live, scan_live_pairs},
};

/// Longest time an episode change waits before it is written. Short enough that the history trails the
/// live opportunities by a fraction of a second; long enough that a book changing every few milliseconds
/// costs a handful of writes a second, not one per change.
pub const FLUSH_EVERY: Duration = Duration::from_millis(200);

/// How the scanner runs.
#[derive(Clone)]
pub struct Settings {
    /// Time between two full passes (`scan_interval_ms`).
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

/// What one pricing (a full pass or a re-pricing) did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Whether every pair was priced (periodic pass, lagged bus, catalog sync).
    pub full: bool,
    /// Pairs priced.
    pub pairs: usize,
    /// Opportunities found.
    pub opportunities: usize,
    /// Episodes opened and extended.
    pub opened: usize,
    pub extended: usize,
    /// Opportunities published on the bus (`arbitrage.opportunity`).
    pub published: usize,
    /// Opportunity changes published on the bus (opened, changed, closed).
    pub changes: usize,
}

/// The scanner's state between pricings.
pub struct Scanner {
    state: AppState,
    settings: Settings,
    episodes: EpisodeBook,
    cooldown: Cooldown,
    visible: Visible,
    /// Episode changes not written yet, by episode identity (see the module docs).
    pending: HashMap<(EpisodeKey, Timestamp), Episode>,
    /// When `pending` must be written by; `None` when it is empty.
    flush_due: Option<tokio::time::Instant>,
    /// Catalogs installed, and the count at the last catalog sync while the reload it started is awaited.
    catalogs: tokio::sync::watch::Receiver<u64>,
    reload_after: Option<u64>,
}

/// Which pairs a pricing covered.
enum Priced<'a> {
    All,
    Some(&'a [PairId]),
}

impl Scanner {
    pub fn new(state: AppState, settings: Settings) -> Self {
        let cooldown = Cooldown::new(settings.cooldown_seconds);
        Scanner {
            catalogs: state.arb.installed(),
            reload_after: None,
            state,
            settings,
            episodes: EpisodeBook::new(),
            cooldown,
            visible: Visible::new(),
            pending: HashMap::new(),
            flush_due: None,
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

    /// The defaults at `now`, capturing depth, at the operator's fee rates (`venue_b_fee_rate`, the same
    /// ones `/v1/arbitrage/current` prices with).
    fn params(&self, now: Timestamp) -> ScanParams {
        ScanParams {
            include_orderbook: true,
            fees: self.state.config.venue_b_fee_rate,
            ..ScanParams::new(now)
        }
    }

    async fn catalog(&self) -> Option<Arc<ArbCatalog>> {
        match self.state.arb.catalog(&self.state.store).await {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::warn!(error = %e, "arbitrage scanner: cannot read the catalog; skipping this pricing");
                None
            }
        }
    }

    /// One full pass at the settings' clock: every pair priced, then the episode changes queued so far
    /// written (see the module docs). Store failures are logged, not returned.
    pub async fn pass(&mut self) -> PassReport {
        let started = Instant::now();
        let report = self.pass_untimed().await;
        metrics::histogram!("crossbook_arbitrage_scan_seconds").record(started.elapsed().as_secs_f64());
        report
    }

    async fn pass_untimed(&mut self) -> PassReport {
        let now = (self.settings.clock)();
        let Some(catalog) = self.catalog().await else {
            return PassReport::default();
        };
        let opps = scan_live(&catalog, &self.state.live, &self.params(now));
        let (mut report, events) = self.apply(opps, Priced::All, now);
        report.pairs = catalog.pair_count();
        // Written before it is published, so a consumer of the publication finds the episode in the
        // history (a re-pricing publishes at once and writes within `FLUSH_EVERY`).
        self.flush().await;
        self.publish(events);
        report
    }

    /// Re-prices the pairs that read any of `keys` (books that changed or went stale), at the settings'
    /// clock. The episode changes are queued, not written (see [`Scanner::flush`]).
    pub async fn reprice_books(&mut self, keys: &[BookKey]) -> PassReport {
        let now = (self.settings.clock)();
        let Some(catalog) = self.catalog().await else {
            return PassReport::default();
        };
        let pairs = catalog.pairs_of_books(keys);
        if pairs.is_empty() {
            return PassReport::default();
        }
        let opps = scan_live_pairs(&catalog, &self.state.live, &self.params(now), &pairs);
        let ids: Vec<PairId> = pairs
            .iter()
            .map(|&i| {
                let p = catalog.pair(i as usize);
                (p.event_id.to_string(), p.outcome_key().to_string())
            })
            .collect();
        let (mut report, events) = self.apply(opps, Priced::Some(&ids), now);
        report.pairs = pairs.len();
        self.publish(events);
        report
    }

    fn publish(&self, events: Vec<DomainEvent>) {
        for e in events {
            self.state.bus.publish(e);
        }
    }

    /// Feeds one pricing's opportunities to the episodes (queued for writing), the cooldown and the change
    /// tracker; returns the report and the bus events to publish.
    fn apply(&mut self, opps: Vec<Opportunity>, priced: Priced<'_>, now: Timestamp) -> (PassReport, Vec<DomainEvent>) {
        let changes = self.episodes.observe(&opps, now);
        let opened = changes.iter().filter(|c| c.is_opened()).count();
        for c in changes.iter().filter(|c| c.is_opened()) {
            let o = &c.episode().opportunity;
            tracing::info!(
                event = %o.event_title,
                label = %o.label,
                buy_yes = %o.buy_yes_market,
                buy_no = %o.buy_no_market,
                // For reading only: the money itself stays in integer micro-dollars.
                net_cents = o.net.cents_f64(),
                size = %o.executable_size,
                "arbitrage opportunity opened"
            );
        }
        let episodes: Vec<Episode> = changes.into_iter().map(|c| c.episode().clone()).collect();
        let publish = self.cooldown.select(&opps, self.settings.webhook_min_net, now);
        let mut events: Vec<DomainEvent> = publish
            .iter()
            .map(|o| DomainEvent::ArbitrageOpportunity(Arc::new((*o).clone())))
            .collect();
        let visible = match priced {
            Priced::All => self.visible.update_all(&episodes),
            Priced::Some(pairs) => self.visible.update(pairs, &episodes),
        };
        let n_changes = visible.len();
        events.extend(visible.into_iter().map(|c| DomainEvent::ArbitrageChanged(Arc::new(c))));
        let extended = episodes.len() - opened;
        if !episodes.is_empty() && self.flush_due.is_none() {
            self.flush_due = Some(tokio::time::Instant::now() + FLUSH_EVERY);
        }
        for e in episodes {
            self.pending.insert((e.key.clone(), e.first_seen_at), e);
        }
        metrics::gauge!("crossbook_arbitrage_opportunities").set(self.visible.len() as f64);
        let report = PassReport {
            full: matches!(priced, Priced::All),
            pairs: 0,
            opportunities: opps.len(),
            opened,
            extended,
            published: publish.len(),
            changes: n_changes,
        };
        (report, events)
    }

    /// Writes the queued episode changes in one batch. On failure they stay queued (a newer state of the
    /// same episode, queued meanwhile, wins) and are tried again after [`FLUSH_EVERY`].
    pub async fn flush(&mut self) {
        self.flush_due = None;
        if self.pending.is_empty() {
            return;
        }
        let batch: Vec<Episode> = std::mem::take(&mut self.pending).into_values().collect();
        let health = self.state.store.write_health();
        if let Err(e) = health.report(WriteKind::Episodes, self.state.store.record_episodes(&batch).await) {
            tracing::warn!(error = %e, episodes = batch.len(), "arbitrage scanner: cannot record episodes; retrying");
            for ep in batch {
                self.pending.entry((ep.key.clone(), ep.first_seen_at)).or_insert(ep);
            }
            self.flush_due = Some(tokio::time::Instant::now() + FLUSH_EVERY);
        }
    }

    /// Number of episode changes waiting for [`Scanner::flush`].
    pub fn pending_writes(&self) -> usize {
        self.pending.len()
    }

    /// Handles whatever is queued on `events` now, without waiting: drains it, then re-prices the pairs of
    /// the books that changed once (or runs one full pass if the receiver lagged or a catalog sync was
    /// heard). `None` when nothing needed pricing.
    pub async fn drain_bus(&mut self, events: &mut Receiver<DomainEvent>) -> Option<PassReport> {
        self.price_batch(Batch::of(None, events)).await
    }

    async fn price_batch(&mut self, batch: Batch) -> Option<PassReport> {
        if batch.catalog_synced {
            // In the background: re-pricing goes on with the held catalog until the new one is in, then a
            // full pass prices the new one (see `run`).
            self.reload_after = Some(*self.catalogs.borrow_and_update());
            self.state.arb.reload_in_background(&self.state.store);
        }
        if batch.full {
            return Some(self.pass().await);
        }
        if batch.keys.is_empty() {
            return None;
        }
        let keys: Vec<BookKey> = batch.keys.into_iter().collect();
        let started = Instant::now();
        let r = self.reprice_books(&keys).await;
        metrics::histogram!("crossbook_arbitrage_reprice_seconds").record(started.elapsed().as_secs_f64());
        Some(r)
    }

    /// Runs until `cancel`: re-pricing on book events, a full pass every `interval`, episode writes at most
    /// [`FLUSH_EVERY`] apart. `events` must be subscribed before the first book change the scanner should
    /// see (see [`spawn_with`]).
    pub async fn run(mut self, mut events: Receiver<DomainEvent>, cancel: CancellationToken) {
        match self.restore().await {
            Ok(n) if n > 0 => tracing::info!(episodes = n, "arbitrage scanner resumed the episodes in progress"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "arbitrage scanner: cannot resume episodes"),
        }
        let mut listening = true;
        let mut tick = tokio::time::interval(self.settings.interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let flush_at = self.flush_due;
            tokio::select! {
                _ = cancel.cancelled() => {
                    self.flush().await;
                    return;
                }
                _ = tick.tick() => {
                    self.pass().await;
                }
                _ = tokio::time::sleep_until(flush_at.unwrap_or_else(tokio::time::Instant::now)), if flush_at.is_some() => {
                    self.flush().await;
                }
                changed = self.catalogs.changed(), if self.reload_after.is_some() => {
                    if changed.is_err() || Some(*self.catalogs.borrow_and_update()) != self.reload_after {
                        self.reload_after = None;
                        self.pass().await;
                    }
                }
                ev = events.recv(), if listening => {
                    let batch = Batch::of(Some(ev), &mut events);
                    // The sender lives in the state, so a closed bus does not happen; the periodic pass and
                    // the catalog TTL still run without it.
                    listening = !batch.closed;
                    self.price_batch(batch).await;
                }
            }
        }
    }
}

/// What a drain of the bus asks for.
#[derive(Default)]
struct Batch {
    /// Books that changed or went stale (a set: a burst on one book counts once).
    keys: std::collections::HashSet<BookKey>,
    /// Run a full pass (lagged receiver, catalog sync).
    full: bool,
    catalog_synced: bool,
    closed: bool,
}

impl Batch {
    /// `first` (an event just received, if any) and everything queued after it.
    fn of(first: Option<Result<DomainEvent, RecvError>>, events: &mut Receiver<DomainEvent>) -> Batch {
        let mut batch = Batch::default();
        if let Some(ev) = first {
            batch.add(ev);
        }
        batch.drain(events);
        batch
    }

    fn add(&mut self, ev: Result<DomainEvent, RecvError>) {
        match ev {
            Ok(DomainEvent::BookUpdated(c)) => {
                self.keys.insert(c.key.clone());
            }
            Ok(DomainEvent::BooksStale { keys, .. }) => self.keys.extend(keys),
            Ok(DomainEvent::CatalogSynced { .. }) => {
                self.catalog_synced = true;
                self.full = true;
            }
            Ok(_) => {}
            // Events were lost, book changes among them: only a full pass is sure to see them.
            Err(RecvError::Lagged(n)) => {
                tracing::warn!(
                    skipped = n,
                    "arbitrage scanner lagged behind the bus; running a full pass"
                );
                metrics::counter!("crossbook_arbitrage_scanner_lagged_total").increment(1);
                self.full = true;
            }
            Err(RecvError::Closed) => self.closed = true,
        }
    }

    /// Adds everything already queued, without waiting.
    fn drain(&mut self, events: &mut Receiver<DomainEvent>) {
        loop {
            match events.try_recv() {
                Ok(ev) => self.add(Ok(ev)),
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Lagged(n)) => self.add(Err(RecvError::Lagged(n))),
                Err(TryRecvError::Closed) => {
                    self.closed = true;
                    return;
                }
            }
        }
    }
}

/// Starts the scanner for the service's configuration.
pub fn spawn(state: &AppState, tracker: &TaskTracker, cancel: &CancellationToken) {
    spawn_with(state, Settings::from_config(&state.config), tracker, cancel);
}

/// Starts the scanner with explicit settings. It subscribes to the bus before returning, so every book
/// change published after this call reaches it.
pub fn spawn_with(state: &AppState, settings: Settings, tracker: &TaskTracker, cancel: &CancellationToken) {
    let events = state.bus.subscribe();
    let scanner = Scanner::new(state.clone(), settings);
    tracker.spawn(scanner.run(events, cancel.clone()));
}
