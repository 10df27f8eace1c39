//! Ingestion: per venue, a set of cancellable workers that keep the store, the live books, the bus and
//! the health map up to date.
//!
//! ```text
//!                 ┌ catalog ──(MarketSet watch)──┬─> feed (WebSocket, or REST polling) ─┬─> LiveBooks, bus
//!  per venue:     │  ^ follow requests           └─> trades (REST tape / backfill) ──┐ ├─> snapshot writer ─┐
//!                 └ follow ──(upsert, add)─────────────────────────────────────────┘ └─> trade writer ────┴─> store
//! ```
//!
//! - **catalog** syncs series/events/markets every `catalog_sync_seconds` (sooner when the feed announces a
//!   new or resolved market), upserts them with `seen_at = now` (the store keeps the first as
//!   `discovered_at`), refreshes markets that left the listings so their status and settlement follow the
//!   venue, and publishes the followed [`MarketSet`].
//! - **feed** holds the WebSocket: reconnects with jittered exponential backoff that resets once data
//!   flows, and a watchdog that resubscribes when the socket stays open but goes silent for
//!   `feed_silence_seconds` (and reconnects if the resubscription brings nothing either). Without a
//!   WebSocket (venue_a without credentials) it polls the REST books within the venue's rate limit.
//! - **trades** reads the REST tape: continuously where the socket has no trade ids (venue_b) or while the
//!   socket is down, and as a backfill after each reconnect or trade-sequence gap.
//! - **follow** serves [`IngestHandle::follow_event`].
//! - Two shared writers: one batches book snapshots (at most one per book per `snapshot_interval_ms`,
//!   the latest state wins), one stores trades and publishes only the new ones on the bus.
//!
//! Malformed messages are logged with their payload, counted (`crossbook_venue_malformed_total`) and
//! skipped; the feed goes on.

use std::{
    collections::{BTreeSet, HashMap, HashSet},
    sync::{
        Arc, Mutex,
        atomic::{AtomicI64, Ordering},
    },
    time::Duration,
};

use crossbook_core::{BookSnapshot, Event, Exchange, Market, Status, Timestamp, Trade};
use crossbook_store::{Store, StoreError};
use futures_util::{SinkExt, StreamExt};
use tokio::{
    sync::{Notify, mpsc, oneshot, watch},
    time::Instant,
};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::{debug, error, info, warn};

use crate::{
    backoff::{Backoff, BackoffPolicy},
    bus::{Bus, DomainEvent},
    error::{VenueError, report_malformed},
    health::{FeedMode, VenueHealth},
    live::{BookKey, LiveBooks},
    rest::ensure_crypto_provider,
    venue::{CatalogBatch, FeedSession, FeedUpdate, MarketSet, Venue},
    venue_a::{VenueA, VenueAConfig},
    venue_b::{VenueB, VenueBConfig},
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
    /// Minimum milliseconds between two stored snapshots of one book.
    pub snapshot_interval_ms: u64,
    /// A socket with no data for this long is resubscribed (then reconnected).
    pub feed_silence_seconds: u64,

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
}

impl Default for IngestConfig {
    /// The defaults of `config.default.toml`.
    fn default() -> Self {
        IngestConfig {
            venue_a_enabled: true,
            venue_a_rest_url: "https://external-api.kalshi.com/trade-api/v2".into(),
            venue_a_ws_url: "wss://external-api-ws.kalshi.com/trade-api/ws/v2".into(),
            venue_a_key_id: String::new(),
            venue_a_private_key_file: String::new(),
            venue_a_series: split_list("KXBTC15M,KXBTCD,KXBTC"),
            venue_b_enabled: true,
            venue_b_gamma_url: "https://gamma-api.polymarket.com".into(),
            venue_b_clob_url: "https://clob.polymarket.com".into(),
            venue_b_data_url: "https://data-api.polymarket.com".into(),
            venue_b_ws_url: "wss://ws-subscriptions-clob.polymarket.com/ws/market".into(),
            venue_b_series: split_list("btc-up-or-down-5m,btc-up-or-down-15m,btc-up-or-down-hourly"),
            catalog_sync_seconds: 60,
            snapshot_interval_ms: 1000,
            feed_silence_seconds: 30,
            venue_a_requests_per_second: 10,
            venue_b_requests_per_second: 20,
            trade_poll_ms: 2000,
            book_poll_ms: 1000,
            trade_backfill_seconds: 900,
            reconnect_initial_ms: 500,
            reconnect_max_ms: 30_000,
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
            snapshot_interval: ms(self.snapshot_interval_ms.max(1)),
            feed_silence: Duration::from_secs(self.feed_silence_seconds.max(1)),
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
    snapshot_interval: Duration,
    feed_silence: Duration,
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

/// Snapshots queued for the writer before new ones are dropped (the writer keeps only the latest per
/// book anyway, so a full queue means the database is stalled).
const SNAPSHOT_QUEUE: usize = 16_384;
const TRADE_QUEUE: usize = 1_024;
/// Trades stored per insert.
const TRADE_BATCH: usize = 5_000;
/// Markets per REST book-polling request round.
const POLL_CHUNK: usize = 10;
/// Re-read overlap of the trade tape: trades can appear on the tape a little after their execution time.
const TRADE_OVERLAP: Duration = Duration::from_secs(60);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

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
    snapshots: mpsc::Sender<BookSnapshot>,
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
        let (snapshots, snap_rx) = mpsc::channel(SNAPSHOT_QUEUE);
        let (trades, trade_rx) = mpsc::channel(TRADE_QUEUE);
        tracker.spawn(snapshot_writer(store.clone(), snap_rx, settings.snapshot_interval));
        tracker.spawn(trade_writer(store.clone(), bus.clone(), trade_rx));
        Ctx {
            store,
            live,
            bus,
            health,
            snapshots,
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
    /// Sync the catalog now (the feed saw a new or resolved market).
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
}

fn spawn_venue<V: Venue>(venue: Arc<V>, ctx: &Ctx, tracker: &TaskTracker) -> mpsc::Sender<FollowRequest> {
    let (markets, _) = watch::channel(Arc::new(MarketSet::new()));
    let rt = Arc::new(Runtime {
        venue,
        markets,
        followed: Mutex::new(BTreeSet::new()),
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

/// Upserts a batch in parent-first order, all with `seen_at`.
async fn upsert(store: &dyn Store, batch: &CatalogBatch, seen_at: Timestamp) -> Result<(), StoreError> {
    store.upsert_series(&batch.series, seen_at).await?;
    store.upsert_events(&batch.events, seen_at).await?;
    store.upsert_markets(&batch.markets, seen_at).await
}

fn active_markets(markets: &[Market]) -> impl Iterator<Item = (String, Market)> + '_ {
    markets
        .iter()
        .filter(|m| m.status == Status::Active)
        .map(|m| (m.market_id.clone(), m.clone()))
}

/// One catalog sync; returns the number of followed markets.
async fn sync_catalog_once<V: Venue>(rt: &Runtime<V>, ctx: &Ctx) -> Result<usize, String> {
    let ex = V::EXCHANGE;
    let followed = rt.followed();
    let followed_list: Vec<String> = followed.iter().cloned().collect();
    let mut batch = rt.venue.sync_catalog(&followed_list).await.map_err(|e| e.to_string())?;
    // Markets we followed that left the listings: read their final state (closed, settled).
    let previous = rt.markets.borrow().clone();
    let listed: HashSet<String> = batch.markets.iter().map(|m| m.market_id.clone()).collect();
    let missing: Vec<Market> = previous
        .values()
        .filter(|m| !listed.contains(&m.market_id))
        .cloned()
        .collect();
    if !missing.is_empty() {
        match rt.venue.refresh_markets(&missing).await {
            Ok(ms) => batch.markets.extend(ms),
            Err(e) => {
                warn!(venue = %ex, error = %e, markets = missing.len(), "cannot refresh markets that left the listings")
            }
        }
    }
    let now = Timestamp::now();
    upsert(ctx.store.as_ref(), &batch, now)
        .await
        .map_err(|e| format!("store: {e}"))?;

    let mut set: MarketSet = active_markets(&batch.markets).collect();
    // Events followed while this sync ran are not in `batch` yet: keep their markets.
    let added_meanwhile: BTreeSet<String> = rt.followed().difference(&followed).cloned().collect();
    if !added_meanwhile.is_empty() {
        for m in rt.markets.borrow().values() {
            if added_meanwhile.contains(&m.event_id) {
                set.entry(m.market_id.clone()).or_insert_with(|| m.clone());
            }
        }
    }
    let n = set.len();
    ctx.live.retain_markets(ex, |id| set.contains_key(id));
    rt.markets.send_replace(Arc::new(set));
    ctx.health.update(ex, |h| h.last_catalog_sync_at = Some(now));
    ctx.bus.publish(DomainEvent::CatalogSynced {
        exchange: ex,
        markets: n,
    });
    info!(
        venue = %ex,
        series = batch.series.len(),
        events = batch.events.len(),
        markets = batch.markets.len(),
        followed_markets = n,
        "catalog synced"
    );
    Ok(n)
}

/// The shortest time between two catalog syncs when the feed keeps hinting at changes.
const MIN_CATALOG_SPACING: Duration = Duration::from_secs(5);

async fn catalog_worker<V: Venue>(rt: Arc<Runtime<V>>, ctx: Ctx) {
    let ex = V::EXCHANGE;
    let mut backoff = Backoff::new(BackoffPolicy::RECONNECT);
    loop {
        let started = Instant::now();
        let result = tokio::select! {
            _ = ctx.cancel.cancelled() => return,
            r = sync_catalog_once(&rt, &ctx) => r,
        };
        let delay = match result {
            Ok(_) => {
                backoff.reset();
                ctx.settings.catalog_sync
            }
            Err(e) => {
                let delay = backoff.next_delay().min(ctx.settings.catalog_sync);
                warn!(venue = %ex, attempt = backoff.failures(), delay_ms = delay.as_millis() as u64, error = %e, "catalog sync failed");
                ctx.health.update(ex, |h| h.last_error = Some(e));
                delay
            }
        };
        tokio::select! {
            _ = ctx.cancel.cancelled() => return,
            _ = tokio::time::sleep(delay) => {}
            _ = rt.catalog_now.notified() => {
                debug!(venue = %ex, "catalog sync requested by the feed");
                // Hints can come in bursts (one per resolved market): keep syncs spaced.
                let spacing = MIN_CATALOG_SPACING.min(ctx.settings.catalog_sync);
                tokio::select! {
                    _ = ctx.cancel.cancelled() => return,
                    _ = tokio::time::sleep_until(started + spacing) => {}
                }
            }
        }
    }
}

async fn follow_one<V: Venue>(rt: &Runtime<V>, ctx: &Ctx, event_id: &str) -> Result<Option<Event>, FollowError> {
    let Some(batch) = rt.venue.fetch_event(event_id).await? else {
        return Ok(None);
    };
    let Some(event) = batch
        .events
        .iter()
        .find(|e| e.event_id == event_id || e.slug.as_deref() == Some(event_id))
        .or(batch.events.first())
        .cloned()
    else {
        return Ok(None);
    };
    upsert(ctx.store.as_ref(), &batch, Timestamp::now()).await?;
    rt.followed
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(event.event_id.clone());
    rt.markets.send_modify(|set| {
        let mut next = (**set).clone();
        next.extend(active_markets(&batch.markets));
        *set = Arc::new(next);
    });
    info!(venue = %V::EXCHANGE, event = %event.event_id, markets = batch.markets.len(), "following event");
    Ok(Some(event))
}

async fn follow_worker<V: Venue>(rt: Arc<Runtime<V>>, ctx: Ctx, mut rx: mpsc::Receiver<FollowRequest>) {
    loop {
        let req = tokio::select! {
            _ = ctx.cancel.cancelled() => return,
            r = rx.recv() => match r {
                Some(r) => r,
                None => return,
            },
        };
        let result = tokio::select! {
            _ = ctx.cancel.cancelled() => return,
            r = follow_one(&rt, &ctx, &req.event_id) => r,
        };
        // The caller may have given up waiting; nothing to do then.
        let _ = req.reply.send(result);
    }
}

/// Applies a feed update: malformed parts counted and skipped, stale books hidden, changed books into
/// memory, onto the bus and to the snapshot writer, trades to the trade writer, hints to their workers.
async fn publish<V: Venue>(rt: &Runtime<V>, ctx: &Ctx, update: &mut FeedUpdate) {
    let ex = V::EXCHANGE;
    if !update.malformed.is_empty() {
        let n = update.malformed.len() as u64;
        for e in update.malformed.drain(..) {
            report_malformed(&e);
        }
        ctx.health.update(ex, |h| h.malformed += n);
    }
    if !update.stale.is_empty() {
        let keys = std::mem::take(&mut update.stale);
        ctx.live.mark_stale(keys.iter());
        ctx.bus.publish(DomainEvent::BooksStale { exchange: ex, keys });
    }
    for book in update.books.drain(..) {
        let key = BookKey::of(&book);
        let timestamp = book.timestamp;
        if !ctx.live.upsert(book.clone()) {
            continue;
        }
        ctx.bus.publish(DomainEvent::BookUpdated { key, timestamp });
        if ctx.snapshots.try_send(book).is_err() {
            metrics::counter!("crossbook_snapshots_dropped_total", "venue" => ex.as_str()).increment(1);
        }
    }
    if !update.trades.is_empty() {
        let trades = std::mem::take(&mut update.trades);
        rt.note_trades(&trades);
        if ctx.trades.send(trades).await.is_err() {
            debug!(venue = %ex, "trade writer gone; shutting down");
        }
    }
    if update.backfill_trades {
        rt.trades_now.notify_one();
    }
    if update.catalog_hint {
        rt.catalog_now.notify_one();
    }
}

/// How a WebSocket session ended.
enum SessionEnd {
    /// Shutdown requested.
    Cancelled,
    /// The connection ended (closed by the venue, silent feed): reconnect.
    Ended(String),
}

async fn feed_worker<V: Venue>(rt: Arc<Runtime<V>>, ctx: Ctx) {
    let ex = V::EXCHANGE;
    match rt.venue.ws_request() {
        Ok(Some(_)) => {}
        Ok(None) => return poll_books_worker(rt, ctx).await,
        Err(e) => {
            error!(venue = %ex, error = %e, "cannot build the WebSocket request; books will not be ingested");
            ctx.health.update(ex, |h| h.last_error = Some(e.to_string()));
            return;
        }
    }
    let mut backoff = Backoff::new(ctx.settings.reconnect);
    let mut markets_rx = rt.markets.subscribe();
    loop {
        let reason = match ws_session(&rt, &ctx, &mut markets_rx, &mut backoff).await {
            Ok(SessionEnd::Cancelled) => break,
            Ok(SessionEnd::Ended(reason)) => reason,
            Err(e) => e.to_string(),
        };
        if ctx.cancel.is_cancelled() {
            break;
        }
        let stale = ctx.live.mark_exchange_stale(ex);
        if !stale.is_empty() {
            ctx.bus.publish(DomainEvent::BooksStale {
                exchange: ex,
                keys: stale,
            });
        }
        ctx.health.update(ex, |h| {
            h.connected = false;
            h.reconnects += 1;
            h.last_error = Some(reason.clone());
        });
        metrics::counter!("crossbook_venue_reconnects_total", "venue" => ex.as_str()).increment(1);
        let delay = backoff.next_delay();
        warn!(venue = %ex, attempt = backoff.failures(), delay_ms = delay.as_millis() as u64, reason = %reason, "feed disconnected; reconnecting");
        tokio::select! {
            _ = ctx.cancel.cancelled() => break,
            _ = tokio::time::sleep(delay) => {}
        }
    }
    ctx.health.update(ex, |h| h.connected = false);
}

/// How often the watchdog looks: a quarter of the silence limit, between 100 ms and 5 s.
fn watchdog_period(silence: Duration) -> Duration {
    (silence / 4).clamp(Duration::from_millis(100), Duration::from_secs(5))
}

async fn ws_session<V: Venue>(
    rt: &Runtime<V>,
    ctx: &Ctx,
    markets_rx: &mut watch::Receiver<Arc<MarketSet>>,
    backoff: &mut Backoff,
) -> Result<SessionEnd, VenueError> {
    let ex = V::EXCHANGE;
    let ws_err = |reason: String| VenueError::WebSocket { exchange: ex, reason };
    let Some(request) = rt.venue.ws_request()? else {
        return Err(ws_err("no WebSocket request".into()));
    };
    let url = request.uri().to_string();
    let connect = tokio::time::timeout(CONNECT_TIMEOUT, tokio_tungstenite::connect_async(request));
    let (ws, _) = tokio::select! {
        _ = ctx.cancel.cancelled() => return Ok(SessionEnd::Cancelled),
        r = connect => r
            .map_err(|_| ws_err(format!("connect to {url} timed out")))?
            .map_err(|e| ws_err(format!("connect to {url}: {e}")))?,
    };
    let (mut sink, mut stream) = ws.split();
    let mut session = rt.venue.new_session();

    let set = markets_rx.borrow_and_update().clone();
    let mut update = session.sync_markets(&set);
    for frame in update.send.drain(..) {
        sink.send(Message::Text(frame.into()))
            .await
            .map_err(|e| ws_err(format!("send: {e}")))?;
    }
    publish(rt, ctx, &mut update).await;
    ctx.health.update(ex, |h| {
        h.mode = FeedMode::WebSocket;
        h.connected = true;
    });
    info!(venue = %ex, url = %url, markets = set.len(), "feed connected and subscribed");
    // Trades executed while we were away come from the REST tape.
    rt.trades_now.notify_one();

    let silence = ctx.settings.feed_silence;
    let period = watchdog_period(silence);
    let mut watchdog = tokio::time::interval_at(Instant::now() + period, period);
    let keepalive_every = rt.venue.keepalive_interval();
    let ka_period = keepalive_every.unwrap_or(Duration::from_secs(3600));
    let mut keepalive = tokio::time::interval_at(Instant::now() + ka_period, ka_period);
    let mut last_data = Instant::now();
    let mut resubscribed = false;
    let mut got_data = false;

    loop {
        let mut update = tokio::select! {
            _ = ctx.cancel.cancelled() => {
                let _ = sink.send(Message::Close(None)).await;
                return Ok(SessionEnd::Cancelled);
            }
            frame = stream.next() => {
                let text = match frame {
                    Some(Ok(Message::Text(t))) => t.to_string(),
                    Some(Ok(Message::Binary(b))) => String::from_utf8_lossy(&b).into_owned(),
                    Some(Ok(Message::Close(f))) => {
                        return Ok(SessionEnd::Ended(format!("closed by the venue ({f:?})")));
                    }
                    // Pings are answered by tungstenite itself; pongs and raw frames carry nothing.
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => return Err(ws_err(format!("read: {e}"))),
                    None => return Ok(SessionEnd::Ended("connection ended".into())),
                };
                let update = session.on_text(&text, Timestamp::now());
                if update.data {
                    last_data = Instant::now();
                    resubscribed = false;
                    ctx.health.touch(ex, Timestamp::now());
                    if !got_data {
                        // Connected and receiving: the next failure starts the schedule over.
                        got_data = true;
                        backoff.reset();
                    }
                }
                update
            }
            changed = markets_rx.changed() => {
                if changed.is_err() {
                    return Ok(SessionEnd::Cancelled);
                }
                let set = markets_rx.borrow_and_update().clone();
                session.sync_markets(&set)
            }
            _ = keepalive.tick(), if keepalive_every.is_some() => {
                match session.keepalive() {
                    Some(ping) => FeedUpdate::sending(vec![ping]),
                    None => FeedUpdate::default(),
                }
            }
            _ = watchdog.tick() => {
                let (fresh, stale) = ctx.live.counts(ex);
                ctx.health.update(ex, |h| {
                    h.books = fresh;
                    h.stale_books = stale;
                });
                if last_data.elapsed() < silence {
                    session.on_tick(Timestamp::now())
                } else if resubscribed {
                    return Ok(SessionEnd::Ended(format!(
                        "no data for {} ms even after resubscribing",
                        last_data.elapsed().as_millis()
                    )));
                } else {
                    warn!(venue = %ex, silent_ms = last_data.elapsed().as_millis() as u64, "feed silent; resubscribing");
                    metrics::counter!("crossbook_venue_watchdog_resubscribes_total", "venue" => ex.as_str())
                        .increment(1);
                    resubscribed = true;
                    last_data = Instant::now();
                    session.resubscribe()
                }
            }
        };
        for frame in update.send.drain(..) {
            sink.send(Message::Text(frame.into()))
                .await
                .map_err(|e| ws_err(format!("send: {e}")))?;
        }
        publish(rt, ctx, &mut update).await;
    }
}

/// The REST fallback of the feed: every `book_poll` (or as fast as the venue's rate limit allows), read the
/// book of every followed market.
async fn poll_books_worker<V: Venue>(rt: Arc<Runtime<V>>, ctx: Ctx) {
    let ex = V::EXCHANGE;
    info!(venue = %ex, "feed: polling REST order books (no WebSocket)");
    ctx.health.update(ex, |h| h.mode = FeedMode::Polling);
    let mut markets_rx = rt.markets.subscribe();
    let mut backoff = Backoff::new(ctx.settings.reconnect);
    loop {
        let round_start = Instant::now();
        let markets: Vec<Market> = markets_rx.borrow_and_update().values().cloned().collect();
        for chunk in markets.chunks(POLL_CHUNK) {
            let result = tokio::select! {
                _ = ctx.cancel.cancelled() => return,
                r = rt.venue.fetch_books(chunk) => r,
            };
            match result {
                Ok(books) => {
                    backoff.reset();
                    ctx.health.touch(ex, Timestamp::now());
                    let mut update = FeedUpdate {
                        books,
                        data: true,
                        ..Default::default()
                    };
                    publish(&rt, &ctx, &mut update).await;
                }
                Err(e) => {
                    let delay = backoff.next_delay();
                    warn!(venue = %ex, attempt = backoff.failures(), delay_ms = delay.as_millis() as u64, error = %e, "book poll failed");
                    ctx.health.update(ex, |h| {
                        h.connected = false;
                        h.last_error = Some(e.to_string());
                    });
                    tokio::select! {
                        _ = ctx.cancel.cancelled() => return,
                        _ = tokio::time::sleep(delay) => {}
                    }
                }
            }
        }
        let (fresh, stale) = ctx.live.counts(ex);
        ctx.health.update(ex, |h| {
            h.books = fresh;
            h.stale_books = stale;
        });
        tokio::select! {
            _ = ctx.cancel.cancelled() => return,
            _ = tokio::time::sleep_until(round_start + ctx.settings.book_poll) => {}
            changed = markets_rx.changed() => if changed.is_err() { return },
        }
    }
}

/// Whether a venue's WebSocket is up (so its trades arrive on it).
fn ws_up(health: &VenueHealth, ex: Exchange) -> bool {
    health
        .get(ex)
        .is_some_and(|h| h.mode == FeedMode::WebSocket && h.connected)
}

async fn trade_worker<V: Venue>(rt: Arc<Runtime<V>>, ctx: Ctx) {
    let ex = V::EXCHANGE;
    let mut first = true;
    loop {
        if !first {
            let poll = tokio::select! {
                _ = ctx.cancel.cancelled() => return,
                _ = rt.trades_now.notified() => true,
                _ = tokio::time::sleep(ctx.settings.trade_poll) => {
                    rt.venue.polls_trades_with_ws() || !ws_up(&ctx.health, ex)
                }
            };
            if !poll {
                continue;
            }
        }
        let set = rt.markets.borrow().clone();
        if set.is_empty() {
            // Nothing followed yet: wait for the first catalog instead of reading an empty tape.
            let mut rx = rt.markets.subscribe();
            tokio::select! {
                _ = ctx.cancel.cancelled() => return,
                _ = rx.changed() => {}
            }
            continue;
        }
        first = false;
        let now = Timestamp::now().millis();
        let floor = now - ctx.settings.trade_backfill.as_millis() as i64;
        let latest = rt.latest_trade_ms.load(Ordering::Relaxed);
        let since = Timestamp::from_millis(floor.max(latest - TRADE_OVERLAP.as_millis() as i64));
        let result = tokio::select! {
            _ = ctx.cancel.cancelled() => return,
            r = rt.venue.fetch_trades(&set, since) => r,
        };
        match result {
            Ok(trades) if trades.is_empty() => {}
            Ok(trades) => {
                debug!(venue = %ex, trades = trades.len(), since = %since, "trades read from the tape");
                rt.note_trades(&trades);
                if ctx.trades.send(trades).await.is_err() {
                    return;
                }
            }
            Err(e) => warn!(venue = %ex, error = %e, "trade tape read failed"),
        }
    }
}

/// Stores trades in batches and publishes [`DomainEvent::TradeIngested`] for the new ones only, so a trade
/// resent after a reconnect (or read twice from the tape) is published once.
async fn trade_writer(store: Arc<dyn Store>, bus: Bus, mut rx: mpsc::Receiver<Vec<Trade>>) {
    while let Some(mut batch) = rx.recv().await {
        while batch.len() < TRADE_BATCH {
            match rx.try_recv() {
                Ok(more) => batch.extend(more),
                Err(_) => break,
            }
        }
        let mut seen = HashSet::new();
        batch.retain(|t| seen.insert((t.exchange, t.source_trade_id.clone())));
        let mut backoff = Backoff::new(BackoffPolicy::REST);
        loop {
            match store.insert_trades(&batch).await {
                Ok(new) => {
                    for t in new {
                        metrics::counter!("crossbook_trades_ingested_total", "venue" => t.exchange.as_str())
                            .increment(1);
                        bus.publish(DomainEvent::TradeIngested(t));
                    }
                    break;
                }
                Err(e) if backoff.failures() < 3 => {
                    let delay = backoff.next_delay();
                    warn!(attempt = backoff.failures(), delay_ms = delay.as_millis() as u64, error = %e, trades = batch.len(), "storing trades failed; retrying");
                    tokio::time::sleep(delay).await;
                }
                Err(e) => {
                    error!(error = %e, trades = batch.len(), "storing trades failed; dropping the batch");
                    break;
                }
            }
        }
    }
}

/// Writes book snapshots: at most one per book per `interval`, the latest state of each book, in one
/// batch per tick. Ends (after writing everything it holds) when every sender is gone.
async fn snapshot_writer(store: Arc<dyn Store>, mut rx: mpsc::Receiver<BookSnapshot>, interval: Duration) {
    let mut pending: HashMap<BookKey, BookSnapshot> = HashMap::new();
    let mut written: HashMap<BookKey, Instant> = HashMap::new();
    let period = (interval / 4).clamp(Duration::from_millis(10), Duration::from_millis(250));
    let mut tick = tokio::time::interval_at(Instant::now() + period, period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut ticks: u64 = 0;
    loop {
        tokio::select! {
            msg = rx.recv() => match msg {
                Some(book) => {
                    pending.insert(BookKey::of(&book), book);
                }
                None => {
                    let batch: Vec<BookSnapshot> = pending.into_values().collect();
                    write_snapshots(store.as_ref(), &batch).await;
                    return;
                }
            },
            _ = tick.tick() => {
                ticks += 1;
                let now = Instant::now();
                let due: Vec<BookKey> = pending
                    .keys()
                    .filter(|k| written.get(*k).is_none_or(|t| now.duration_since(*t) >= interval))
                    .cloned()
                    .collect();
                let mut batch = Vec::with_capacity(due.len());
                for k in due {
                    if let Some(b) = pending.remove(&k) {
                        batch.push(b);
                    }
                    written.insert(k, now);
                }
                write_snapshots(store.as_ref(), &batch).await;
                // Forget books not written for a while (closed markets).
                if ticks.is_multiple_of(1000) {
                    written.retain(|_, t| now.duration_since(*t) < interval * 60);
                }
            }
        }
    }
}

async fn write_snapshots(store: &dyn Store, batch: &[BookSnapshot]) {
    if batch.is_empty() {
        return;
    }
    match store.insert_snapshots(batch).await {
        Ok(()) => metrics::counter!("crossbook_snapshots_written_total").increment(batch.len() as u64),
        Err(e) => {
            metrics::counter!("crossbook_snapshots_dropped_total", "venue" => "all").increment(batch.len() as u64);
            error!(error = %e, snapshots = batch.len(), "storing book snapshots failed; dropping the batch");
        }
    }
}

#[cfg(test)]
mod tests;
