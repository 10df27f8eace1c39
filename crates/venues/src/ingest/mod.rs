//! Ingestion: per venue, a set of cancellable workers that keep the store, the live books, the bus and
//! the health map up to date.
//!
//! ```text
//!                 ┌ catalog ──(MarketSet watch)──┬─> feed (WebSocket, or REST polling) ─┬─> LiveBooks, bus
//!  per venue:     │  ^ follow requests           └─> trades (REST tape / backfill) ──┐ ├─> book writer ──┐
//!                 └ follow ──(upsert, add)─────────────────────────────────────────┘ └─> trade writer ─┴─> store
//! ```
//!
//! - **catalog** syncs series/events/markets every `catalog_sync_seconds` (and in between applies the
//!   feed's announcements of a listed or resolved followed market to that market alone), upserts them with `seen_at = now` (the store keeps the first as
//!   `discovered_at`), refreshes markets that left the listings so their status and settlement follow the
//!   venue, and publishes the followed [`MarketSet`].
//! - **feed** holds the WebSocket: reconnects with jittered exponential backoff that resets once data
//!   flows, and a watchdog that resubscribes when the socket stays open but goes silent for
//!   `feed_silence_seconds` (and reconnects if the resubscription brings nothing either). Without a
//!   WebSocket (venue_a without credentials) it polls the REST books within the venue's rate limit.
//! - **trades** reads the REST tape: continuously where the socket has no trade ids (venue_b) or while the
//!   socket is down, and as a backfill after each reconnect or trade-sequence gap.
//! - **follow** serves [`IngestHandle::follow_event`].
//! - Two shared writers: the book writer appends every book change and every loss of continuity to the
//!   book event log, the trade writer stores trades and publishes only the new ones on the bus. `compaction` merges the
//!   log's small chunks in the background.
//!
//! Files: `catalog` (catalog sync and follow), `feed` (WebSocket, and applying updates), `polling`
//! (REST books), `trades` (the tape), `book_writer` and `writer` (the book and trade writers).
//!
//! Malformed messages are logged with their payload, counted (`crossbook_venue_malformed_total`) and
//! skipped; the feed goes on.

use std::{
    collections::{BTreeSet, HashMap},
    sync::{
        Arc, Mutex,
        atomic::{AtomicI64, Ordering},
    },
    time::Duration,
};

use crossbook_core::{Event, Exchange, Trade, book::KeyframePolicy};
use crossbook_store::{Store, StoreError};
use tokio::sync::{Notify, mpsc, oneshot, watch};
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::{debug, info, warn};

use crate::{
    backoff::BackoffPolicy,
    error::VenueError,
    health::VenueHealth,
    rest::ensure_crypto_provider,
    venue::{CatalogNotice, MarketSet, Venue},
    venue_a::{VenueA, VenueAConfig},
    venue_b::{VenueB, VenueBConfig},
};
use crossbook_live::{Bus, LiveBooks};

use self::{
    book_writer::{BookInput, book_writer},
    catalog::{catalog_worker, follow_worker},
    feed::feed_worker,
    trades::trade_worker,
    writer::trade_writer,
};

/// Splits a comma-separated configuration list (`"KXBTC15M, KXBTCD,"`) into its non-empty items.
pub fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// What ingestion needs to know. The first group of fields mirrors `config.default.toml` key for key
/// (series lists split with [`split_list`]); the rest are tuning knobs with sensible defaults.
#[derive(Debug, Clone)]
pub struct IngestConfig {
    /// Run the venue_a connector.
    pub venue_a_enabled: bool,
    /// REST base, e.g. `https://external-api.kalshi.com/trade-api/v2`.
    pub venue_a_rest_url: String,
    /// WebSocket URL; its path is what the handshake signs.
    pub venue_a_ws_url: String,
    /// Empty = no credentials (REST polling instead of the WebSocket).
    pub venue_a_key_id: String,
    /// PEM file of the RSA key; empty = no credentials.
    pub venue_a_private_key_file: String,
    /// Series tickers; empty = every open event.
    pub venue_a_series: Vec<String>,

    /// Run the venue_b connector.
    pub venue_b_enabled: bool,
    /// Gamma (metadata) base URL.
    pub venue_b_gamma_url: String,
    /// CLOB (books) base URL.
    pub venue_b_clob_url: String,
    /// Data API (public trade tape) base URL.
    pub venue_b_data_url: String,
    /// Market-channel WebSocket URL.
    pub venue_b_ws_url: String,
    /// Gamma series (or tag) slugs; empty = every active event.
    pub venue_b_series: Vec<String>,

    /// Seconds between catalog syncs.
    pub catalog_sync_seconds: u64,
    /// A socket with no data for this long is resubscribed (then reconnected).
    pub feed_silence_seconds: u64,
    /// Markets one venue_a socket follows at most; more markets open more sockets.
    pub venue_a_ws_markets_per_connection: usize,
    /// Assets (tokens, two per market) one venue_b socket follows at most; more open more sockets.
    pub venue_b_ws_assets_per_connection: usize,
    /// A socket whose subscriptions bring no market data for this long, though keepalives still come, is
    /// resubscribed (a dead subscription on a live socket); 0 = never.
    pub feed_data_silence_seconds: u64,

    /// REST requests per second, venue_a (Basic tier: 20 reads/s; half of it leaves room).
    pub venue_a_requests_per_second: u32,
    /// REST requests per second, venue_b (limits are per 10 s and far higher).
    pub venue_b_requests_per_second: u32,
    /// Milliseconds between trade-tape reads where trades are polled.
    pub trade_poll_ms: u64,
    /// Milliseconds between two rounds of REST book polling (venue_a without credentials).
    pub book_poll_ms: u64,
    /// How far back the first trade read (and a backfill after a long outage) reaches.
    pub trade_backfill_seconds: u64,
    /// First and largest reconnect delay.
    pub reconnect_initial_ms: u64,
    /// Cap of the (jittered, exponential) reconnect delay.
    pub reconnect_max_ms: u64,
    /// Book events, and separately trades, kept in memory for another try while the store refuses writes;
    /// past it they are dropped (counted, and each book affected gets a `write_failed` capture gap).
    pub write_buffer: usize,
}

impl Default for IngestConfig {
    /// The tuning knobs at their defaults, with no endpoints: the endpoints, series and intervals are the
    /// keys of the server's `config.default.toml`, which is their one source of defaults, so they are left
    /// empty (zero intervals run at their minimum) for the caller to set. The per-connection limits start
    /// at the venues' own figures and the data-silence limit off.
    fn default() -> Self {
        IngestConfig {
            venue_a_enabled: true,
            venue_a_rest_url: String::new(),
            venue_a_ws_url: String::new(),
            venue_a_key_id: String::new(),
            venue_a_private_key_file: String::new(),
            venue_a_series: Vec::new(),
            venue_b_enabled: true,
            venue_b_gamma_url: String::new(),
            venue_b_clob_url: String::new(),
            venue_b_data_url: String::new(),
            venue_b_ws_url: String::new(),
            venue_b_series: Vec::new(),
            catalog_sync_seconds: 0,
            feed_silence_seconds: 0,
            venue_a_ws_markets_per_connection: 1_000,
            venue_b_ws_assets_per_connection: 500,
            feed_data_silence_seconds: 0,
            venue_a_requests_per_second: 10,
            venue_b_requests_per_second: 20,
            trade_poll_ms: 2000,
            book_poll_ms: 1000,
            trade_backfill_seconds: 900,
            reconnect_initial_ms: 500,
            reconnect_max_ms: 30_000,
            write_buffer: book_writer::MAX_UNWRITTEN_EVENTS,
        }
    }
}

impl IngestConfig {
    fn venue_a(&self) -> VenueAConfig {
        let opt = |s: &str| Some(s.trim().to_string()).filter(|s| !s.is_empty());
        VenueAConfig {
            rest_url: self.venue_a_rest_url.clone(),
            ws_url: self.venue_a_ws_url.clone(),
            key_id: opt(&self.venue_a_key_id),
            private_key_file: opt(&self.venue_a_private_key_file).map(Into::into),
            series: self.venue_a_series.clone(),
            requests_per_second: self.venue_a_requests_per_second,
        }
    }

    fn venue_b(&self) -> VenueBConfig {
        VenueBConfig {
            gamma_url: self.venue_b_gamma_url.clone(),
            clob_url: self.venue_b_clob_url.clone(),
            data_url: self.venue_b_data_url.clone(),
            ws_url: self.venue_b_ws_url.clone(),
            series: self.venue_b_series.clone(),
            requests_per_second: self.venue_b_requests_per_second,
        }
    }

    fn settings(&self) -> Settings {
        let ms = Duration::from_millis;
        Settings {
            catalog_sync: Duration::from_secs(self.catalog_sync_seconds.max(1)),
            feed_silence: Duration::from_secs(self.feed_silence_seconds.max(1)),
            venue_a_per_connection: self.venue_a_ws_markets_per_connection.max(1),
            venue_b_per_connection: self.venue_b_ws_assets_per_connection.max(1),
            data_silence: (self.feed_data_silence_seconds > 0)
                .then(|| Duration::from_secs(self.feed_data_silence_seconds)),
            trade_poll: ms(self.trade_poll_ms.max(100)),
            book_poll: ms(self.book_poll_ms.max(100)),
            trade_backfill: Duration::from_secs(self.trade_backfill_seconds),
            reconnect: BackoffPolicy {
                initial: ms(self.reconnect_initial_ms.max(1)),
                max: ms(self.reconnect_max_ms.max(self.reconnect_initial_ms.max(1))),
            },
        }
    }
}

/// The durations the workers use.
#[derive(Debug, Clone, Copy)]
struct Settings {
    catalog_sync: Duration,
    feed_silence: Duration,
    /// Books one socket carries at most (venue_a: markets, venue_b: tokens).
    venue_a_per_connection: usize,
    venue_b_per_connection: usize,
    /// No market data for this long on a socket that is otherwise alive: resubscribe it.
    data_silence: Option<Duration>,
    trade_poll: Duration,
    book_poll: Duration,
    trade_backfill: Duration,
    reconnect: BackoffPolicy,
}

/// Why [`IngestHandle::follow_event`] failed.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    #[error("ingestion of {0} is not running")]
    NotRunning(Exchange),
    #[error(transparent)]
    Venue(#[from] VenueError),
    #[error("cannot store the event: {0}")]
    Store(#[from] StoreError),
}

struct FollowRequest {
    event_id: String,
    reply: oneshot::Sender<Result<Option<Event>, FollowError>>,
}

/// Handle to running ingestion; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct IngestHandle {
    followers: HashMap<Exchange, mpsc::Sender<FollowRequest>>,
}

impl std::fmt::Debug for FollowRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FollowRequest")
            .field("event_id", &self.event_id)
            .finish()
    }
}

impl IngestHandle {
    /// Starts following an event the configured series do not cover (a whale watchlist entry): reads it
    /// from the venue, stores it with its series and markets, and adds its markets to the feed. Later
    /// catalog syncs keep it fresh. `Ok(None)` when the venue does not know the event. venue_b accepts the
    /// Gamma id or the slug.
    pub async fn follow_event(&self, exchange: Exchange, event_id: &str) -> Result<Option<Event>, FollowError> {
        let tx = self.followers.get(&exchange).ok_or(FollowError::NotRunning(exchange))?;
        let (reply, rx) = oneshot::channel();
        tx.send(FollowRequest {
            event_id: event_id.to_string(),
            reply,
        })
        .await
        .map_err(|_| FollowError::NotRunning(exchange))?;
        rx.await.map_err(|_| FollowError::NotRunning(exchange))?
    }

    /// The venues being ingested.
    pub fn exchanges(&self) -> Vec<Exchange> {
        let mut v: Vec<Exchange> = self.followers.keys().copied().collect();
        v.sort();
        v
    }
}

/// Entry point of ingestion.
pub struct Ingest;

/// Book changes queued for the book writer. A full queue makes the feeds wait (nothing is dropped); the
/// writer keeps draining it while the database is down, up to its own bound.
const BOOK_QUEUE: usize = 16_384;
const TRADE_QUEUE: usize = 1_024;

impl Ingest {
    /// Starts ingestion of the enabled venues on `tracker` (call it inside a Tokio runtime); everything
    /// stops when `cancel` fires, after the writers have flushed what they hold. Fails (before starting
    /// anything) on unusable configuration, such as an unreadable venue_a key file or half-set credentials.
    pub fn start(
        cfg: IngestConfig,
        store: Arc<dyn Store>,
        live: LiveBooks,
        bus: Bus,
        health: VenueHealth,
        cancel: CancellationToken,
        tracker: &TaskTracker,
    ) -> Result<IngestHandle, VenueError> {
        let venue_a = cfg.venue_a_enabled.then(|| VenueA::new(&cfg.venue_a())).transpose()?;
        let venue_b = cfg.venue_b_enabled.then(|| VenueB::new(&cfg.venue_b())).transpose()?;
        let ctx = Ctx::start(&cfg, store, live, bus, health, cancel, tracker);
        let mut followers = HashMap::new();
        if let Some(a) = venue_a {
            if a.has_credentials() {
                info!(venue = %Exchange::VenueA, "ingesting books and trades over the signed WebSocket");
            } else {
                warn!(
                    venue = %Exchange::VenueA,
                    "no venue_a credentials (venue_a_key_id / venue_a_private_key_file): polling REST order \
                     books and trades instead of the WebSocket, within the venue's rate limits"
                );
            }
            followers.insert(Exchange::VenueA, spawn_venue(Arc::new(a), &ctx, tracker));
        }
        if let Some(b) = venue_b {
            followers.insert(Exchange::VenueB, spawn_venue(Arc::new(b), &ctx, tracker));
        }
        Ok(IngestHandle { followers })
    }

    /// Starts ingestion of one connector (any [`Venue`]) with its own writers (tests drive a single venue
    /// this way).
    #[cfg(test)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start_venue<V: Venue>(
        venue: V,
        cfg: &IngestConfig,
        store: Arc<dyn Store>,
        live: LiveBooks,
        bus: Bus,
        health: VenueHealth,
        cancel: CancellationToken,
        tracker: &TaskTracker,
    ) -> IngestHandle {
        let ctx = Ctx::start(cfg, store, live, bus, health, cancel, tracker);
        let mut followers = HashMap::new();
        followers.insert(V::EXCHANGE, spawn_venue(Arc::new(venue), &ctx, tracker));
        IngestHandle { followers }
    }
}

/// What every worker shares.
#[derive(Clone)]
struct Ctx {
    store: Arc<dyn Store>,
    live: LiveBooks,
    bus: Bus,
    health: VenueHealth,
    books: mpsc::Sender<BookInput>,
    trades: mpsc::Sender<Vec<Trade>>,
    settings: Settings,
    cancel: CancellationToken,
}

impl Ctx {
    /// The shared context, with the two writers started on `tracker`. The writers end once every worker
    /// holding this context has ended (their channels close), after writing what they hold.
    fn start(
        cfg: &IngestConfig,
        store: Arc<dyn Store>,
        live: LiveBooks,
        bus: Bus,
        health: VenueHealth,
        cancel: CancellationToken,
        tracker: &TaskTracker,
    ) -> Ctx {
        ensure_crypto_provider();
        let settings = cfg.settings();
        let (books, book_rx) = mpsc::channel(BOOK_QUEUE);
        let (trades, trade_rx) = mpsc::channel(TRADE_QUEUE);
        tracker.spawn(book_writer(
            store.clone(),
            book_rx,
            KeyframePolicy::DEFAULT,
            health.clone(),
            live.clone(),
            bus.clone(),
            cfg.write_buffer,
        ));
        tracker.spawn(trade_writer(store.clone(), bus.clone(), trade_rx, cfg.write_buffer));
        tracker.spawn(compaction::compactor(store.clone(), cancel.clone()));
        Ctx {
            store,
            live,
            bus,
            health,
            books,
            trades,
            settings,
            cancel,
        }
    }
}

/// What one venue's workers share.
struct Runtime<V> {
    venue: Arc<V>,
    /// The followed markets, published by the catalog and follow workers.
    markets: watch::Sender<Arc<MarketSet>>,
    /// Events followed at run time (beyond the configured series). A std mutex: held only to copy or insert,
    /// never across an `.await`.
    followed: Mutex<BTreeSet<String>>,
    /// Catalog notices from the feed (a std mutex: held only to add or take, never across an `.await`).
    notices: Mutex<catalog::Notices>,
    /// Notices are waiting.
    catalog_now: Notify,
    /// Read the trade tape now (reconnect, trade gap, fill announced).
    trades_now: Notify,
    /// Execution time (ms) of the newest trade seen; where the next tape read starts.
    latest_trade_ms: AtomicI64,
}

impl<V: Venue> Runtime<V> {
    fn note_trades(&self, trades: &[Trade]) {
        if let Some(max) = trades.iter().map(|t| t.executed_at.millis()).max() {
            self.latest_trade_ms.fetch_max(max, Ordering::Relaxed);
        }
    }

    fn followed(&self) -> BTreeSet<String> {
        self.followed.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn notices(&self) -> std::sync::MutexGuard<'_, catalog::Notices> {
        self.notices.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues the feed's catalog notices for the catalog worker.
    fn note_catalog(&self, notices: Vec<CatalogNotice>) {
        let overflow = self.notices().add(notices);
        if overflow > 0 {
            debug!(venue = %V::EXCHANGE, overflow, "too many listings waiting; the next catalog sync reads them");
        }
        self.catalog_now.notify_one();
    }
}

fn spawn_venue<V: Venue>(venue: Arc<V>, ctx: &Ctx, tracker: &TaskTracker) -> mpsc::Sender<FollowRequest> {
    let (markets, _) = watch::channel(Arc::new(MarketSet::new()));
    let rt = Arc::new(Runtime {
        venue,
        markets,
        followed: Mutex::new(BTreeSet::new()),
        notices: Mutex::default(),
        catalog_now: Notify::new(),
        trades_now: Notify::new(),
        latest_trade_ms: AtomicI64::new(0),
    });
    ctx.health.update(V::EXCHANGE, |h| h.connected = false);
    let (follow_tx, follow_rx) = mpsc::channel(64);
    tracker.spawn(catalog_worker(rt.clone(), ctx.clone()));
    tracker.spawn(follow_worker(rt.clone(), ctx.clone(), follow_rx));
    tracker.spawn(feed_worker(rt.clone(), ctx.clone()));
    tracker.spawn(trade_worker(rt, ctx.clone()));
    follow_tx
}

pub mod book_writer;
mod catalog;
pub mod compaction;
mod feed;
mod polling;
mod publish;
mod trades;
mod writer;

#[cfg(test)]
mod tests;
