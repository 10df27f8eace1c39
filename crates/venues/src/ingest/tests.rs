//! Tests of the ingest workers: the book writer (the log's numbering, keyframes and gaps, on a real SQLite
//! store; the snapshot throttle), the trade writer's publish-once rule, and
//! the feed loop (watchdog, reconnect, malformed frames, polling fallback, follow requests) driven by a
//! fake venue against a small local WebSocket server. Waits are on conditions with deadlines.

use std::{
    collections::BTreeMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use crossbook_core::arb::{Episode, Listing, PairOverride};
use crossbook_core::book::{BookChange, BookEvent, GapCause, KeyframePolicy, LevelChange, Side};
use crossbook_core::{
    Amount, BookSnapshot, Event, Exchange, Level, Market, Outcome, Price, Series, Status, TakerSide, Timestamp, Trade,
};
use crossbook_store::{
    AccountStore, ApiKeyInfo, ArbitrageStore, BookHistoryQuery, BookLogStore, CatalogStore, Compacted, Delivery,
    EventActivity, EventQuery, EventSummary, HistoryPage, HistoryQuery, KeyOwner, LeaderGuard, LeaderLock, LogHead,
    LogRead, LogRun, MarketQuery, NewDelivery, NewKey, PoolCandidate, Pruned, RecentQuery, SeriesQuery, SeriesSummary,
    SnapshotStore, Store, StoreError, StoreResult, StoredOverride, TargetStats, TradeStore, WatchEntry, Webhook,
    WebhookKind, WebhookStore, WhalePage, WhaleQuery, WhaleStore, WhaleTarget, catalog::StoredMarket,
};
use futures_util::{SinkExt, StreamExt};
use sqlx::Connection as _;
use tokio::{net::TcpListener, sync::mpsc};
use tokio_tungstenite::tungstenite::{Message, handshake::client::Request};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use super::*;
use crate::{
    health::FeedMode,
    ingest::book_writer::{BookInput, LOG_FLUSH, LogBuffer, book_writer},
    venue::{BookUpdate, CatalogBatch, MarketSet, Venue},
    venue_b,
};
use crossbook_live::{BookKey, DomainEvent};

// ------------------------------------------------------------------------------------------ test store

/// An in-memory store with the semantics ingestion relies on: `discovered_at` = first `seen_at`, trades
/// unique per `(exchange, source_trade_id)` with only new ones returned, snapshots appended.
#[derive(Default)]
struct MemStore {
    series: Mutex<BTreeMap<(Exchange, String), (Series, Timestamp)>>,
    events: Mutex<BTreeMap<(Exchange, String), (Event, Timestamp)>>,
    markets: Mutex<BTreeMap<(Exchange, String), (Market, Timestamp)>>,
    trades: Mutex<Vec<Trade>>,
    snapshots: Mutex<Vec<Vec<BookSnapshot>>>,
    /// The book log: per book, its id and events.
    log: Mutex<Vec<(BookKey, Vec<BookEvent>)>>,
    /// `log_heads` fails this many more times.
    heads_fail: AtomicUsize,
    /// Every `append_log` waits for this lock (a test holds it to make the store slow)...
    append_gate: tokio::sync::Mutex<()>,
    /// ...after counting itself here.
    appends_started: AtomicUsize,
    health: crossbook_store::WriteHealth,
}

fn unsupported<T>() -> StoreResult<T> {
    Err(StoreError::Config("not supported by the test store".into()))
}

#[async_trait::async_trait]
impl CatalogStore for MemStore {
    async fn upsert_series(&self, items: &[Series], seen_at: Timestamp) -> StoreResult<()> {
        let mut m = self.series.lock().unwrap();
        for s in items {
            let first = m.get(&(s.exchange, s.series_id.clone())).map_or(seen_at, |(_, t)| *t);
            m.insert((s.exchange, s.series_id.clone()), (s.clone(), first));
        }
        Ok(())
    }
    async fn upsert_events(&self, items: &[Event], seen_at: Timestamp) -> StoreResult<()> {
        let mut m = self.events.lock().unwrap();
        for e in items {
            let first = m.get(&(e.exchange, e.event_id.clone())).map_or(seen_at, |(_, t)| *t);
            m.insert((e.exchange, e.event_id.clone()), (e.clone(), first));
        }
        Ok(())
    }
    async fn upsert_markets(&self, items: &[Market], seen_at: Timestamp) -> StoreResult<()> {
        let mut m = self.markets.lock().unwrap();
        for x in items {
            let first = m.get(&(x.exchange, x.market_id.clone())).map_or(seen_at, |(_, t)| *t);
            m.insert((x.exchange, x.market_id.clone()), (x.clone(), first));
        }
        Ok(())
    }
    async fn get_event(&self, _: Exchange, _: &str) -> StoreResult<Option<EventSummary>> {
        unsupported()
    }
    async fn find_event(&self, _: &str) -> StoreResult<Option<EventSummary>> {
        unsupported()
    }
    async fn get_market(&self, exchange: Exchange, id: &str) -> StoreResult<Option<StoredMarket>> {
        Ok(self
            .markets
            .lock()
            .unwrap()
            .get(&(exchange, id.to_string()))
            .map(|(market, discovered_at)| StoredMarket {
                market: market.clone(),
                discovered_at: *discovered_at,
            }))
    }
    async fn active_markets(&self) -> StoreResult<Vec<Market>> {
        unsupported()
    }
    async fn search_series(&self, _: &SeriesQuery) -> StoreResult<Vec<SeriesSummary>> {
        unsupported()
    }
    async fn search_events(&self, _: &EventQuery) -> StoreResult<Vec<EventSummary>> {
        unsupported()
    }
    async fn search_markets(&self, _: &MarketQuery) -> StoreResult<Vec<StoredMarket>> {
        unsupported()
    }
    async fn recent_events(&self, _: &RecentQuery) -> StoreResult<Vec<EventSummary>> {
        unsupported()
    }
    async fn recent_markets(&self, _: &RecentQuery) -> StoreResult<Vec<StoredMarket>> {
        unsupported()
    }
}

#[async_trait::async_trait]
impl AccountStore for MemStore {
    async fn create_key(&self, _: &str, _: crossbook_core::Plan) -> StoreResult<NewKey> {
        unsupported()
    }
    async fn list_keys(&self) -> StoreResult<Vec<ApiKeyInfo>> {
        unsupported()
    }
    async fn revoke_key(&self, _: &str) -> StoreResult<u64> {
        unsupported()
    }
    async fn find_key(&self, _: &[u8]) -> StoreResult<Option<KeyOwner>> {
        unsupported()
    }
}

#[async_trait::async_trait]
impl SnapshotStore for MemStore {
    async fn insert_snapshots(&self, batch: &[BookSnapshot]) -> StoreResult<()> {
        self.snapshots.lock().unwrap().push(batch.to_vec());
        Ok(())
    }
    async fn snapshots(&self, _: &BookHistoryQuery) -> StoreResult<Vec<BookSnapshot>> {
        unsupported()
    }
    async fn delete_snapshots_before(&self, _: Timestamp) -> StoreResult<u64> {
        unsupported()
    }
}

#[async_trait::async_trait]
impl BookLogStore for MemStore {
    async fn register_log_books(&self, books: &[BookKey]) -> StoreResult<Vec<LogHead>> {
        let mut log = self.log.lock().unwrap();
        Ok(books
            .iter()
            .map(|b| {
                let id = match log.iter().position(|(k, _)| k == b) {
                    Some(i) => i,
                    None => {
                        log.push((b.clone(), Vec::new()));
                        log.len() - 1
                    }
                };
                let last = log[id].1.last();
                LogHead {
                    id: id as i64,
                    book: b.clone(),
                    last_seq: last.map_or(0, |e| e.seq),
                    last_ts: last.map(|e| e.received_at),
                }
            })
            .collect())
    }
    async fn log_heads(&self, exchange: Exchange) -> StoreResult<Vec<LogHead>> {
        if self.heads_fail.load(Ordering::SeqCst) > 0 {
            self.heads_fail.fetch_sub(1, Ordering::SeqCst);
            return Err(StoreError::Unavailable("heads down".into()));
        }
        let log = self.log.lock().unwrap();
        Ok(log
            .iter()
            .enumerate()
            .filter(|(_, (k, es))| k.exchange == exchange && !es.is_empty())
            .map(|(id, (k, es))| LogHead {
                id: id as i64,
                book: k.clone(),
                last_seq: es.last().map_or(0, |e| e.seq),
                last_ts: es.last().map(|e| e.received_at),
            })
            .collect())
    }
    async fn append_log(&self, runs: &[LogRun]) -> StoreResult<()> {
        self.appends_started.fetch_add(1, Ordering::SeqCst);
        let _gate = self.append_gate.lock().await;
        let mut log = self.log.lock().unwrap();
        for r in runs {
            log[r.book_id as usize].1.extend(r.events.iter().cloned());
        }
        Ok(())
    }
    async fn log_after(
        &self,
        _: &BookKey,
        _: u64,
        _: Timestamp,
        _: Timestamp,
        _: u32,
    ) -> StoreResult<crossbook_store::LogPage> {
        unreachable!("ingestion never replays the log")
    }
    async fn log_events(&self, book: &BookKey, from: Timestamp, to: Timestamp) -> StoreResult<LogRead> {
        let log = self.log.lock().unwrap();
        let events = log
            .iter()
            .find(|(k, _)| k == book)
            .map(|(_, es)| {
                es.iter()
                    .filter(|e| e.received_at >= from && e.received_at <= to)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        Ok(LogRead {
            events,
            ..LogRead::default()
        })
    }
    async fn log_gaps(&self, _: &BookKey, _: Timestamp, _: Timestamp) -> StoreResult<Vec<crossbook_store::StoredGap>> {
        unsupported()
    }
    async fn log_outline(
        &self,
        _: &BookKey,
        _: Timestamp,
        _: Timestamp,
        _: bool,
    ) -> StoreResult<crossbook_store::LogOutline> {
        unsupported()
    }
    async fn log_ends(&self, _: &BookKey, _: &[Timestamp]) -> StoreResult<Vec<crossbook_store::ChunkEnd>> {
        unsupported()
    }
    async fn log_first(&self, _: &BookKey) -> StoreResult<Option<Timestamp>> {
        unsupported()
    }
    async fn compact_log(&self, _: Timestamp, _: i64, _: u32) -> StoreResult<Compacted> {
        unsupported()
    }
    async fn prune_log(&self, _: Timestamp, _: u32) -> StoreResult<Pruned> {
        unsupported()
    }
    async fn prepare_log(&self, _: Timestamp, _: Timestamp) -> StoreResult<()> {
        Ok(())
    }
}

#[async_trait::async_trait]
impl TradeStore for MemStore {
    async fn trade_page(&self, _: &crossbook_store::TradeQuery<'_>) -> StoreResult<Vec<crossbook_store::StoredTrade>> {
        unreachable!("ingestion never reads trades back")
    }
    async fn candles(
        &self,
        _: crossbook_core::Exchange,
        _: &str,
        _: crossbook_core::candle::Span,
        _: Timestamp,
        _: Timestamp,
    ) -> StoreResult<Vec<crossbook_core::candle::Candle>> {
        unsupported()
    }
    async fn insert_trades(&self, batch: &[Trade]) -> StoreResult<Vec<Trade>> {
        let mut stored = self.trades.lock().unwrap();
        let mut new = Vec::new();
        for t in batch {
            if !stored
                .iter()
                .any(|s| s.exchange == t.exchange && s.source_trade_id == t.source_trade_id)
            {
                stored.push(t.clone());
                new.push(t.clone());
            }
        }
        Ok(new)
    }
}

// The concerns ingestion never touches: every call is an error, so a test would notice if it did.
#[async_trait::async_trait]
impl ArbitrageStore for MemStore {
    async fn record_episodes(&self, _: &[Episode]) -> StoreResult<()> {
        unsupported()
    }
    async fn recent_episodes(&self, _: Timestamp) -> StoreResult<Vec<Episode>> {
        unsupported()
    }
    async fn episode_history(&self, _: &HistoryQuery) -> StoreResult<HistoryPage> {
        unsupported()
    }
    async fn add_pair_override(&self, _: &PairOverride, _: Timestamp) -> StoreResult<bool> {
        unsupported()
    }
    async fn pair_overrides(&self) -> StoreResult<Vec<StoredOverride>> {
        unsupported()
    }
    async fn remove_pair_override(&self, _: &str) -> StoreResult<u64> {
        unsupported()
    }
    async fn arbitrage_listings(&self) -> StoreResult<Vec<Listing>> {
        unsupported()
    }
    async fn listings_between(&self, _: Timestamp, _: Timestamp) -> StoreResult<Vec<Listing>> {
        unsupported()
    }
    async fn reject_pair(&self, _: &PairOverride, _: Option<&str>, _: Timestamp) -> StoreResult<bool> {
        unsupported()
    }
    async fn pair_rejections(&self) -> StoreResult<Vec<crossbook_store::StoredRejection>> {
        unsupported()
    }
    async fn unreject_pair(&self, _: &PairOverride) -> StoreResult<u64> {
        unsupported()
    }
}

#[async_trait::async_trait]
impl LeaderLock for MemStore {
    async fn try_leader_lock(&self) -> StoreResult<Option<LeaderGuard>> {
        unsupported()
    }
}

#[async_trait::async_trait]
impl WhaleStore for MemStore {
    async fn add_watch(&self, _: i64, _: Exchange, _: &str, _: Amount, _: Timestamp) -> StoreResult<i64> {
        unsupported()
    }
    async fn get_watch(&self, _: i64, _: i64, _: Timestamp) -> StoreResult<Option<WatchEntry>> {
        unsupported()
    }
    async fn find_watch(&self, _: i64, _: Exchange, _: &str, _: Timestamp) -> StoreResult<Option<WatchEntry>> {
        unsupported()
    }
    async fn list_watch(&self, _: i64, _: Option<Timestamp>) -> StoreResult<Vec<WatchEntry>> {
        unsupported()
    }
    async fn set_watch_threshold(&self, _: i64, _: i64, _: Amount) -> StoreResult<bool> {
        unsupported()
    }
    async fn delete_watch(&self, _: i64, _: i64) -> StoreResult<Option<(Exchange, String)>> {
        unsupported()
    }
    async fn delete_watch_by_event(&self, _: i64, _: Exchange, _: &str) -> StoreResult<Option<i64>> {
        unsupported()
    }
    async fn watched_events(&self) -> StoreResult<Vec<(Exchange, String)>> {
        unsupported()
    }
    async fn whale_trades(&self, _: &WhaleQuery) -> StoreResult<WhalePage> {
        unsupported()
    }
    async fn whale_stats(&self, _: &[WhaleTarget], _: Option<Timestamp>) -> StoreResult<Vec<TargetStats>> {
        unsupported()
    }
    async fn whale_markets(
        &self,
        _: &[WhaleTarget],
        _: Option<Timestamp>,
        _: u32,
        _: u32,
    ) -> StoreResult<crossbook_store::MarketWhalesPage> {
        unsupported()
    }
    async fn event_activity(&self, _: &[WhaleTarget], _: Timestamp) -> StoreResult<Vec<EventActivity>> {
        unsupported()
    }
    async fn pool(&self, _: &str) -> StoreResult<Vec<(Exchange, String)>> {
        unsupported()
    }
    async fn save_pool(&self, _: &str, _: &[(Exchange, String)]) -> StoreResult<Vec<(Exchange, String)>> {
        unsupported()
    }
    async fn pool_candidates(&self, _: u32) -> StoreResult<Vec<PoolCandidate>> {
        unsupported()
    }
}

#[async_trait::async_trait]
impl WebhookStore for MemStore {
    async fn create_webhook(
        &self,
        _: i64,
        _: WebhookKind,
        _: &str,
        _: &str,
        _: bool,
        _: Timestamp,
    ) -> StoreResult<Option<Webhook>> {
        unsupported()
    }
    async fn webhook(&self, _: i64, _: WebhookKind) -> StoreResult<Option<Webhook>> {
        unsupported()
    }
    async fn customer_webhooks(&self, _: i64) -> StoreResult<Vec<Webhook>> {
        unsupported()
    }
    async fn update_webhook(
        &self,
        _: i64,
        _: WebhookKind,
        _: &str,
        _: Option<bool>,
        _: Timestamp,
    ) -> StoreResult<Option<Webhook>> {
        unsupported()
    }
    async fn delete_webhook(&self, _: i64, _: WebhookKind) -> StoreResult<bool> {
        unsupported()
    }
    async fn enabled_webhooks(&self) -> StoreResult<Vec<Webhook>> {
        unsupported()
    }
    async fn record_deliveries(&self, _: &[NewDelivery]) -> StoreResult<()> {
        unsupported()
    }
    async fn deliveries(&self, _: i64, _: u32) -> StoreResult<Vec<Delivery>> {
        unsupported()
    }
    async fn prune_deliveries(&self, _: u32, _: Option<Timestamp>, _: u32) -> StoreResult<Pruned> {
        unsupported()
    }
}

#[async_trait::async_trait]
impl crossbook_store::BacktestStore for MemStore {
    async fn create_backtest(&self, _: &str, _: i64, _: &str, _: Timestamp) -> StoreResult<()> {
        unsupported()
    }
    async fn backtest(&self, _: &str) -> StoreResult<Option<crossbook_store::StoredBacktest>> {
        unsupported()
    }
    async fn customer_backtests(&self, _: i64, _: u32) -> StoreResult<Vec<crossbook_store::StoredBacktest>> {
        unsupported()
    }
    async fn running_backtests(&self, _: i64, _: Timestamp) -> StoreResult<u64> {
        unsupported()
    }
    async fn backtest_progress(&self, _: &str, _: Timestamp, _: Timestamp) -> StoreResult<bool> {
        unsupported()
    }
    async fn finish_backtest(&self, _: &str, _: Result<&[u8], &str>, _: Timestamp) -> StoreResult<bool> {
        unsupported()
    }
    async fn delete_backtest(&self, _: &str) -> StoreResult<bool> {
        unsupported()
    }
}

#[async_trait::async_trait]
impl Store for MemStore {
    fn backend(&self) -> &'static str {
        "memory"
    }
    async fn ping(&self) -> StoreResult<()> {
        Ok(())
    }
    async fn migrate(&self) -> StoreResult<()> {
        Ok(())
    }
    async fn close(&self) {}
    fn write_health(&self) -> &crossbook_store::WriteHealth {
        &self.health
    }
}

// ------------------------------------------------------------------------------------------ helpers

/// Polls `cond` until it holds, failing after `secs`.
async fn wait_until(what: &str, secs: u64, mut cond: impl FnMut() -> bool) {
    crossbook_store::testing::eventually(what, Duration::from_secs(secs), async || cond().then_some(())).await
}

fn book(market: &str, asset: Option<&str>, bid_cents: i64, ts: i64) -> BookSnapshot {
    BookSnapshot {
        exchange: if asset.is_some() {
            Exchange::VenueB
        } else {
            Exchange::VenueA
        },
        market_id: market.into(),
        asset_id: asset.map(str::to_string),
        timestamp: Timestamp::from_millis(ts),
        bids: vec![Level {
            price: Price::from_cents(bid_cents),
            size: Amount::from_units(10),
        }],
        asks: vec![],
        no_bids: vec![],
    }
}

fn trade(id: &str) -> Trade {
    Trade {
        exchange: Exchange::VenueB,
        source_trade_id: id.into(),
        market_id: COND.into(),
        event_id: "E1".into(),
        executed_at: Timestamp::now(),
        taker_side: TakerSide::Buy,
        outcome: Outcome::Yes,
        price: Price::from_cents(52),
        size: Amount::from_units(3),
    }
}

// ------------------------------------------------------------------------------------------ writers

/// A snapshot numbered `seq`.
fn snapshot_of(b: BookSnapshot, seq: u64) -> BookInput {
    BookInput::Update {
        received_at: b.timestamp,
        update: BookUpdate::snapshot(b, None, None),
        seq,
        restart_gap: None,
    }
}

/// A delta setting the YES bid at `cents` to 10 contracts, with the book it leaves; numbered `seq` (also
/// the venue's sequence).
fn delta_of(b: BookSnapshot, seq: i64) -> BookInput {
    let change = LevelChange {
        side: Side::Bid,
        price: b.bids[0].price,
        size: b.bids[0].size,
    };
    BookInput::Update {
        received_at: b.timestamp,
        update: BookUpdate::delta(b, vec![change], Some(seq), None),
        seq: seq as u64,
        restart_gap: None,
    }
}

/// What the feed does with a change: numbers it in the live books (as `publish` does), then logs it.
fn change_into(live: &LiveBooks, log: &mut LogBuffer, input: BookInput) -> Option<u64> {
    let BookInput::Update {
        update, received_at, ..
    } = input
    else {
        unreachable!("a change")
    };
    let n = live.upsert_numbered(update.book.clone())?;
    log.update(update, received_at, n.seq, n.restart_gap);
    Some(n.seq)
}

/// What the feed does with a loss: marks the books stale in the live books (numbering the gaps), then logs it.
fn loss_into(live: &LiveBooks, log: &mut LogBuffer, keys: &[BookKey], cause: GapCause, at: i64) -> Vec<u64> {
    let lost = live.mark_stale(keys.iter());
    log.lost(&lost, cause, Timestamp::from_millis(at));
    lost.into_iter().map(|(_, seq)| seq).collect()
}

fn kinds(events: &[BookEvent]) -> String {
    events
        .iter()
        .map(|e| match e.change {
            BookChange::Snapshot { .. } => 'S',
            BookChange::Delta(_) => 'd',
            BookChange::Gap(_) => 'G',
        })
        .collect()
}

/// The book writer on `store` at the default keyframe policy and bound, fed by `rx`.
fn spawn_writer(store: &Arc<MemStore>, rx: mpsc::Receiver<BookInput>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(book_writer(
        store.clone(),
        rx,
        KeyframePolicy::DEFAULT,
        VenueHealth::new(&LiveBooks::new()),
        LiveBooks::new(),
        Bus::default(),
        crate::ingest::book_writer::MAX_UNWRITTEN_EVENTS,
    ))
}

#[tokio::test(start_paused = true)]
async fn book_writer_logs_every_change_and_flushes_what_it_holds_at_shutdown() {
    let store = Arc::new(MemStore::default());
    let (tx, rx) = mpsc::channel(64);
    let writer = spawn_writer(&store, rx);
    for v in 1..=5 {
        tx.send(snapshot_of(book("M", None, 40 + v, v), v as u64))
            .await
            .unwrap();
    }
    tx.send(snapshot_of(book("N", None, 30, 1), 1)).await.unwrap();
    // The clock is paused: the wait runs on virtual time, and the flush must come within one period.
    let started = tokio::time::Instant::now();
    let count = |m: &str| {
        let log = store.log.lock().unwrap();
        log.iter().find(|(k, _)| k.market_id == m).map_or(0, |(_, e)| e.len())
    };
    wait_until("the first flush", 5, || (count("M"), count("N")) == (5, 1)).await;
    assert!(
        started.elapsed() <= LOG_FLUSH + Duration::from_millis(100),
        "flushed within one period"
    );
    for v in 6..=9 {
        tx.send(delta_of(book("M", None, 40 + v, v), v)).await.unwrap();
    }
    // What is still buffered is written when the senders go away (shutdown).
    tx.send(snapshot_of(book("M", None, 60, 10), 10)).await.unwrap();
    drop(tx);
    writer.await.unwrap();
    // Nothing is sampled into the snapshot table any more.
    assert!(store.snapshots.lock().unwrap().is_empty());
    // The log holds every change of M, numbered from 1: the snapshots, the deltas as sent, the last snapshot.
    let log = store.log.lock().unwrap();
    let (_, m) = log.iter().find(|(k, _)| k.market_id == "M").unwrap();
    assert_eq!(kinds(m), "SSSSSddddS");
    assert_eq!(
        m.iter().map(|e| e.seq).collect::<Vec<_>>(),
        (1..=10).collect::<Vec<_>>()
    );
    assert_eq!(m[6].venue_seq, Some(7));
}

/// A store slower than the feeds never holds them up: while a write waits, the writer goes on taking
/// changes (here 1,000 through a queue of 64), and once the store answers they are all logged, in order,
/// without a gap.
#[tokio::test(start_paused = true)]
async fn a_slow_store_never_holds_up_the_feeds() {
    let store = Arc::new(MemStore::default());
    let held = store.append_gate.lock().await;
    let (tx, rx) = mpsc::channel(64);
    let writer = spawn_writer(&store, rx);
    tx.send(snapshot_of(book("M", None, 40, 1), 1)).await.unwrap();
    wait_until("a write under way", 5, || {
        store.appends_started.load(Ordering::SeqCst) == 1
    })
    .await;
    for v in 2..=1_001 {
        // The clock is paused: were the writer held up, the queue would stay full, the runtime idle, and
        // the timeout would fire at once.
        let sent = tokio::time::timeout(
            Duration::from_secs(1),
            tx.send(delta_of(book("M", None, 40 + v % 50, v), v)),
        )
        .await;
        assert!(matches!(sent, Ok(Ok(()))), "change {v} waited for the store");
    }
    drop(held);
    drop(tx);
    writer.await.unwrap();
    let log = store.log.lock().unwrap();
    let (_, m) = log.iter().find(|(k, _)| k.market_id == "M").unwrap();
    assert_eq!(
        m.iter().map(|e| e.seq).collect::<Vec<_>>(),
        (1..=1_001).collect::<Vec<_>>()
    );
    assert!(!kinds(m).contains('G'), "no gap: {}", kinds(m));
}

/// The log half of the book writer on a real SQLite store, fed as the feed feeds it (numbered by the live
/// books): keyframes by policy, one gap per loss, the live number of every change and gap equal to its
/// logged `seq`, a failed write retried without losing or renumbering events, a restart that continues from
/// the stored head after a restart gap, and a dropped buffer that leaves a hole right before its
/// `write_failed` gap, numbered and published by the live side.
#[tokio::test]
async fn book_log_numbering_keyframes_gaps_and_retries_on_a_real_store() {
    let db = crossbook_store::testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let store = db.store.as_ref();
    let a = BookKey::venue_a("A");
    let policy = KeyframePolicy {
        max_deltas: 3,
        max_age_ms: 60_000,
    };
    let live = LiveBooks::new();
    let bus = Bus::new(64);
    let health = VenueHealth::new(&live);
    let mut log = LogBuffer::new(policy, health.clone(), live.clone(), bus.clone());
    let all = async |db: &crossbook_store::testing::TestDb| {
        let r = db
            .store
            .log_events(
                &a,
                Timestamp::from_millis(0),
                Timestamp::from_millis(Timestamp::now().millis() + 60_000),
            )
            .await
            .unwrap();
        assert!(r.corrupt.is_empty());
        r.events
    };
    let seqs = |events: &[BookEvent]| events.iter().map(|e| e.seq).collect::<Vec<_>>();
    // The first event of a book is a keyframe even when the venue sent a delta; then deltas until the policy
    // asks for a keyframe (after 3).
    let mut live_seqs = Vec::new();
    for v in 1..=6 {
        live_seqs.extend(change_into(
            &live,
            &mut log,
            delta_of(book("A", None, 40 + v, v * 10), v),
        ));
    }
    log.flush(store).await;
    let events = all(&db).await;
    assert_eq!(kinds(&events), "SdddSd");
    assert_eq!(seqs(&events), [1, 2, 3, 4, 5, 6]);
    assert_eq!(live_seqs, seqs(&events), "the live numbers are the logged ones");
    match &events[4].change {
        BookChange::Snapshot { bids, .. } => assert_eq!(bids[0].price, Price::from_cents(45)),
        other => panic!("{other:?}"),
    }
    // A loss takes one number and writes one gap however often it is reported; the next change is a
    // keyframe.
    let keys = [a.clone(), BookKey::venue_a("never-seen")];
    assert_eq!(loss_into(&live, &mut log, &keys, GapCause::Disconnect, 70), [7]);
    assert!(loss_into(&live, &mut log, &keys, GapCause::Disconnect, 75).is_empty());
    assert_eq!(
        change_into(&live, &mut log, delta_of(book("A", None, 50, 80), 8)),
        Some(8)
    );
    log.flush(store).await;
    let events = all(&db).await;
    assert_eq!(kinds(&events), "SdddSdGS");
    assert_eq!(seqs(&events), (1..=8).collect::<Vec<_>>());
    assert_eq!(events[6].change, BookChange::Gap(GapCause::Disconnect));
    assert_eq!(events[6].received_at.millis(), 70);
    assert_eq!(health.get(Exchange::VenueA).map(|h| h.capture_gaps), Some(1));

    // A write that fails keeps its events; the next flush writes them with the new ones.
    let mut raw = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
    let (away, back) = (
        "ALTER TABLE book_chunks RENAME TO book_chunks_away",
        "ALTER TABLE book_chunks_away RENAME TO book_chunks",
    );
    sqlx::query(away).execute(&mut raw).await.unwrap();
    change_into(&live, &mut log, delta_of(book("A", None, 51, 90), 9));
    log.flush(store).await;
    assert_eq!(log.buffered(), 1);
    sqlx::query(back).execute(&mut raw).await.unwrap();
    change_into(&live, &mut log, delta_of(book("A", None, 52, 100), 10));
    log.flush(store).await;
    assert_eq!(log.buffered(), 0);
    let events = all(&db).await;
    assert_eq!(kinds(&events), "SdddSdGSdd");
    assert_eq!(seqs(&events), (1..=10).collect::<Vec<_>>());

    // A new process seeds its numbering with the stored heads: the book's first change takes the head + 2,
    // after a restart gap (head + 1) from the last stored event.
    let live = LiveBooks::new();
    let heads = store.log_heads(Exchange::VenueA).await.unwrap();
    live.seed(heads.into_iter().map(|h| (h.book, h.last_seq)));
    let mut bus_rx = bus.subscribe();
    let mut log = LogBuffer::new(policy, health.clone(), live.clone(), bus.clone()).with_bound(2);
    assert_eq!(
        change_into(&live, &mut log, delta_of(book("A", None, 53, 500), 11)),
        Some(12)
    );
    log.flush(store).await;
    let events = all(&db).await;
    assert_eq!(kinds(&events), "SdddSdGSddGS");
    assert_eq!(events[10].change, BookChange::Gap(GapCause::Restart));
    assert_eq!((events[10].seq, events[10].received_at.millis()), (11, 100));
    assert_eq!(events[11].seq, 12);

    // Past its bound the buffer is dropped: the events are gone from the log, and the write_failed gap takes
    // the book's next live number, published on the bus. An event numbered before that gap that arrives late
    // falls in the hole too.
    sqlx::query(away).execute(&mut raw).await.unwrap();
    for v in 13..=15 {
        change_into(&live, &mut log, delta_of(book("A", None, 60 + v, v * 100), v));
    }
    log.flush(store).await;
    assert_eq!(log.buffered(), 1, "dropped, and a gap buffered");
    match bus_rx.try_recv() {
        Ok(DomainEvent::BooksStale {
            keys,
            book_seqs,
            cause: GapCause::WriteFailed,
            ..
        }) => assert_eq!((keys, book_seqs), (vec![a.clone()], vec![16])),
        other => panic!("{other:?}"),
    }
    assert_eq!(live.last_seq(&a), 16);
    let late = delta_of(book("A", None, 20, 1_600), 15);
    let BookInput::Update {
        update, received_at, ..
    } = late
    else {
        unreachable!()
    };
    log.update(update, received_at, 15, None);
    sqlx::query(back).execute(&mut raw).await.unwrap();
    assert_eq!(
        change_into(&live, &mut log, delta_of(book("A", None, 70, 1_700), 17)),
        Some(17)
    );
    log.flush(store).await;
    assert_eq!(log.buffered(), 0);
    let events = all(&db).await;
    assert_eq!(kinds(&events), "SdddSdGSddGSGS");
    assert_eq!(seqs(&events)[10..], [11, 12, 16, 17]);
    assert_eq!(events[12].change, BookChange::Gap(GapCause::WriteFailed));
    // The rule: strictly increasing, with a hole only right before a gap event.
    for w in events.windows(2) {
        assert!(w[1].seq > w[0].seq);
        if w[1].seq > w[0].seq + 1 {
            assert!(matches!(w[1].change, BookChange::Gap(_)), "a hole before {:?}", w[1]);
        }
    }
    assert_eq!(live.last_seq(&a), events.last().unwrap().seq);
    db.cleanup().await;
}

#[tokio::test]
async fn trade_writer_publishes_only_new_trades() {
    let store = Arc::new(MemStore::default());
    let bus = Bus::new(64);
    let mut rx_bus = bus.subscribe();
    let (tx, rx) = mpsc::channel(8);
    let writer = tokio::spawn(trade_writer(store.clone(), bus.clone(), rx, 1_000));
    tx.send(vec![trade("a"), trade("b"), trade("a")]).await.unwrap();
    tx.send(vec![trade("b"), trade("c")]).await.unwrap();
    drop(tx);
    writer.await.unwrap();
    let mut published = Vec::new();
    while let Ok(DomainEvent::TradeIngested(t)) = rx_bus.try_recv() {
        published.push(t.source_trade_id);
    }
    assert_eq!(published, vec!["a", "b", "c"]);
    assert_eq!(store.trades.lock().unwrap().len(), 3);
}

// ------------------------------------------------------------------------------------------ fake venue

const COND: &str = "0xcond";
const UP: &str = "111";
const DOWN: &str = "222";

fn catalog() -> CatalogBatch {
    let series = Series::new(Exchange::VenueB, "S1", "BTC Up or Down 15m");
    let event = Event::new(Exchange::VenueB, "E1", "S1", "Bitcoin Up or Down");
    let market = Market {
        yes_token_id: Some(UP.into()),
        no_token_id: Some(DOWN.into()),
        slug: Some("btc-updown-15m-1778583600".into()),
        ..Market::new(Exchange::VenueB, COND, "E1", "S1", "Bitcoin Up or Down")
    };
    CatalogBatch {
        series: vec![series],
        events: vec![event],
        markets: vec![market],
    }
}

/// venue_b's protocol session against a local server, with a canned catalog and tape.
struct FakeVenue {
    ws_url: Option<String>,
    tape: Arc<Mutex<Vec<Trade>>>,
    books: Arc<Mutex<Vec<BookSnapshot>>>,
    /// How often the client sends venue_b's text `PING` (none: the venue pings, or nobody does).
    keepalive: Option<Duration>,
    /// Full catalog syncs and event lookups made.
    calls: Arc<Calls>,
}

#[derive(Default)]
struct Calls {
    syncs: AtomicUsize,
    lookups: Mutex<Vec<String>>,
}

impl Venue for FakeVenue {
    const EXCHANGE: Exchange = Exchange::VenueB;
    type Session = venue_b::ws::Session;

    async fn sync_catalog(&self, _followed: &[String]) -> Result<CatalogBatch, VenueError> {
        self.calls.syncs.fetch_add(1, Ordering::SeqCst);
        Ok(catalog())
    }

    async fn fetch_event(&self, event_id: &str) -> Result<Option<CatalogBatch>, VenueError> {
        self.calls.lookups.lock().unwrap().push(event_id.to_string());
        if event_id == "E3" {
            // The next window of the followed series, as Gamma lists it.
            let market = Market {
                yes_token_id: Some("555".into()),
                no_token_id: Some("666".into()),
                slug: Some("btc-updown-15m-1778584500".into()),
                ..Market::new(Exchange::VenueB, "0xcond3", "E3", "S1", "Bitcoin Up or Down")
            };
            return Ok(Some(CatalogBatch {
                series: vec![Series::new(Exchange::VenueB, "S1", "BTC Up or Down 15m")],
                events: vec![Event::new(Exchange::VenueB, "E3", "S1", "Bitcoin Up or Down")],
                markets: vec![market],
            }));
        }
        if event_id != "E2" {
            return Ok(None);
        }
        let market = Market {
            yes_token_id: Some("333".into()),
            no_token_id: Some("444".into()),
            ..Market::new(Exchange::VenueB, "0xcond2", "E2", "S2", "Lakers vs Celtics")
        };
        Ok(Some(CatalogBatch {
            series: vec![Series::new(Exchange::VenueB, "S2", "NBA")],
            events: vec![Event::new(Exchange::VenueB, "E2", "S2", "Lakers vs Celtics")],
            markets: vec![market],
        }))
    }

    async fn refresh_markets(&self, _: &[Market]) -> Result<Vec<Market>, VenueError> {
        Ok(Vec::new())
    }

    /// The books set, or a failed read when none is.
    async fn fetch_books(&self, _: &[Market]) -> Result<Vec<BookSnapshot>, VenueError> {
        let books = self.books.lock().unwrap().clone();
        if books.is_empty() {
            return Err(VenueError::Http {
                exchange: Exchange::VenueB,
                status: 503,
                url: "/books".into(),
                body: "unavailable".into(),
            });
        }
        Ok(books)
    }

    async fn fetch_trades(&self, _: &MarketSet, since: Timestamp) -> Result<Vec<Trade>, VenueError> {
        Ok(self
            .tape
            .lock()
            .unwrap()
            .iter()
            .filter(|t| t.executed_at >= since)
            .cloned()
            .collect())
    }

    fn ws_request(&self) -> Result<Option<Request>, VenueError> {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        Ok(match &self.ws_url {
            Some(u) => Some(u.as_str().into_client_request().map_err(|e| VenueError::WebSocket {
                exchange: Exchange::VenueB,
                reason: e.to_string(),
            })?),
            None => None,
        })
    }

    fn new_session(&self) -> Self::Session {
        venue_b::ws::Session::new()
    }

    fn polls_trades_with_ws(&self) -> bool {
        true
    }

    fn keepalive_interval(&self) -> Option<Duration> {
        self.keepalive
    }
}

// ------------------------------------------------------------------------------------------ fake server

/// What the server does with the current connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Answers subscriptions with books and forwards pushes.
    Normal,
    /// Pushes nothing, but still answers a (re)subscription: a resubscribe cures it.
    Muted,
    /// Answers nothing at all, keepalives included: only a reconnect cures it.
    Deaf,
    /// A quiet market on a healthy connection: no market changes to send, but keepalives answered (`PONG`)
    /// and, when [`Server::pings`] is on, a heartbeat ping frame sent every 100 ms (as venue_a does).
    Quiet,
}

/// A market-channel server speaking venue_b's protocol with one book per token (the "truth").
struct Server {
    url: String,
    connections: Arc<AtomicUsize>,
    /// Subscribe messages received, by connection number.
    subscribes: Arc<Mutex<Vec<usize>>>,
    truth: Arc<Mutex<BTreeMap<String, i64>>>,
    mode: Arc<Mutex<Mode>>,
    push: mpsc::UnboundedSender<ServerCmd>,
    /// Keepalives answered (`PONG`s) and heartbeat pings sent so far.
    keepalives: Arc<AtomicUsize>,
    /// Send heartbeat ping frames while quiet.
    pings: Arc<std::sync::atomic::AtomicBool>,
}

enum ServerCmd {
    Text(String),
    Drop,
}

fn book_frame(asset: &str, bid_cents: i64) -> String {
    let market = if ["555", "666"].contains(&asset) {
        "0xcond3"
    } else {
        COND
    };
    format!(
        r#"{{"event_type":"book","asset_id":"{asset}","market":"{market}","timestamp":"{}","bids":[{{"price":"0.{bid_cents:02}","size":"10"}}],"asks":[{{"price":"0.{:02}","size":"5"}}]}}"#,
        Timestamp::now().millis(),
        bid_cents + 2
    )
}

impl Server {
    async fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}/ws/market", listener.local_addr().unwrap());
        let connections = Arc::new(AtomicUsize::new(0));
        let subscribes = Arc::new(Mutex::new(Vec::new()));
        let truth = Arc::new(Mutex::new(BTreeMap::from([
            (UP.to_string(), 51),
            (DOWN.to_string(), 47),
        ])));
        let mode = Arc::new(Mutex::new(Mode::Normal));
        let (push, mut push_rx) = mpsc::unbounded_channel::<ServerCmd>();
        let (conns, subs, tr, md) = (connections.clone(), subscribes.clone(), truth.clone(), mode.clone());
        let keepalives = Arc::new(AtomicUsize::new(0));
        let pings = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (kas, pgs) = (keepalives.clone(), pings.clone());
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let Ok(mut ws) = tokio_tungstenite::accept_async(tcp).await else {
                    continue;
                };
                let n = conns.fetch_add(1, Ordering::SeqCst);
                *md.lock().unwrap() = Mode::Normal;
                let mut heartbeat = tokio::time::interval(Duration::from_millis(100));
                loop {
                    tokio::select! {
                        _ = heartbeat.tick() => {
                            if *md.lock().unwrap() == Mode::Quiet && pgs.load(Ordering::SeqCst) {
                                kas.fetch_add(1, Ordering::SeqCst);
                                let _ = ws.send(Message::Ping(b"heartbeat".to_vec().into())).await;
                            }
                        }
                        msg = ws.next() => match msg {
                            Some(Ok(Message::Text(t))) => {
                                let t = t.to_string();
                                if t == "PING" {
                                    if *md.lock().unwrap() != Mode::Deaf {
                                        kas.fetch_add(1, Ordering::SeqCst);
                                        let _ = ws.send(Message::Text("PONG".into())).await;
                                    }
                                    continue;
                                }
                                let v: serde_json::Value = serde_json::from_str(&t).unwrap_or_default();
                                let subscribing = v["type"] == "market" || v["operation"] == "subscribe";
                                if !subscribing {
                                    continue;
                                }
                                subs.lock().unwrap().push(n);
                                if matches!(*md.lock().unwrap(), Mode::Deaf | Mode::Quiet) {
                                    continue;
                                }
                                let frames: Vec<String> = tr
                                    .lock()
                                    .unwrap()
                                    .iter()
                                    .map(|(a, c)| book_frame(a, *c))
                                    .collect();
                                let _ = ws.send(Message::Text(format!("[{}]", frames.join(",")).into())).await;
                            }
                            Some(Ok(_)) => {}
                            _ => break,
                        },
                        cmd = push_rx.recv() => match cmd {
                            Some(ServerCmd::Text(t)) => {
                                if *md.lock().unwrap() == Mode::Normal {
                                    let _ = ws.send(Message::Text(t.into())).await;
                                }
                            }
                            Some(ServerCmd::Drop) | None => break,
                        },
                    }
                }
            }
        });
        Server {
            url,
            connections,
            subscribes,
            truth,
            mode,
            push,
            keepalives,
            pings,
        }
    }

    fn set_truth(&self, asset: &str, bid_cents: i64) {
        self.truth.lock().unwrap().insert(asset.into(), bid_cents);
    }

    fn subscribes_on(&self, conn: usize) -> usize {
        self.subscribes.lock().unwrap().iter().filter(|c| **c == conn).count()
    }
}

fn test_config() -> IngestConfig {
    IngestConfig {
        catalog_sync_seconds: 60,
        feed_silence_seconds: 1,
        reconnect_initial_ms: 20,
        reconnect_max_ms: 200,
        trade_poll_ms: 100,
        book_poll_ms: 100,
        ..IngestConfig::default()
    }
}

fn best_bid(live: &LiveBooks, asset: &str) -> Option<i64> {
    live.get(&BookKey::venue_b(COND, asset))
        .and_then(|b| b.bids.first().map(|l| l.price.micros() / 10_000))
}

#[tokio::test]
async fn feed_survives_malformed_frames_silence_and_drops_and_stores_trades_once() {
    let server = Server::start().await;
    let store = Arc::new(MemStore::default());
    let (live, bus, health) = {
        let live = LiveBooks::new();
        let health = VenueHealth::new(&live);
        (live, Bus::new(1024), health)
    };
    let mut bus_rx = bus.subscribe();
    let tape = Arc::new(Mutex::new(vec![trade("t1")]));
    let venue = FakeVenue {
        ws_url: Some(server.url.clone()),
        tape: tape.clone(),
        books: Arc::default(),
        keepalive: None,
        calls: Arc::default(),
    };
    let (cancel, tracker) = (CancellationToken::new(), TaskTracker::new());
    let handle = Ingest::start_venue(
        venue,
        &test_config(),
        store.clone(),
        live.clone(),
        bus.clone(),
        health.clone(),
        cancel.clone(),
        &tracker,
    );

    // Catalog stored, books equal the server's.
    wait_until("books from the first connection", 10, || {
        best_bid(&live, UP) == Some(51) && best_bid(&live, DOWN) == Some(47)
    })
    .await;
    assert!(
        store
            .markets
            .lock()
            .unwrap()
            .contains_key(&(Exchange::VenueB, COND.to_string()))
    );
    assert!(
        health
            .get(Exchange::VenueB)
            .is_some_and(|h| h.connected && h.mode == FeedMode::WebSocket)
    );

    // A malformed frame is counted and skipped; the next update still applies.
    server.push.send(ServerCmd::Text("{garbage".into())).unwrap();
    server
        .push
        .send(ServerCmd::Text(format!(
            r#"{{"event_type":"price_change","market":"{COND}","timestamp":"1","price_changes":[{{"asset_id":"{UP}","price":"0.52","size":"4","side":"BUY"}}]}}"#
        )))
        .unwrap();
    wait_until("the update after a malformed frame", 10, || {
        best_bid(&live, UP) == Some(52)
    })
    .await;
    assert_eq!(health.get(Exchange::VenueB).map(|h| h.malformed), Some(1));

    // Silent but open: the watchdog resubscribes on the same socket and the fresh books arrive.
    *server.mode.lock().unwrap() = Mode::Muted;
    server.set_truth(UP, 55);
    wait_until("resubscription after silence", 10, || best_bid(&live, UP) == Some(55)).await;
    assert!(server.subscribes_on(0) >= 2, "resubscribed on connection 0");
    assert_eq!(server.connections.load(Ordering::SeqCst), 1, "no reconnect needed");

    // Deaf: the resubscription brings nothing either, so the feed reconnects.
    *server.mode.lock().unwrap() = Mode::Deaf;
    server.set_truth(UP, 57);
    wait_until("reconnect after a deaf resubscription", 15, || {
        best_bid(&live, UP) == Some(57)
    })
    .await;
    assert_eq!(server.connections.load(Ordering::SeqCst), 2);

    // Dropped socket: reconnect and converge on the new state.
    server.set_truth(DOWN, 44);
    server.push.send(ServerCmd::Drop).unwrap();
    wait_until("reconnect after a drop", 10, || {
        server.connections.load(Ordering::SeqCst) == 3 && best_bid(&live, DOWN) == Some(44)
    })
    .await;
    assert!(
        health
            .get(Exchange::VenueB)
            .is_some_and(|h| h.reconnects >= 2 && h.connected)
    );

    // The tape was read many times and across reconnects: t1 is stored and published once.
    tape.lock().unwrap().push(trade("t2"));
    wait_until("t2 stored", 10, || store.trades.lock().unwrap().len() == 2).await;
    let mut published = Vec::new();
    while let Ok(ev) = bus_rx.try_recv() {
        if let DomainEvent::TradeIngested(t) = ev {
            published.push(t.source_trade_id);
        }
    }
    assert_eq!(published, vec!["t1", "t2"]);

    // Book changes reached the event log.
    wait_until("book events logged", 10, || {
        store.log.lock().unwrap().iter().any(|(_, e)| !e.is_empty())
    })
    .await;

    // Following an event adds its markets to the feed.
    let before = server.subscribes.lock().unwrap().len();
    let ev = handle.follow_event(Exchange::VenueB, "E2").await.unwrap();
    assert_eq!(ev.map(|e| e.event_id).as_deref(), Some("E2"));
    assert!(
        store
            .events
            .lock()
            .unwrap()
            .contains_key(&(Exchange::VenueB, "E2".to_string()))
    );
    wait_until("subscription of the followed event", 10, || {
        server.subscribes.lock().unwrap().len() > before
    })
    .await;
    assert!(handle.follow_event(Exchange::VenueB, "nope").await.unwrap().is_none());
    assert!(matches!(
        handle.follow_event(Exchange::VenueA, "E2").await,
        Err(FollowError::NotRunning(Exchange::VenueA))
    ));

    cancel.cancel();
    tracker.close();
    tokio::time::timeout(Duration::from_secs(10), tracker.wait())
        .await
        .expect("every worker stops on cancel");
}

/// A quiet market on a healthy connection: the venue sends no changes but answers the client's `PING`s
/// (venue_b) or sends heartbeat pings (venue_a). The watchdog counts these as liveness: no resubscription,
/// no reconnect and no `silence` gap however long the quiet lasts, and the data's age is not reset by them.
/// Once everything stops (no keepalives either), the books get their `silence` gap and the feed reconnects.
#[tokio::test]
async fn keepalives_keep_a_quiet_feed_without_silence_gaps() {
    for venue_pings in [false, true] {
        let server = Server::start().await;
        server.pings.store(venue_pings, Ordering::SeqCst);
        let (live, bus, health) = {
            let live = LiveBooks::new();
            let health = VenueHealth::new(&live);
            (live, Bus::new(1024), health)
        };
        let mut bus_rx = bus.subscribe();
        let venue = FakeVenue {
            ws_url: Some(server.url.clone()),
            tape: Arc::default(),
            books: Arc::default(),
            // The client pings (venue_b) unless the venue does (venue_a).
            keepalive: (!venue_pings).then_some(Duration::from_millis(100)),
            calls: Arc::default(),
        };
        let (cancel, tracker) = (CancellationToken::new(), TaskTracker::new());
        Ingest::start_venue(
            venue,
            &test_config(),
            Arc::new(MemStore::default()),
            live.clone(),
            bus,
            health.clone(),
            cancel.clone(),
            &tracker,
        );
        wait_until("books from the first connection", 10, || {
            best_bid(&live, UP) == Some(51)
        })
        .await;
        let data_at = health.get(Exchange::VenueB).and_then(|h| h.last_message_at);

        // Quiet for over three silence limits (1 s each), counted in keepalives (100 ms apart).
        *server.mode.lock().unwrap() = Mode::Quiet;
        let from = server.keepalives.load(Ordering::SeqCst);
        wait_until("35 keepalives while quiet", 20, || {
            server.keepalives.load(Ordering::SeqCst) >= from + 35
        })
        .await;
        let h = health.get(Exchange::VenueB).unwrap();
        assert_eq!(
            server.subscribes_on(0),
            1,
            "pings {venue_pings}: resubscribed while quiet"
        );
        assert_eq!(
            server.connections.load(Ordering::SeqCst),
            1,
            "pings {venue_pings}: reconnected"
        );
        assert_eq!(best_bid(&live, UP), Some(51), "the books are still held and fresh");
        assert_eq!(h.last_message_at, data_at, "keepalives do not make the data younger");
        assert!(h.last_alive_at > data_at, "but show the connection alive: {h:?}");
        assert_eq!(
            h.freshness(Timestamp::now(), Duration::from_secs(60)),
            crate::Freshness::Fresh
        );
        let mut silence_gaps = 0;
        while let Ok(ev) = bus_rx.try_recv() {
            if let DomainEvent::BooksStale { cause, .. } = ev {
                assert_ne!(
                    cause,
                    GapCause::Silence,
                    "pings {venue_pings}: a silence gap while quiet"
                );
            }
        }

        // Everything stops: a silence gap, then a reconnect.
        *server.mode.lock().unwrap() = Mode::Deaf;
        server.pings.store(false, Ordering::SeqCst);
        testing_deadline(15, async || {
            while let Ok(ev) = bus_rx.recv().await {
                if let DomainEvent::BooksStale {
                    cause: GapCause::Silence,
                    ..
                } = ev
                {
                    silence_gaps += 1;
                    return;
                }
            }
        })
        .await;
        assert_eq!(silence_gaps, 1);
        wait_until("a reconnect after everything stopped", 15, || {
            server.connections.load(Ordering::SeqCst) == 2
        })
        .await;

        cancel.cancel();
        tracker.close();
        tokio::time::timeout(Duration::from_secs(10), tracker.wait())
            .await
            .expect("stops on cancel");
    }
}

/// Runs `f` to its end within `secs`, or fails.
async fn testing_deadline(secs: u64, f: impl AsyncFnOnce()) {
    tokio::time::timeout(Duration::from_secs(secs), f())
        .await
        .expect("within the deadline");
}

#[tokio::test]
async fn without_a_websocket_the_feed_polls_rest_books() {
    let store = Arc::new(MemStore::default());
    let (live, bus, health) = {
        let live = LiveBooks::new();
        let health = VenueHealth::new(&live);
        (live, Bus::default(), health)
    };
    let books = Arc::new(Mutex::new(vec![book(COND, Some(UP), 51, 1)]));
    let venue = FakeVenue {
        ws_url: None,
        tape: Arc::default(),
        books: books.clone(),
        keepalive: None,
        calls: Arc::default(),
    };
    let (cancel, tracker) = (CancellationToken::new(), TaskTracker::new());
    Ingest::start_venue(
        venue,
        &test_config(),
        store,
        live.clone(),
        bus,
        health.clone(),
        cancel.clone(),
        &tracker,
    );
    wait_until("a polled book", 10, || best_bid(&live, UP) == Some(51)).await;
    *books.lock().unwrap() = vec![book(COND, Some(UP), 49, 2)];
    wait_until("the next poll", 10, || best_bid(&live, UP) == Some(49)).await;
    assert!(
        health
            .get(Exchange::VenueB)
            .is_some_and(|h| h.mode == FeedMode::Polling && h.connected)
    );
    cancel.cancel();
    tracker.close();
    tokio::time::timeout(Duration::from_secs(10), tracker.wait())
        .await
        .expect("stops on cancel");
}

/// One number per book event, given at ingest: the bus's `book_seq` of every change and gap is the logged
/// `seq` of the same event, and the numbering continues from the log's stored head (read again after a
/// failed read, never started from 0) after a restart gap. A second failed poll of a stale book takes no
/// number.
#[tokio::test]
async fn the_feed_numbers_changes_and_gaps_as_the_log_does_continuing_from_the_stored_heads() {
    let store = Arc::new(MemStore::default());
    let key = BookKey::of(&book(COND, Some(UP), 51, 1));
    // An earlier process stored five events of the YES book.
    let id = store.register_log_books(std::slice::from_ref(&key)).await.unwrap()[0].id;
    let stored: Vec<BookEvent> = (1..=5)
        .map(|seq| BookEvent {
            seq,
            venue_seq: None,
            venue_ts: None,
            received_at: Timestamp::from_millis(seq as i64 * 10),
            change: BookChange::Delta(Vec::new()),
        })
        .collect();
    store
        .append_log(&[LogRun {
            book_id: id,
            events: stored,
        }])
        .await
        .unwrap();
    store.heads_fail.store(2, Ordering::SeqCst);
    let live = LiveBooks::new();
    let (bus, health) = (Bus::new(256), VenueHealth::new(&live));
    let mut bus_rx = bus.subscribe();
    let books = Arc::new(Mutex::new(vec![book(COND, Some(UP), 51, 1)]));
    let venue = FakeVenue {
        ws_url: None,
        tape: Arc::default(),
        books: books.clone(),
        keepalive: None,
        calls: Arc::default(),
    };
    let (cancel, tracker) = (CancellationToken::new(), TaskTracker::new());
    Ingest::start_venue(
        venue,
        &test_config(),
        store.clone(),
        live.clone(),
        bus,
        health.clone(),
        cancel.clone(),
        &tracker,
    );
    wait_until("a polled book", 10, || best_bid(&live, UP) == Some(51)).await;
    assert_eq!(store.heads_fail.load(Ordering::SeqCst), 0, "the heads were read again");
    assert_eq!(
        live.entry(&key).map(|e| e.seq),
        Some(7),
        "after the stored 5 and the restart gap 6"
    );
    // Reads fail (a gap, once however many fail), then succeed with a new book.
    let part = || health.get(Exchange::VenueB).unwrap().parts[crate::health::Part::Books as usize].clone();
    // The failed reads of the heads showed on the books part.
    let error = part().last_error.unwrap_or_default();
    assert!(error.contains("last numbers"), "{error}");
    books.lock().unwrap().clear();
    wait_until("the book stale", 10, || live.entry(&key).is_some_and(|e| e.stale)).await;
    wait_until("a second failed poll", 10, || part().failures >= 2).await;
    *books.lock().unwrap() = vec![book(COND, Some(UP), 49, 2)];
    wait_until("the next poll", 10, || best_bid(&live, UP) == Some(49)).await;
    let logged = || {
        let log = store.log.lock().unwrap();
        log.iter()
            .find(|(k, _)| *k == key)
            .map(|(_, es)| es.iter().map(|e| (e.seq, e.change.clone())).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    wait_until("the log flushed", 10, || logged().len() == 9).await;
    cancel.cancel();
    tracker.close();
    tokio::time::timeout(Duration::from_secs(10), tracker.wait())
        .await
        .expect("stops on cancel");

    let mut on_bus = Vec::new();
    while let Ok(ev) = bus_rx.try_recv() {
        match ev {
            DomainEvent::BookUpdated(c) if c.key == key => on_bus.push((c.book_seq, 'S')),
            DomainEvent::BooksStale { keys, book_seqs, .. } => {
                on_bus.extend(
                    keys.iter()
                        .zip(book_seqs)
                        .filter(|(k, _)| **k == key)
                        .map(|(_, s)| (s, 'G')),
                );
            }
            _ => {}
        }
    }
    let logged: Vec<(u64, char)> = logged()
        .into_iter()
        .map(|(seq, c)| {
            let kind = match c {
                BookChange::Snapshot { .. } => 'S',
                BookChange::Delta(_) => 'd',
                BookChange::Gap(GapCause::Restart) => 'R',
                BookChange::Gap(_) => 'G',
            };
            (seq, kind)
        })
        .collect();
    assert_eq!(
        logged[5..],
        [(6, 'R'), (7, 'S'), (8, 'G'), (9, 'S')],
        "the restart gap, the first change, the failed poll's gap, the next change"
    );
    assert_eq!(
        on_bus,
        [(7, 'S'), (8, 'G'), (9, 'S')],
        "the bus carries the logged numbers"
    );
}

#[tokio::test]
async fn bad_credentials_fail_at_start() {
    let cfg = IngestConfig {
        venue_a_key_id: "k".into(),
        venue_a_private_key_file: "/nonexistent/key.pem".into(),
        venue_b_enabled: false,
        ..IngestConfig::default()
    };
    let tracker = TaskTracker::new();
    let err = Ingest::start(
        cfg,
        Arc::new(MemStore::default()),
        LiveBooks::new(),
        Bus::default(),
        VenueHealth::new(&LiveBooks::new()),
        CancellationToken::new(),
        &tracker,
    )
    .unwrap_err();
    assert!(matches!(err, VenueError::Credentials { .. }), "{err}");
    assert!(tracker.is_empty(), "nothing started");
    let half = IngestConfig {
        venue_a_key_id: "k".into(),
        venue_b_enabled: false,
        ..IngestConfig::default()
    };
    assert!(
        Ingest::start(
            half,
            Arc::new(MemStore::default()),
            LiveBooks::new(),
            Bus::default(),
            VenueHealth::new(&LiveBooks::new()),
            CancellationToken::new(),
            &tracker,
        )
        .is_err()
    );
}

#[test]
fn config_lists_and_defaults() {
    assert_eq!(
        split_list(" KXBTC15M, KXBTCD,,KXBTC "),
        vec!["KXBTC15M", "KXBTCD", "KXBTC"]
    );
    assert!(split_list("").is_empty());
    let c = IngestConfig::default();
    // The endpoints' defaults live in the server's `config.default.toml` only.
    assert!(c.venue_a_rest_url.is_empty() && c.venue_b_ws_url.is_empty() && c.venue_a_series.is_empty());
    assert_eq!(c.venue_a().key_id, None, "empty means no credentials");
    let _ = Status::Active;
}

// ------------------------------------------------------------------------------------------ one match, several frames

/// The books and the three frames of one match as venue_b sends it (PROTOCOLS B.5: `price_changes` items with
/// the token's best prices after the whole match), on a 0.001 grid: a sell at 0.301 takes the Up bids at 0.30
/// and 0.311 and rests at 0.301. Applied frame by frame, the first two frames leave the Up book crossed (bid
/// 0.311 over ask 0.301) while the venue already says its best bid is 0.29.
fn burst() -> (String, [String; 3]) {
    let book = |asset: &str, bids: &str, asks: &str| {
        format!(
            r#"{{"event_type": "book", "asset_id": "{asset}", "market": "{COND}", "timestamp": "1778584051000",
            "bids": [{bids}], "asks": [{asks}], "tick_size": "0.001"}}"#
        )
    };
    let lv = |p: &str, s: &str| format!(r#"{{"price": "{p}", "size": "{s}"}}"#);
    let up = book(
        UP,
        &[lv("0.29", "100"), lv("0.30", "40"), lv("0.311", "50")].join(","),
        &[lv("0.33", "60"), lv("0.32", "80")].join(","),
    );
    let down = book(
        DOWN,
        &[lv("0.67", "60"), lv("0.68", "80")].join(","),
        &[lv("0.71", "100"), lv("0.70", "40"), lv("0.689", "50")].join(","),
    );
    let frame = |up: (&str, &str, &str), down: (&str, &str, &str)| {
        format!(
            r#"{{"event_type": "price_change", "market": "{COND}", "timestamp": "1778584051512", "price_changes": [
            {{"asset_id": "{UP}", "price": "{}", "size": "{}", "side": "{}", "hash": "a", "best_bid": "0.29", "best_ask": "0.301"}},
            {{"asset_id": "{DOWN}", "price": "{}", "size": "{}", "side": "{}", "hash": "b", "best_bid": "0.699", "best_ask": "0.71"}}]}}"#,
            up.0, up.1, up.2, down.0, down.1, down.2
        )
    };
    (
        format!("[{up}, {down}]"),
        [
            frame(("0.301", "30", "SELL"), ("0.699", "30", "BUY")),
            frame(("0.30", "0", "BUY"), ("0.70", "0", "SELL")),
            frame(("0.311", "0", "BUY"), ("0.689", "0", "SELL")),
        ],
    )
}

/// Replays `changes` and returns each state's best bid and ask (none in a gap).
fn tops<'a>(changes: impl Iterator<Item = &'a BookChange>) -> Vec<Option<(Option<Price>, Option<Price>)>> {
    let mut state = crossbook_core::book::BookState::from_ladders(None);
    changes
        .map(|c| {
            let _ = state.apply(c);
            state
                .ladders()
                .map(|l| (l.bids.first().map(|x| x.price), l.asks.first().map(|x| x.price)))
        })
        .collect()
}

fn is_crossed(top: &Option<(Option<Price>, Option<Price>)>) -> bool {
    matches!(top, Some((Some(b), Some(a))) if b >= a)
}

/// Through the real connector (session, publish, book writer): the match's frames never put a crossed book in
/// the live map, on the bus or in the event log; the book goes out once, after the match, with the venue's
/// best prices.
#[tokio::test]
async fn a_match_sent_as_several_frames_is_never_stored_or_served_crossed() {
    let server = Server::start().await;
    let store = Arc::new(MemStore::default());
    let (live, bus, health) = {
        let live = LiveBooks::new();
        let health = VenueHealth::new(&live);
        (live, Bus::new(4096), health)
    };
    let mut bus_rx = bus.subscribe();
    let venue = FakeVenue {
        ws_url: Some(server.url.clone()),
        tape: Arc::default(),
        books: Arc::default(),
        keepalive: None,
        calls: Arc::default(),
    };
    let (cancel, tracker) = (CancellationToken::new(), TaskTracker::new());
    Ingest::start_venue(
        venue,
        &test_config(),
        store.clone(),
        live.clone(),
        bus,
        health,
        cancel.clone(),
        &tracker,
    );
    wait_until("books from the first connection", 10, || {
        best_bid(&live, UP) == Some(51)
    })
    .await;
    let (books, frames) = burst();
    server.push.send(ServerCmd::Text(books)).unwrap();
    let top = |asset: &str| {
        live.get(&BookKey::venue_b(COND, asset))
            .map(|b| (b.bids.first().map(|l| l.price), b.asks.first().map(|l| l.price)))
    };
    let price = |s: &str| Some(s.parse::<Price>().unwrap());
    wait_until("the match's starting book", 10, || {
        top(UP) == Some((price("0.311"), price("0.32")))
    })
    .await;
    for f in frames {
        server.push.send(ServerCmd::Text(f)).unwrap();
    }
    wait_until("the book after the match", 10, || {
        top(UP) == Some((price("0.29"), price("0.301"))) && top(DOWN) == Some((price("0.699"), price("0.71")))
    })
    .await;

    // The bus (what the stream and the scanner read): after the starting snapshot, one delta per token.
    let mut seen: BTreeMap<String, Vec<BookChange>> = BTreeMap::new();
    while let Ok(ev) = bus_rx.try_recv() {
        if let DomainEvent::BookUpdated(b) = ev {
            seen.entry(b.key.asset_id.clone().unwrap_or_default())
                .or_default()
                .push(b.change.clone());
        }
    }
    for asset in [UP, DOWN] {
        let changes = &seen[asset];
        let tops = tops(changes.iter());
        assert!(!tops.iter().any(is_crossed), "{asset}: crossed on the bus: {tops:?}");
        let start = changes
            .iter()
            .rposition(|c| matches!(c, BookChange::Snapshot { bids, .. } if bids.len() == 3 || bids.len() == 2))
            .expect("the starting snapshot");
        assert!(
            matches!(&changes[start + 1..], [BookChange::Delta(d)] if d.len() == 3),
            "{asset}: one delta with the match's three changes: {:?}",
            &changes[start + 1..]
        );
    }

    // The event log: replayed event by event, never crossed, and ending at the venue's best prices.
    wait_until("the match in the event log", 10, || {
        store.log.lock().unwrap().iter().any(|(k, events)| {
            k.asset_id.as_deref() == Some(UP)
                && tops(events.iter().map(|e| &e.change)).last() == Some(&Some((price("0.29"), price("0.301"))))
        })
    })
    .await;
    for (key, events) in store.log.lock().unwrap().iter() {
        let tops = tops(events.iter().map(|e| &e.change));
        assert!(!tops.iter().any(is_crossed), "{key:?}: crossed in the log: {tops:?}");
    }

    cancel.cancel();
    tracker.close();
    tokio::time::timeout(Duration::from_secs(10), tracker.wait())
        .await
        .expect("stops on cancel");
}

// ------------------------------------------------------------------------------------------ catalog notices

/// `new_market` broadcasts for every market of the venue (one of them the next window of the followed series)
/// and `market_resolved` ones: the followed new market is looked up once and gets its book, a followed market
/// that resolves is closed and unfollowed, the rest is ignored without a lookup, and full catalog syncs stay
/// on their `catalog_sync_seconds` schedule however many announcements come (time is paused: the schedule is
/// checked against the runtime's clock).
#[tokio::test(start_paused = true)]
async fn new_market_storms_are_targeted_updates_and_full_syncs_keep_their_schedule() {
    let server = Server::start().await;
    server.set_truth("555", 40);
    server.set_truth("666", 58);
    let store = Arc::new(MemStore::default());
    let (live, bus, health) = {
        let live = LiveBooks::new();
        let health = VenueHealth::new(&live);
        (live, Bus::new(1024), health)
    };
    let calls = Arc::new(Calls::default());
    let venue = FakeVenue {
        ws_url: Some(server.url.clone()),
        tape: Arc::default(),
        books: Arc::default(),
        // Keepalives answered: the feed is never silent while the clock jumps ahead.
        keepalive: Some(Duration::from_millis(100)),
        calls: calls.clone(),
    };
    let cfg = IngestConfig {
        catalog_sync_seconds: 60,
        ..test_config()
    };
    let (cancel, tracker) = (CancellationToken::new(), TaskTracker::new());
    Ingest::start_venue(
        venue,
        &cfg,
        store.clone(),
        live.clone(),
        bus,
        health,
        cancel.clone(),
        &tracker,
    );
    let started = tokio::time::Instant::now();
    wait_until("books from the first connection", 10, || {
        best_bid(&live, UP) == Some(51)
    })
    .await;
    assert_eq!(calls.syncs.load(Ordering::SeqCst), 1);
    let syncs_allowed = || 1 + (started.elapsed().as_secs() / 60) as usize;

    let new_market = |i: usize| {
        let (market, slug, event) = if i == 500 {
            (
                "0xcond3".to_string(),
                "btc-updown-15m-1778584500".to_string(),
                "E3".to_string(),
            )
        } else {
            (
                format!("0xother{i}"),
                format!("eth-updown-5m-{}", 1_778_584_500 + 300 * i),
                format!("X{i}"),
            )
        };
        format!(
            r#"{{"event_type": "new_market", "id": "{i}", "question": "Ethereum Up or Down", "market": "{market}",
            "slug": "{slug}", "assets_ids": ["{i}1", "{i}2"], "outcomes": ["Up", "Down"], "timestamp": "1778584051512",
            "event_message": {{"id": "{event}", "ticker": "{slug}", "slug": "{slug}", "title": "t"}}}}"#
        )
    };
    for i in 0..1_000 {
        server.push.send(ServerCmd::Text(new_market(i))).unwrap();
    }
    wait_until("the book of the followed new market", 10, || {
        live.get(&BookKey::venue_b("0xcond3", "555"))
            .and_then(|b| b.bids.first().map(|l| l.price))
            == Some(Price::from_cents(40))
    })
    .await;
    assert_eq!(
        *calls.lookups.lock().unwrap(),
        vec!["E3"],
        "one lookup, for the followed family only"
    );
    assert!(
        store
            .markets
            .lock()
            .unwrap()
            .contains_key(&(Exchange::VenueB, "0xcond3".to_string())),
        "the new market is stored"
    );
    let syncs = calls.syncs.load(Ordering::SeqCst);
    assert!(
        syncs <= syncs_allowed(),
        "{syncs} full syncs in {:?}",
        started.elapsed()
    );

    // A followed market resolves: closed in the store, priced by its winner, and no longer followed.
    server
        .push
        .send(ServerCmd::Text(format!(
            r#"{{"event_type": "market_resolved", "id": "1", "market": "{COND}", "assets_ids": ["{UP}", "{DOWN}"],
            "winning_asset_id": "{DOWN}", "winning_outcome": "Down", "timestamp": "1778584951000"}}"#
        )))
        .unwrap();
    wait_until("the resolved market closed", 10, || {
        store
            .markets
            .lock()
            .unwrap()
            .get(&(Exchange::VenueB, COND.to_string()))
            .is_some_and(|(m, _)| m.status == Status::Closed)
    })
    .await;
    let closed = store.markets.lock().unwrap()[&(Exchange::VenueB, COND.to_string())]
        .0
        .clone();
    assert_eq!(closed.settled_at, Some(Timestamp::from_millis(1_778_584_951_000)));
    assert_eq!(closed.last_yes_price, Some(Price::ZERO), "Down won");
    wait_until("its books dropped", 10, || {
        live.get(&BookKey::venue_b(COND, UP)).is_none()
    })
    .await;

    // Three minutes of announcements, a burst every ten seconds: the full syncs stay on their schedule.
    for round in 0..18 {
        for i in 0..100 {
            server
                .push
                .send(ServerCmd::Text(new_market(1_000 + round * 100 + i)))
                .unwrap();
        }
        tokio::time::sleep(Duration::from_secs(10)).await;
    }
    let syncs = calls.syncs.load(Ordering::SeqCst);
    assert!(
        (3..=syncs_allowed()).contains(&syncs),
        "{syncs} full syncs in {:?}",
        started.elapsed()
    );
    assert_eq!(
        calls.lookups.lock().unwrap().len(),
        1,
        "still no lookups for other series"
    );

    cancel.cancel();
    tracker.close();
    tokio::time::timeout(Duration::from_secs(10), tracker.wait())
        .await
        .expect("stops on cancel");
}
