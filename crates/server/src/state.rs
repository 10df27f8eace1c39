//! The shared state of the HTTP server: a small `Clone` struct of handles.

use std::{
    sync::{
        Arc, RwLock,
        atomic::{AtomicU8, Ordering},
    },
    time::Duration,
};

use crossbook_live::{Bus, LiveBooks};
use crossbook_store::Store;
use crossbook_venues::{IngestHandle, VenueHealth};
use metrics_exporter_prometheus::PrometheusHandle;

use crate::{
    access::{Gatekeeper, KeyCache, PlanTable, RateLimits},
    config::{Config, Role},
    error::ApiError,
};

/// Everything a handler or middleware needs. Cheap to clone (every field is a handle).
#[derive(Clone)]
pub struct AppState {
    /// The configuration the process started with.
    pub config: Arc<Config>,
    /// The system of record.
    pub store: Arc<dyn Store>,
    /// `X-API-Key` → owner, cached in front of [`crossbook_store::AccountStore::find_key`].
    pub keys: Arc<KeyCache>,
    /// Per-plan, per-key (and per-IP for anonymous callers) token buckets.
    pub limits: Arc<RateLimits>,
    /// What each plan may do, as configured.
    pub plans: Arc<PlanTable>,
    /// Renders `/metrics`.
    pub metrics: PrometheusHandle,
    /// Rendered search answers, valid for `search_cache_ms`.
    pub search_cache: Arc<crate::cache::ResponseCache>,
    /// Rendered `/v1/arbitrage/current` answers, valid for `arbitrage_cache_ms`.
    pub arbitrage_cache: Arc<crate::cache::ResponseCache>,
    /// The latest book of every followed market (written by ingestion, read by the scanner and
    /// `/v1/arbitrage/current`). Empty in a `--role api` process.
    pub live: LiveBooks,
    /// The in-process bus of domain events (ingestion, scanner and whale tracker publish; webhooks consume).
    pub bus: Bus,
    /// Per-venue feed health, written by ingestion, read by `/readyz`.
    pub health: VenueHealth,
    /// Running ingestion, used to follow events a watchlist adds. Set while this process is the ingest
    /// leader; empty in a `--role api` process and in a standby waiting for the ingest lock.
    pub ingest: Arc<IngestSlot>,
    /// The arbitrage catalog (listings, overrides, pairs) shared by the scanner and the arbitrage routes.
    pub arb: Arc<crate::arbitrage::ArbCache>,
    /// Webhook delivery (SSRF-guarded client, signing) and the dispatcher's registrations.
    pub webhooks: Arc<crate::webhooks::Webhooks>,
    /// The live stream's sessions and subscriptions (`/v1/stream`).
    pub stream: Arc<crate::stream::Hub>,
    /// The replays and exports running now, per customer (bounded by plan).
    pub reads: crate::api::replay::ReadSlots,
    /// The mirror of the leader's live plane, in a `--role api` process with a `bus_url`: `live` and `bus`
    /// are then fed from the bus.
    pub mirror: Option<crossbook_live::nats::mirror::MirrorStatus>,
    /// The bus publisher of this process's leadership terms, in a process that may ingest and has a `bus_url`.
    pub publisher: Option<crossbook_live::nats::publisher::PublisherStatus>,
    /// When `/readyz` first found the store unreachable, until it answers again.
    unreachable_since: Arc<std::sync::Mutex<Option<crossbook_core::Timestamp>>>,
    /// The readiness `/readyz` answered last (`None` before the first), so only its changes are logged.
    last_ready: Arc<std::sync::Mutex<Option<bool>>>,
}

impl AppState {
    /// State over an opened (and migrated) store.
    pub fn new(config: Config, store: Arc<dyn Store>) -> Self {
        let keys = KeyCache::new(Duration::from_secs(config.key_cache_seconds));
        let plans = PlanTable::from_config(&config);
        let limits = RateLimits::from_plans(&plans);
        let search_cache = crate::cache::ResponseCache::new(Duration::from_millis(config.search_cache_ms));
        let arbitrage_cache = crate::cache::ResponseCache::new(Duration::from_millis(config.arbitrage_cache_ms));
        let webhooks = crate::webhooks::Webhooks::system(&config);
        let live = LiveBooks::new();
        let health = VenueHealth::new(&live);
        let arb = crate::arbitrage::ArbCache::default().scanning_inverted_pairs(config.arbitrage_scan_inverted_pairs);
        let stream = crate::stream::Hub::new(
            crate::stream::StreamSettings::from_config(&config),
            live.clone(),
            health.clone(),
        );
        AppState {
            stream,
            reads: Default::default(),
            mirror: (config.role == Role::Api && config.bus_settings().is_some()).then(Default::default),
            publisher: (config.role != Role::Api && config.bus_settings().is_some()).then(Default::default),
            webhooks: Arc::new(webhooks),
            config: Arc::new(config),
            store,
            keys: Arc::new(keys),
            limits: Arc::new(limits),
            plans: Arc::new(plans),
            metrics: crate::metrics::prometheus(),
            search_cache: Arc::new(search_cache),
            arbitrage_cache: Arc::new(arbitrage_cache),
            live,
            bus: Bus::default(),
            health,
            ingest: Arc::new(IngestSlot::default()),
            arb: Arc::new(arb),
            unreachable_since: Arc::default(),
            last_ready: Arc::default(),
        }
    }

    /// Tracks when the store stopped answering `/readyz`'s ping: with `unreachable`, the first time it was
    /// seen so (now, if this is the first); without, forgets it. Returns the time held.
    pub fn store_unreachable_since(&self, unreachable: bool) -> Option<crossbook_core::Timestamp> {
        let mut since = self.unreachable_since.lock().unwrap_or_else(|e| e.into_inner());
        if unreachable {
            Some(*since.get_or_insert_with(crossbook_core::Timestamp::now))
        } else {
            *since = None;
            None
        }
    }
}

impl AppState {
    /// Records the readiness `/readyz` is answering; returns the one it answered before, if it differs
    /// (`None` when unchanged). The first answer counts as a change from ready, so a service that starts
    /// not ready says so once.
    pub fn readiness_changed(&self, ready: bool) -> Option<bool> {
        let mut last = self.last_ready.lock().unwrap_or_else(|e| e.into_inner());
        let before = last.replace(ready).unwrap_or(true);
        (before != ready).then_some(before)
    }
}

impl axum::extract::FromRef<AppState> for Gatekeeper {
    fn from_ref(state: &AppState) -> Gatekeeper {
        Gatekeeper {
            store: state.store.clone(),
            keys: state.keys.clone(),
            limits: state.limits.clone(),
        }
    }
}

/// A venue feed older than this makes `/readyz` answer 503.
pub const FRESHNESS_LIMIT: Duration = Duration::from_secs(60);

/// The handle of running ingestion, present while this process ingests (it is the leader). Ingestion can
/// stop and start again in one process (the ingest lock lost and taken back), hence not a `OnceLock`.
///
/// Where the process stands with the ingest lock decides whether it may answer from its live books: only
/// while ingestion runs. In a process whose leader task manages ingestion (as `serve` does for `--role all`
/// and `--role ingest`), every other [`LockStance`] holds no live data. An [`AppState`] without a leader task
/// (an embedding that feeds `live` itself, as tests and benchmarks do) answers from what it holds unless
/// marked standby.
#[derive(Debug, Default)]
pub struct IngestSlot {
    running: RwLock<Option<IngestHandle>>,
    /// A [`LockStance`].
    stance: AtomicU8,
}

/// Where this process stands with the ingest lock, as its leader task last found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum LockStance {
    /// No leader task: whoever embeds this state feeds the live books.
    Unmanaged = 0,
    /// A leader task runs and this process does not ingest yet: before its first attempt at the lock, while
    /// it starts ingestion, or between losing the lock and taking it back.
    Trying = 1,
    /// Another process holds the lock; this one waits to take over.
    Standby = 2,
    /// The last attempt at the lock failed (the database did not answer it): nobody knows which process
    /// leads until an attempt succeeds.
    Unreachable = 3,
}

impl IngestSlot {
    /// The running ingestion, if this process ingests now.
    pub fn get(&self) -> Option<IngestHandle> {
        self.running.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether this process ingests now.
    pub fn is_running(&self) -> bool {
        self.running.read().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    /// Records started ingestion.
    pub fn set(&self, handle: IngestHandle) {
        *self.running.write().unwrap_or_else(|e| e.into_inner()) = Some(handle);
    }

    /// Records that ingestion stopped.
    pub fn clear(&self) {
        *self.running.write().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Records where this process stands with the ingest lock.
    pub fn set_stance(&self, stance: LockStance) {
        self.stance.store(stance as u8, Ordering::Relaxed);
    }

    /// Where this process stands with the ingest lock.
    pub fn stance(&self) -> LockStance {
        match self.stance.load(Ordering::Relaxed) {
            1 => LockStance::Trying,
            2 => LockStance::Standby,
            3 => LockStance::Unreachable,
            _ => LockStance::Unmanaged,
        }
    }

    /// Whether this process found the ingest lock held by another and waits.
    pub fn is_standby(&self) -> bool {
        self.stance() == LockStance::Standby
    }
}

impl AppState {
    /// Why this process holds no live data, if it holds none: live books, the scanner's opportunities and the
    /// stream's feed exist only in the process that ingests. Routes that answer from them refuse with
    /// [`ApiError::LiveUnavailable`] rather than answer empty.
    pub fn live_unavailable(&self) -> Option<&'static str> {
        if self.config.role == Role::Api {
            match &self.mirror {
                None => Some(
                    "this process (--role api) has no bus: live books, current arbitrage and the live stream need \
                     bus_url (the NATS server the ingesting process publishes on), or a process that ingests and \
                     serves the API (--role all)",
                ),
                Some(m) if !m.serving() => Some(
                    "this process (--role api) has lost its bus or has not loaded the live books from it yet: \
                     live books, current arbitrage and the live stream are back once it has",
                ),
                Some(_) => None,
            }
        } else if self.ingest.is_running() {
            None
        } else {
            match self.ingest.stance() {
                // No leader task: whoever embeds this state feeds the live books.
                LockStance::Unmanaged => None,
                LockStance::Standby => Some(
                    "this process is waiting to take over ingestion from another process: live books, current \
                     arbitrage and the live stream are served by the process that ingests",
                ),
                LockStance::Unreachable => Some(
                    "this process cannot reach the ingest lock (the database did not answer; it retries every \
                     few seconds), so it does not know whether it leads: live books, current arbitrage and the \
                     live stream are served once it ingests",
                ),
                LockStance::Trying => Some(
                    "this process does not ingest yet (it is taking the ingest lock or starting ingestion): \
                     live books, current arbitrage and the live stream are served once it ingests",
                ),
            }
        }
    }

    /// [`Self::live_unavailable`] as the error a route answers.
    pub fn require_live(&self) -> Result<(), ApiError> {
        match self.live_unavailable() {
            Some(why) => Err(ApiError::LiveUnavailable {
                detail: why.to_string(),
            }),
            None => Ok(()),
        }
    }
}
