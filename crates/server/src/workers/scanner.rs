//! The arbitrage scanner worker (spec 4.3, 6.1; contracts §6): the loop only. The catalog, the live scan and
//! the rendering are the [`crate::arbitrage`] service's, shared with `/v1/arbitrage/current`; the scanner
//! scans every `scan_interval_ms` with the defaults and `min_net_cents = 0`.
//!
//! # A pass
//! 1. scan at `now` (books older than 30 s drop their pair; the top 5 ask levels are captured);
//! 2. [`EpisodeBook::observe`]: a detection within 120 s of its episode's last sighting extends it, else opens
//!    one; the changes are written in one batch ([`ArbitrageStore::record_episodes`]). A failed write is
//!    logged; the next pass writes the same episodes again (upserts), so nothing is lost for long;
//! 3. [`Cooldown::select`]: opportunities at or above `webhook_min_net_cents` whose episode key was not
//!    published in the last `opportunity_cooldown_seconds` are published as
//!    [`DomainEvent::ArbitrageOpportunity`] (with the captured books; each consumer renders what it needs).
//!
//! A catalog sync heard on the bus invalidates the cached catalog ([`ArbCache::invalidate`]). At start the
//! episode book is restored from the store (episodes last seen within the gap), so a restart extends the
//! episodes in progress instead of opening duplicates.
//!
//! [`ArbitrageStore::record_episodes`]: crossbook_store::ArbitrageStore::record_episodes
//! [`ArbCache::invalidate`]: crate::arbitrage::ArbCache::invalidate

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use crossbook_core::{
    Timestamp,
    arb::{Cooldown, EPISODE_GAP_SECONDS, EpisodeBook, MicroUsd, ScanParams},
};
use crossbook_store::StoreResult;
use crossbook_venues::DomainEvent;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::{AppState, arbitrage::scan_live};

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
                .publish(DomainEvent::ArbitrageOpportunity(Arc::new((*o).clone())));
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
