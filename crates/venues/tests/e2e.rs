//! End to end: the real connectors against the simulated venues (`crossbook-sim`, speaking both wire
//! protocols on loopback) with a real SQLite store.
//!
//! Every wait is on a condition with a deadline; nothing sleeps a fixed time and hopes.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use crossbook_core::{
    Amount, BookSnapshot, Exchange, IntervalCode, Outcome, Status, TakerSide, Timestamp, Trade,
    book::{BookState, GapCause},
};
use crossbook_live::{BookKey, Bus, DomainEvent, LiveBooks};
use crossbook_sim::{Phase, SimConfig, SimHandle, SimMarket, SimRates, SimScale, Simulator};
use crossbook_store::{
    MarketQuery, MarketSort, Store,
    books::history::books_as_of,
    testing::{self, TestDb},
};
use crossbook_venues::{FeedMode, Ingest, IngestConfig, IngestHandle, VenueHealth};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

const A: Exchange = Exchange::VenueA;
const B: Exchange = Exchange::VenueB;

/// Every `TradeIngested` seen on the bus: how many times, by venue and venue trade id.
type Published = Arc<Mutex<HashMap<(Exchange, String), (usize, Trade)>>>;

/// Held by each test of the full-scale simulator for its whole run: two whole venues at once, each with its
/// ingestion, are more than a small test machine serves within the tests' deadlines.
static FULL_SCALE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Everything a test holds on to.
struct Harness {
    sim: SimHandle,
    db: TestDb,
    live: LiveBooks,
    health: VenueHealth,
    cancel: CancellationToken,
    tracker: TaskTracker,
    #[allow(dead_code)]
    handle: IngestHandle,
    /// Every `TradeIngested` seen on the bus, by venue trade id.
    published: Published,
    stale_events: Arc<Mutex<Vec<Exchange>>>,
    /// Every book the bus said went stale, with the cause, in order.
    stale_keys: Arc<Mutex<Vec<(BookKey, GapCause)>>>,
}

fn config(sim: &SimHandle, credentials: bool) -> IngestConfig {
    let u = sim.urls();
    IngestConfig {
        venue_a_rest_url: u.venue_a_rest_url.clone(),
        venue_a_ws_url: u.venue_a_ws_url.clone(),
        venue_a_key_id: if credentials {
            u.venue_a_key_id.clone()
        } else {
            String::new()
        },
        venue_a_private_key_file: if credentials {
            u.venue_a_private_key_file.display().to_string()
        } else {
            String::new()
        },
        // Everything the venues list: BTC windows, games, one-venue markets.
        venue_a_series: Vec::new(),
        venue_b_gamma_url: u.venue_b_gamma_url.clone(),
        venue_b_clob_url: u.venue_b_clob_url.clone(),
        venue_b_data_url: u.venue_b_data_url.clone(),
        venue_b_ws_url: u.venue_b_ws_url.clone(),
        venue_b_series: Vec::new(),
        catalog_sync_seconds: 5,
        feed_silence_seconds: 2,
        venue_a_requests_per_second: 200,
        venue_b_requests_per_second: 200,
        trade_poll_ms: 500,
        book_poll_ms: 500,
        reconnect_initial_ms: 50,
        reconnect_max_ms: 500,
        ..IngestConfig::default()
    }
}

async fn start(seed: u64, cfg: impl FnOnce(&SimHandle) -> IngestConfig) -> Harness {
    start_sim(SimConfig::new(seed, crossbook_sim::SimClock::default()), cfg).await
}

async fn start_sim(sim_cfg: SimConfig, cfg: impl FnOnce(&SimHandle) -> IngestConfig) -> Harness {
    tracing_subscriber_init();
    let sim = Simulator::start(sim_cfg).await.expect("simulator starts");
    let db = crossbook_store::testing::sqlite_database().await;
    db.store.migrate().await.expect("migrate");
    let (live, bus, health) = {
        let live = LiveBooks::new();
        let health = VenueHealth::new(&live);
        (live, Bus::new(65_536), health)
    };
    let published: Published = Arc::default();
    let stale_events: Arc<Mutex<Vec<Exchange>>> = Arc::default();
    let stale_keys: Arc<Mutex<Vec<(BookKey, GapCause)>>> = Arc::default();
    let mut rx = bus.subscribe();
    let (p, s, k) = (published.clone(), stale_events.clone(), stale_keys.clone());
    tokio::spawn(async move {
        loop {
            match rx.recv().await {
                Ok(DomainEvent::TradeIngested(t)) => {
                    let mut map = p.lock().unwrap();
                    let entry = map.entry((t.exchange, t.source_trade_id.clone())).or_insert((0, t));
                    entry.0 += 1;
                }
                Ok(DomainEvent::BooksStale {
                    exchange, keys, cause, ..
                }) => {
                    s.lock().unwrap().push(exchange);
                    k.lock().unwrap().extend(keys.into_iter().map(|key| (key, cause)));
                }
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    panic!("the test's bus subscriber lagged by {n}")
                }
                Err(_) => return,
            }
        }
    });
    let (cancel, tracker) = (CancellationToken::new(), TaskTracker::new());
    let handle = Ingest::start(
        cfg(&sim),
        db.store.clone(),
        live.clone(),
        bus,
        health.clone(),
        cancel.clone(),
        &tracker,
    )
    .expect("ingestion starts");
    Harness {
        sim,
        db,
        live,
        health,
        cancel,
        tracker,
        handle,
        published,
        stale_events,
        stale_keys,
    }
}

/// Logs to the test output when `RUST_LOG` is set (e.g. `RUST_LOG=crossbook_venues=debug`).
fn tracing_subscriber_init() {
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
    }
}

impl Harness {
    async fn stop(self) {
        self.cancel.cancel();
        self.tracker.close();
        tokio::time::timeout(Duration::from_secs(15), self.tracker.wait())
            .await
            .expect("ingestion stops on cancel");
        self.sim.shutdown().await;
        self.db.cleanup().await;
    }

    /// An open BTC window market of `code` on `ex` that ingestion follows.
    fn open_window(&self, ex: Exchange, code: IntervalCode) -> Option<SimMarket> {
        self.sim
            .markets(ex)
            .into_iter()
            .filter(|m| m.interval == Some(code) && m.phase == Phase::Open)
            // Far enough from its close not to roll over during the test.
            .filter(|m| m.close_time.millis() - self.sim.now().millis() > 20_000)
            .find(|m| self.live.get(&key_of(m, 0)).is_some())
    }

    /// Whether every book of `m` in memory equals the simulator's book now.
    fn converged(&self, m: &SimMarket) -> bool {
        self.converged_books(m).is_some()
    }

    /// `m`'s books in memory, when each equals the simulator's book now.
    fn converged_books(&self, m: &SimMarket) -> Option<Vec<(BookKey, BookSnapshot)>> {
        let ids: Vec<(usize, String)> = match &m.tokens {
            Some(tokens) => tokens.iter().cloned().enumerate().collect(),
            None => vec![(0, m.market_id.clone())],
        };
        ids.iter()
            .map(|(i, id)| {
                let key = key_of(m, *i);
                let ours = self.live.get(&key)?;
                let theirs = self.sim.book(m.exchange, id)?;
                same_ladders(&ours, &theirs).then_some((key, ours))
            })
            .collect()
    }

    /// Waits until `m`'s books equal the simulator's, and keeps them with the moments just before and after
    /// they were read.
    async fn capture(&self, m: &SimMarket, what: &str) -> Capture {
        let mut got = None;
        wait_until(what, 20, || {
            let from = Timestamp::now();
            let books = self.converged_books(m);
            let to = Timestamp::now();
            got = books.map(|books| Capture { from, to, books });
            got.is_some()
        })
        .await;
        got.expect("captured")
    }

    async fn wait_converged(&self, m: &SimMarket, what: &str) {
        wait_until(what, 20, || self.converged(m)).await;
    }

    fn published_counts(&self) -> Vec<usize> {
        self.published.lock().unwrap().values().map(|(n, _)| *n).collect()
    }

    fn published_of(&self, ex: Exchange) -> usize {
        self.published.lock().unwrap().keys().filter(|(e, _)| *e == ex).count()
    }
}

/// A market's books in memory at a moment they equaled the simulator's, read between `from` and `to`.
struct Capture {
    from: Timestamp,
    to: Timestamp,
    books: Vec<(BookKey, BookSnapshot)>,
}

fn key_of(m: &SimMarket, token: usize) -> BookKey {
    match &m.tokens {
        Some(t) => BookKey::venue_b(&m.market_id, &t[token]),
        None => BookKey::venue_a(&m.market_id),
    }
}

fn same_ladders(a: &BookSnapshot, b: &BookSnapshot) -> bool {
    a.bids == b.bids && a.asks == b.asks && a.no_bids == b.no_bids
}

async fn wait_until(what: &str, secs: u64, mut cond: impl FnMut() -> bool) {
    testing::eventually(what, Duration::from_secs(secs), async || cond().then_some(())).await
}

fn query(exchange: Exchange, q: &str) -> MarketQuery {
    MarketQuery {
        q: Some(q.to_string()),
        series_id: None,
        event_id: None,
        exchange: Some(exchange),
        category: None,
        status: Status::Active,
        min_volume: None,
        min_liquidity: None,
        discovered_after: None,
        settled_after: None,
        settled_before: None,
        sort: MarketSort::Relevance,
        limit: 100,
        offset: 0,
    }
}

async fn search(store: &dyn Store, exchange: Exchange, q: &str) -> usize {
    store
        .search_markets(&query(exchange, q))
        .await
        .map(|v| v.len())
        .unwrap_or(0)
}

async fn wait_for_catalog(h: &Harness) {
    testing::eventually_seen(
        "catalog of both venues in the store",
        Duration::from_secs(30),
        async || {
            let a = search(h.db.store.as_ref(), A, "15m").await;
            let b = search(h.db.store.as_ref(), B, "15m").await;
            if a > 0 && b > 0 {
                Ok(())
            } else {
                Err(format!("({a}, {b})"))
            }
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catalog_books_and_trades_of_both_venues() {
    let h = start(7, |sim| config(sim, true)).await;
    wait_for_catalog(&h).await;

    // Catalog: searchable, with the windows normalised.
    let store = h.db.store.clone();
    let found = store.search_markets(&query(A, "15m")).await.unwrap();
    assert!(found.iter().all(|m| m.market.interval_code == Some(IntervalCode::M15)));
    assert!(found.iter().any(|m| m.market.series_id == "KXBTC15M"));
    let found = store.search_markets(&query(B, "15m")).await.unwrap();
    // BTC windows carry their interval and window; the ETH 15m windows listed on venue_b only match the
    // text and get no interval code (pairing them with venue_a's BTC windows would be wrong).
    let btc: Vec<_> = found
        .iter()
        .filter(|m| m.market.interval_code == Some(IntervalCode::M15))
        .collect();
    assert!(!btc.is_empty());
    for m in &btc {
        let m = &m.market;
        let (start, end) = (m.window_start.expect("window start"), m.window_end.expect("window end"));
        assert_eq!(end.millis() - start.millis(), 900_000);
        assert!(
            m.yes_token_id.as_deref().is_some_and(|t| t.len() > 70),
            "78-digit token ids kept"
        );
        assert_eq!(m.category.as_deref(), Some("crypto"));
    }

    // Live books equal the simulator's, for a window of each venue.
    let mut a = None;
    wait_until("an open venue_a 15m window with a live book", 20, || {
        a = h.open_window(A, IntervalCode::M15);
        a.is_some()
    })
    .await;
    let mut b = None;
    wait_until("an open venue_b 15m window with live books", 20, || {
        b = h.open_window(B, IntervalCode::M15);
        b.is_some()
    })
    .await;
    let (a, b) = (a.unwrap(), b.unwrap());
    h.wait_converged(&a, "venue_a book equal to the simulator's").await;
    h.wait_converged(&b, "venue_b books equal to the simulator's").await;
    for ex in [A, B] {
        let health = h.health.get(ex).expect("health entry");
        assert!(
            health.connected && health.mode == FeedMode::WebSocket,
            "{ex}: {health:?}"
        );
        assert!(health.last_catalog_sync_at.is_some());
    }

    // Trades of both venues are stored and published once each.
    wait_until("trades of both venues", 30, || {
        h.published_of(A) > 0 && h.published_of(B) > 0
    })
    .await;
    assert!(h.published_counts().iter().all(|n| *n == 1));
    let sample: Vec<Trade> = h.published.lock().unwrap().values().map(|(_, t)| t.clone()).collect();
    let again = store.insert_trades(&sample).await.unwrap();
    assert!(again.is_empty(), "every published trade is in the store already");

    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn books_converge_after_gaps_drops_silence_and_malformed_frames() {
    let h = start(11, |sim| config(sim, true)).await;
    wait_for_catalog(&h).await;
    let mut a = None;
    let mut b = None;
    wait_until("open 15m windows with live books", 30, || {
        a = h.open_window(A, IntervalCode::M15);
        b = h.open_window(B, IntervalCode::M15);
        a.is_some() && b.is_some()
    })
    .await;
    let (a, b) = (a.unwrap(), b.unwrap());
    // Moments at which the books in memory equaled the simulator's; the log must rebuild the same books.
    let mut captures = vec![
        h.capture(&a, "venue_a before faults").await,
        h.capture(&b, "venue_b before faults").await,
    ];
    let faults = h.sim.faults();
    let faults_from = Timestamp::now();

    // 1. A sequence gap on venue_a: books marked stale, resnapshotted, equal again.
    let stale_before = h.stale_events.lock().unwrap().iter().filter(|e| **e == A).count();
    faults.skip_next_seq();
    wait_until("the gap noticed", 20, || {
        h.stale_events.lock().unwrap().iter().filter(|e| **e == A).count() > stale_before
    })
    .await;
    captures.push(h.capture(&a, "venue_a after a sequence gap").await);

    // 2. Malformed frames on both venues: counted, skipped, and the feeds go on.
    faults.malform_next(A);
    faults.malform_next(B);
    wait_until("malformed frames counted", 20, || {
        [A, B]
            .iter()
            .all(|ex| h.health.get(*ex).is_some_and(|x| x.malformed >= 1))
    })
    .await;
    let after_malformed = Timestamp::now();
    wait_until("messages after the malformed ones", 20, || {
        [A, B].iter().all(|ex| {
            h.health
                .get(*ex)
                .and_then(|x| x.last_message_at)
                .is_some_and(|t| t > after_malformed)
        })
    })
    .await;
    captures.push(h.capture(&a, "venue_a after a malformed frame").await);
    captures.push(h.capture(&b, "venue_b after a malformed frame").await);

    // 3. Dropped sockets: both venues reconnect and converge.
    let (acc_a, acc_b) = (faults.sessions_accepted(A), faults.sessions_accepted(B));
    faults.drop_sockets();
    wait_until("reconnects after the drop", 20, || {
        faults.sessions_accepted(A) > acc_a && faults.sessions_accepted(B) > acc_b
    })
    .await;
    captures.push(h.capture(&a, "venue_a after a dropped socket").await);
    captures.push(h.capture(&b, "venue_b after a dropped socket").await);

    // 4. A silent feed (socket open, nothing sent): the watchdog resubscribes, then reconnects; once the
    //    venue talks again the books converge.
    let (acc_a, acc_b) = (faults.sessions_accepted(A), faults.sessions_accepted(B));
    faults.set_silent(A, true);
    faults.set_silent(B, true);
    wait_until("the watchdog reconnecting silent feeds", 30, || {
        faults.sessions_accepted(A) > acc_a && faults.sessions_accepted(B) > acc_b
    })
    .await;
    faults.set_silent(A, false);
    faults.set_silent(B, false);
    captures.push(h.capture(&a, "venue_a after a silent feed").await);
    captures.push(h.capture(&b, "venue_b after a silent feed").await);
    for ex in [A, B] {
        let health = h.health.get(ex).expect("health entry");
        assert!(health.reconnects >= 2, "{ex}: {health:?}");
        assert!(health.connected);
    }

    // Trades: across every reconnect and REST backfill, none was published twice.
    wait_until("trades of both venues", 30, || {
        h.published_of(A) > 0 && h.published_of(B) > 0
    })
    .await;
    let counts = h.published_counts();
    assert!(
        counts.iter().all(|n| *n == 1),
        "a trade was published twice: {counts:?}"
    );

    // More moments, one simulator step apart.
    for _ in 0..8 {
        let t = h.sim.now();
        wait_until("the simulator steps", 10, || h.sim.now() > t).await;
        captures.push(h.capture(&a, "venue_a between steps").await);
        captures.push(h.capture(&b, "venue_b between steps").await);
    }

    // The book log: stop ingestion (the writer stores what it holds), then every fault shows as a gap of its
    // cause, each ended by a resnapshot, none before the faults began; and the books rebuilt from the log
    // equal the books ingestion held last.
    h.cancel.cancel();
    h.tracker.close();
    tokio::time::timeout(Duration::from_secs(15), h.tracker.wait())
        .await
        .expect("ingestion stops on cancel");
    let (start, end) = (Timestamp::from_millis(0), Timestamp::from_millis(i64::MAX / 2));
    let mut keys = vec![(key_of(&a, 0), vec!["sequence_gap", "disconnect", "silence"])];
    for token in 0..2 {
        keys.push((key_of(&b, token), vec!["disconnect", "silence"]));
    }
    for (key, expected) in keys {
        let gaps = h.db.store.log_gaps(&key, start, end).await.unwrap();
        let causes: Vec<&str> = gaps.iter().map(|g| g.cause.as_str()).collect();
        for cause in &expected {
            assert!(causes.contains(cause), "{key:?}: no {cause} gap in {gaps:?}");
        }
        for g in &gaps {
            // A malformed venue_a frame may also cost a sequence number: a second sequence gap is a fault too.
            assert!(expected.contains(&g.cause.as_str()), "{key:?}: unexpected gap {g:?}");
            assert!(g.start >= faults_from, "{key:?}: a gap before any fault: {g:?}");
            assert!(g.end.is_some_and(|e| e >= g.start), "{key:?}: a gap not ended: {g:?}");
        }
        let read = h.db.store.log_events(&key, end, end).await.unwrap();
        assert!(read.corrupt.is_empty());
        let mut state = BookState::default();
        for e in &read.events {
            state.apply(&e.change).expect("the log applies");
        }
        let live = h.live.entry(&key).expect("a live book").book;
        let rebuilt = state.ladders().expect("a book after the last keyframe");
        assert_eq!(
            (&rebuilt.bids, &rebuilt.asks, &rebuilt.no_bids),
            (&live.bids, &live.asks, &live.no_bids),
            "{key:?}: the log disagrees with the live book"
        );
    }
    // At each captured moment the book rebuilt from the log equals the one in memory. A moment with a change of
    // that book logged within 2 ms of it is skipped: receive times are whole milliseconds, so which side of the
    // moment such a change fell on is not known.
    let (mut compared, mut total) = (0, 0);
    for c in &captures {
        for (key, ours) in &c.books {
            total += 1;
            let (lo, hi) = (c.from.millis() - 2, c.to.millis() + 2);
            let near =
                h.db.store
                    .log_events(key, Timestamp::from_millis(lo), Timestamp::from_millis(hi))
                    .await
                    .unwrap();
            if near.events.iter().any(|e| (lo..=hi).contains(&e.received_at.millis())) {
                continue;
            }
            let rebuilt = books_as_of(h.db.store.as_ref(), key, &[c.from]).await.unwrap();
            let rebuilt = rebuilt[0]
                .as_ref()
                .unwrap_or_else(|| panic!("{key:?}: no book in the log at {:?}", c.from));
            assert!(
                same_ladders(rebuilt, ours),
                "{key:?}: the log disagrees with memory at {:?}",
                c.from
            );
            compared += 1;
        }
    }
    assert!(
        compared * 2 >= total,
        "only {compared} of {total} captured books compared"
    );

    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn venue_a_without_credentials_polls_rest_books() {
    let h = start(5, |sim| IngestConfig {
        venue_b_enabled: false,
        ..config(sim, false)
    })
    .await;
    let mut a = None;
    wait_until("a polled venue_a window", 30, || {
        a = h.open_window(A, IntervalCode::M15);
        a.is_some()
    })
    .await;
    let a = a.unwrap();
    h.wait_converged(&a, "a polled book equal to the simulator's").await;
    let health = h.health.get(A).expect("health entry");
    assert_eq!(health.mode, FeedMode::Polling);
    assert!(h.health.get(B).is_none(), "venue_b disabled");
    wait_until("polled trades", 30, || h.published_of(A) > 0).await;
    assert!(h.published_counts().iter().all(|n| *n == 1));
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_calls_back_off_on_429_and_5xx() {
    use crossbook_venues::{
        Venue,
        venue_a::{VenueA, VenueAConfig},
    };
    let sim = Simulator::start(SimConfig::new(3, crossbook_sim::SimClock::default()))
        .await
        .expect("simulator starts");
    let venue = VenueA::new(&VenueAConfig {
        rest_url: sim.urls().venue_a_rest_url.clone(),
        ws_url: sim.urls().venue_a_ws_url.clone(),
        key_id: None,
        private_key_file: None,
        series: vec!["KXBTC15M".into()],
        requests_per_second: 100,
    })
    .expect("connector");
    let event = sim
        .events(A)
        .into_iter()
        .find(|e| e.series_id == "KXBTC15M")
        .expect("a KXBTC15M event")
        .event_id;
    let faults = sim.faults();

    // Two rate-limit answers, then success: the call goes through after backing off.
    faults.fail_rest(A, 429, 2);
    let started = tokio::time::Instant::now();
    let batch = venue.fetch_event(&event).await.expect("retried through the 429s");
    assert!(batch.is_some_and(|b| b.events.iter().any(|e| e.event_id == event)));
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "two backoff waits of at least 125 ms each"
    );

    // A server error that does not clear: a bounded number of attempts, then the error.
    faults.fail_rest(A, 503, 100);
    let err = venue.fetch_event(&event).await.expect_err("gives up");
    assert!(
        matches!(err, crossbook_venues::VenueError::Http { status: 503, .. }),
        "{err}"
    );
    faults.clear();

    // An unknown event is not an error.
    assert!(venue.fetch_event("KXBTC15M-NOPE").await.unwrap().is_none());
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn venue_b_rest_catalog_books_and_tape() {
    use crossbook_venues::{
        Venue,
        venue_b::{VenueB, VenueBConfig},
    };
    let sim = Simulator::start(SimConfig::new(9, crossbook_sim::SimClock::default()))
        .await
        .expect("simulator starts");
    let u = sim.urls().clone();
    let venue = VenueB::new(&VenueBConfig {
        gamma_url: u.venue_b_gamma_url,
        clob_url: u.venue_b_clob_url,
        data_url: u.venue_b_data_url,
        ws_url: u.venue_b_ws_url,
        series: vec!["btc-up-or-down-15m".into(), "btc-up-or-down-hourly".into()],
        requests_per_second: 100,
    })
    .expect("connector");
    // Catalog by series slug: only BTC windows, each with its interval and two tokens.
    let batch = venue.sync_catalog(&[]).await.expect("catalog");
    assert!(!batch.markets.is_empty());
    for m in &batch.markets {
        assert!(
            matches!(m.interval_code, Some(IntervalCode::M15 | IntervalCode::H1)),
            "{m:?}"
        );
        assert!(m.yes_token_id.is_some() && m.no_token_id.is_some());
    }
    // Books over POST /books equal the simulator's (taken at nearly the same moment: retry until a
    // tick does not fall in between).
    let open: Vec<_> = batch
        .markets
        .iter()
        .filter(|m| m.status == Status::Active)
        .cloned()
        .collect();
    testing::eventually(
        "REST books matching the simulator's",
        Duration::from_secs(20),
        async || {
            let books = venue.fetch_books(&open[..1]).await.expect("books");
            assert_eq!(books.len(), 2, "one book per token");
            books
                .iter()
                .all(|b| {
                    let id = b.asset_id.clone().unwrap_or_default();
                    sim.book(B, &id).is_some_and(|s| same_ladders(b, &s))
                })
                .then_some(())
        },
    )
    .await;
    // The tape: trades of followed markets with stable ids (reading twice gives the same ids).
    let set: crossbook_venues::MarketSet = batch.markets.iter().map(|m| (m.market_id.clone(), m.clone())).collect();
    let since = Timestamp::from_millis(Timestamp::now().millis() - 3_600_000);
    let first = testing::eventually("venue_b trades on the tape", Duration::from_secs(30), async || {
        let trades = venue.fetch_trades(&set, since).await.expect("tape");
        (!trades.is_empty()).then_some(trades)
    })
    .await;
    let again = venue.fetch_trades(&set, since).await.expect("tape");
    let ids: std::collections::HashSet<_> = again.iter().map(|t| t.source_trade_id.clone()).collect();
    assert!(
        first.iter().all(|t| ids.contains(&t.source_trade_id)),
        "stable trade ids"
    );
    // Followed by id and by slug.
    let event_id = batch.events[0].event_id.clone();
    let slug = batch.events[0].slug.clone().expect("slug");
    assert!(venue.fetch_event(&event_id).await.unwrap().is_some());
    assert!(venue.fetch_event(&slug).await.unwrap().is_some());
    assert!(venue.fetch_event("no-such-event").await.unwrap().is_none());
    sim.shutdown().await;
}

/// Protocol v2 markets (Gamma `"version": "v2"`, outcome ids in `positionIds`, retired ids in `clobTokenIds`)
/// are followed by their position ids: stored with them, subscribed, their books equal the simulator's and
/// their trades come in from the tape.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn venue_b_v2_markets_are_followed_by_their_position_ids() {
    let h = start(7, |sim| IngestConfig {
        venue_a_enabled: false,
        ..config(sim, false)
    })
    .await;
    let v2: Vec<SimMarket> = h
        .sim
        .markets(B)
        .into_iter()
        .filter(|m| m.protocol_v2() && m.phase == Phase::Open)
        .collect();
    assert!(!v2.is_empty(), "the simulator lists open v2 markets");
    let mut followed = None;
    wait_until("live books of a v2 market", 30, || {
        followed = v2.iter().find(|m| h.live.get(&key_of(m, 0)).is_some()).cloned();
        followed.is_some()
    })
    .await;
    let m = followed.unwrap();
    h.wait_converged(&m, "a v2 market's books equal to the simulator's")
        .await;
    let stored = h.db.store.get_market(B, &m.market_id).await.unwrap().expect("stored");
    let tokens = m.tokens.clone().unwrap();
    assert_eq!(
        (
            stored.market.yes_token_id.as_deref(),
            stored.market.no_token_id.as_deref()
        ),
        (Some(tokens[0].as_str()), Some(tokens[1].as_str())),
        "the position ids, not the retired clobTokenIds"
    );
    // A trade on the followed market, made now rather than waited for: random trades on so few markets
    // may not come within a deadline on a loaded machine.
    let trade = [Outcome::Yes, Outcome::No]
        .into_iter()
        .find_map(|o| {
            h.sim
                .inject_trade(B, &m.market_id, o, TakerSide::Buy, Amount::from_units(3))
        })
        .expect("the followed v2 market has asks to take");
    wait_until("the v2 market's trade", 60, || {
        h.published
            .lock()
            .unwrap()
            .values()
            .any(|(_, t)| t.market_id == m.market_id && t.source_trade_id.starts_with(&format!("{}:", trade.trade_id)))
    })
    .await;
    h.stop().await;
}

/// The Data API answering in its v2 shape (`{"data": [snake_case rows], "pagination": …}`, decimal strings,
/// milliseconds): the tape is read, and its trades equal the ones the v1 shape gives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn venue_b_reads_the_data_api_v2_tape() {
    let h = start(13, |sim| IngestConfig {
        venue_a_enabled: false,
        venue_b_data_url: format!("{}/v2", sim.urls().venue_b_data_url),
        ..config(sim, false)
    })
    .await;
    wait_until("venue_b trades read from the v2 tape", 60, || h.published_of(B) > 0).await;
    assert!(h.published_counts().iter().all(|n| *n == 1));
    // Each trade equals the simulator's: same price, size, side and time.
    let sim_trades = h.sim.trades(B);
    let published: Vec<Trade> = h.published.lock().unwrap().values().map(|(_, t)| t.clone()).collect();
    for t in &published {
        let theirs = sim_trades
            .iter()
            .find(|s| t.source_trade_id.starts_with(&format!("{}:", s.trade_id)))
            .unwrap_or_else(|| panic!("{t:?} is not a simulated trade"));
        assert_eq!(
            (t.price, t.size, t.taker_side, t.executed_at.secs()),
            (theirs.price, theirs.size, theirs.taker_side, theirs.at.secs()),
            "{t:?}"
        );
    }
    let health = h.health.get(B).expect("health entry");
    assert!(health.last_error.is_none(), "{health:?}");
    h.stop().await;
}

/// The books a test expects followed on `ex`: open markets far enough from their close not to roll over
/// during the test, outside `except_series`.
fn followed(sim: &SimHandle, ex: Exchange, except_series: &str) -> Vec<SimMarket> {
    sim.markets(ex)
        .into_iter()
        .filter(|m| m.phase == Phase::Open && m.series_id != except_series)
        .filter(|m| ex == A || m.tokens.is_some())
        .filter(|m| m.close_time.millis() - sim.now().millis() > 60_000)
        .collect()
}

/// Stale books the bus reported on `ex` since `mark`.
fn stale_since(h: &Harness, mark: usize, ex: Exchange) -> Vec<(BookKey, GapCause)> {
    h.stale_keys.lock().unwrap()[mark..]
        .iter()
        .filter(|(k, _)| k.exchange == ex)
        .cloned()
        .collect()
}

/// With small per-connection limits, which the simulator enforces the way the venues do (venue_a refuses
/// markets past its limit with error 26, venue_b ignores assets past its limit), each venue's followed
/// books are spread over several sockets and all of them are live. Dropping one socket gaps only that
/// socket's books, which come back; a market followed mid-run joins a socket without a gap on any other
/// book.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markets_spread_over_sockets_within_the_venues_limits() {
    const A_LIMIT: usize = 5;
    const B_LIMIT: usize = 8;
    let mut held_back: Option<SimMarket> = None;
    let h = start(13, |sim| {
        let faults = sim.faults();
        faults.set_ws_limit(A, A_LIMIT);
        faults.set_ws_limit(B, B_LIMIT);
        // One venue_a series is left out of the configuration, to follow one of its events mid-run.
        let later = followed(sim, A, "")
            .into_iter()
            .find(|m| m.interval.is_none() && m.close_time.millis() - sim.now().millis() > 3_600_000)
            .expect("a long-lived venue_a market outside the BTC windows");
        let series = sim
            .series_ids(A)
            .into_iter()
            .filter(|s| *s != later.series_id)
            .collect();
        held_back = Some(later);
        IngestConfig {
            venue_a_series: series,
            venue_a_ws_markets_per_connection: A_LIMIT,
            venue_b_ws_assets_per_connection: B_LIMIT,
            ..config(sim, true)
        }
    })
    .await;
    let held_back = held_back.unwrap();
    let faults = h.sim.faults();
    let live = |m: &SimMarket| {
        let n = m.tokens.as_ref().map_or(1, |_| 2);
        (0..n).all(|i| h.live.get(&key_of(m, i)).is_some())
    };
    let all_live = |ex: Exchange| followed(&h.sim, ex, &held_back.series_id).iter().all(&live);
    wait_until("every followed book of both venues live", 60, || {
        all_live(A) && all_live(B)
    })
    .await;

    // Several sockets per venue, each within its limit, all connected.
    for (ex, limit, per_market) in [(A, A_LIMIT, 1), (B, B_LIMIT, 2)] {
        let books = followed(&h.sim, ex, &held_back.series_id).len() * per_market;
        let needed = books.div_ceil(limit).max(2);
        wait_until("sockets counted in health and open at the venue", 20, || {
            let c = h.health.get(ex).unwrap().connections;
            c.total >= needed && c.connected == c.total && faults.sessions_open(ex) == c.total as u64
        })
        .await;
        let health = h.health.get(ex).unwrap();
        assert!(
            health.connected && health.mode == FeedMode::WebSocket,
            "{ex}: {health:?}"
        );
        assert_eq!(health.connections.reconnects, 0, "{ex}: {health:?}");
    }

    // One socket of each venue drops: only its books are gapped, they come back, the others stay live.
    let mark = h.stale_keys.lock().unwrap().len();
    for (ex, limit) in [(A, A_LIMIT), (B, B_LIMIT)] {
        let markets = followed(&h.sim, ex, &held_back.series_id);
        let victim = markets[markets.len() / 2].clone();
        let carried = victim
            .tokens
            .as_ref()
            .map_or(victim.market_id.clone(), |t| t[0].clone());
        let accepted = faults.sessions_accepted(ex);
        let since = h.stale_keys.lock().unwrap().len();
        faults.drop_socket_carrying(ex, &carried);
        wait_until("the dropped socket reconnected", 20, || {
            faults.sessions_accepted(ex) > accepted
        })
        .await;
        wait_until("the dropped socket's books back", 30, || {
            stale_since(&h, since, ex).iter().all(|(k, _)| h.live.get(k).is_some()) && h.converged(&victim)
        })
        .await;
        let lost = stale_since(&h, since, ex);
        let lost_keys: Vec<&BookKey> = lost.iter().map(|(k, _)| k).collect();
        assert!(lost_keys.contains(&&key_of(&victim, 0)), "{ex}: {lost:?}");
        if victim.tokens.is_some() {
            assert!(
                lost_keys.contains(&&key_of(&victim, 1)),
                "both tokens on one socket: {lost:?}"
            );
        }
        assert!(lost.iter().all(|(_, c)| *c == GapCause::Disconnect), "{ex}: {lost:?}");
        assert!(
            lost.len() <= limit && lost.len() < markets.len(),
            "{ex}: only one socket's books are gapped: {lost:?}"
        );
        assert_eq!(
            faults.sessions_accepted(ex),
            accepted + 1,
            "{ex}: one socket reconnected"
        );
        let health = h.health.get(ex).unwrap();
        assert_eq!(health.connections.reconnects, 1, "{ex}: {health:?}");
        wait_until("every socket connected again", 20, || {
            h.health.get(ex).unwrap().connected
        })
        .await;
    }
    // Neither drop touched the other venue's books.
    let lost_a = stale_since(&h, mark, A).len();
    let lost_b = stale_since(&h, mark, B).len();
    assert!(lost_a <= A_LIMIT && lost_b <= B_LIMIT, "({lost_a}, {lost_b})");

    // A market followed mid-run joins a socket: no book of either venue is gapped.
    let mark = h.stale_keys.lock().unwrap().len();
    let event = h
        .handle
        .follow_event(A, &held_back.event_id)
        .await
        .expect("follow")
        .expect("a known event");
    assert_eq!(event.event_id, held_back.event_id);
    wait_until("the followed event's books live", 30, || h.converged(&held_back)).await;
    assert!(
        h.stale_keys.lock().unwrap()[mark..].is_empty(),
        "a joining market gapped others: {:?}",
        &h.stale_keys.lock().unwrap()[mark..]
    );
    assert!(all_live(A) && all_live(B));
    let health = h.health.get(A).unwrap();
    assert!(health.connected, "{health:?}");
    assert_eq!(faults.sessions_open(A), health.connections.total as u64);

    h.stop().await;
}

/// The full-scale simulator (a whole venue's catalog: over 5,000 venue_a markets and 20,000 venue_b tokens)
/// at the venues' own per-connection limits: every followed book is live, spread over several sockets of
/// each venue; a dropped socket gaps only its own books; and sockets whose books are quiet, with only the
/// venues' keepalives coming, record no gap for longer than the silence limit. The generator's changes are
/// off (the books are quiet; the demo catalog still moves), which keeps the run short in a debug build.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_venue_is_followed_over_many_sockets_and_quiet_sockets_record_no_gap() {
    // Both venues send a keepalive every 10 s (venue_a pings, venue_b answers the client's PING): a limit
    // above that tells a quiet socket from a dead one.
    const SILENCE_SECS: u64 = 12;
    let _alone = FULL_SCALE.lock().await;
    let rates = SimRates {
        venue_a_per_sec: 0,
        venue_b_per_sec: 0,
        burst_multiple: 1,
        ..SimRates::default()
    };
    let sim_cfg = SimConfig {
        scale: SimScale::Full,
        rates,
        ..SimConfig::new(21, crossbook_sim::SimClock::default())
    };
    let h = start_sim(sim_cfg, |sim| IngestConfig {
        feed_silence_seconds: SILENCE_SECS,
        catalog_sync_seconds: 600,
        ..config(sim, true)
    })
    .await;
    let faults = h.sim.faults();
    let live = |m: &SimMarket| {
        let n = m.tokens.as_ref().map_or(1, |_| 2);
        (0..n).all(|i| h.live.get(&key_of(m, i)).is_some())
    };
    let (fa, fb) = (followed(&h.sim, A, ""), followed(&h.sim, B, ""));
    let (a_books, b_books) = (fa.len(), fb.len() * 2);
    assert!(
        a_books >= 1_000 && b_books >= 10_000,
        "a whole venue's catalog: {a_books} venue_a and {b_books} venue_b books"
    );
    wait_until("every followed book of both venues live", 50, || {
        fa.iter().all(&live) && fb.iter().all(&live)
    })
    .await;
    let live_at = std::time::Instant::now();
    for (ex, limit, books) in [(A, 1_000, a_books), (B, 500, b_books)] {
        let needed = books.div_ceil(limit);
        wait_until("every socket counted in health and open at the venue", 20, || {
            let c = h.health.get(ex).unwrap().connections;
            c.total >= needed && c.connected == c.total && faults.sessions_open(ex) == c.total as u64
        })
        .await;
        assert!(needed >= 2, "{ex}: {books} books need several sockets");
    }

    // One socket of each venue drops: only its books are gapped, and they come back.
    for (ex, limit, markets) in [(A, 1_000, &fa), (B, 500, &fb)] {
        let victim = markets
            .iter()
            .filter(|m| m.is_bulk())
            .nth(markets.len() / 3)
            .expect("a bulk market")
            .clone();
        let carried = victim
            .tokens
            .as_ref()
            .map_or(victim.market_id.clone(), |t| t[0].clone());
        let accepted = faults.sessions_accepted(ex);
        let since = h.stale_keys.lock().unwrap().len();
        faults.drop_socket_carrying(ex, &carried);
        wait_until("the dropped socket reconnected", 20, || {
            faults.sessions_accepted(ex) > accepted
        })
        .await;
        wait_until("the dropped socket's books back", 30, || {
            let lost = stale_since(&h, since, ex);
            !lost.is_empty() && lost.iter().all(|(k, _)| h.live.get(k).is_some()) && h.converged(&victim)
        })
        .await;
        let lost = stale_since(&h, since, ex);
        assert!(lost.iter().any(|(k, _)| *k == key_of(&victim, 0)), "{ex}: {lost:?}");
        assert!(lost.iter().all(|(_, c)| *c == GapCause::Disconnect), "{ex}: {lost:?}");
        assert!(
            lost.len() <= limit,
            "{ex}: {} books gapped, more than one socket carries",
            lost.len()
        );
        assert_eq!(
            faults.sessions_accepted(ex),
            accepted + 1,
            "{ex}: one socket reconnected"
        );
        wait_until("every socket connected again", 20, || {
            h.health.get(ex).unwrap().connected
        })
        .await;
    }
    let after_drops = h.stale_keys.lock().unwrap().len();

    // Quiet but healthy: the bulk books got no change, only keepalives kept their sockets alive, for
    // longer than the silence limit since every book was live. No book was gapped for it.
    wait_until("the silence limit passed with the feeds alive", 30, || {
        live_at.elapsed() > Duration::from_secs(SILENCE_SECS + 2)
            && Exchange::ALL.iter().all(|ex| h.health.get(*ex).unwrap().connected)
    })
    .await;
    assert_eq!(h.sim.with_model(|m| m.generated_changes(A) + m.generated_changes(B)), 0);
    let gapped = h.stale_keys.lock().unwrap()[after_drops..].to_vec();
    assert!(
        gapped.is_empty(),
        "quiet sockets were gapped: {:?}",
        &gapped[..gapped.len().min(5)]
    );
    let silence: Vec<_> = h
        .stale_keys
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, c)| *c == GapCause::Silence)
        .cloned()
        .collect();
    assert!(silence.is_empty(), "silence gaps on a quiet feed: {}", silence.len());
    for ex in Exchange::ALL {
        let health = h.health.get(ex).unwrap();
        assert_eq!(
            health.connections.reconnects, 1,
            "{ex}: only the dropped socket reconnected: {health:?}"
        );
    }
    h.stop().await;
}

/// Level changes of one book over `[from, to]` (receive times) in its log: `(in deltas, in keyframes, gaps)`.
/// A keyframe the writer wrote in place of a delta counts the levels it changed against the book before it
/// (rebuilt from the keyframe the read starts at); a book in a gap has no "before" and counts none.
fn logged_changes(events: &[crossbook_core::book::BookEvent], from: Timestamp, to: Timestamp) -> (u64, u64, u64) {
    use crossbook_core::book::{BookChange, BookState};
    let (mut deltas, mut keyframes, mut gaps) = (0, 0, 0);
    let mut state = BookState::default();
    for e in events {
        let inside = e.received_at >= from && e.received_at <= to;
        let before = state.ladders().cloned();
        let _ = state.apply(&e.change);
        if !inside {
            continue;
        }
        match &e.change {
            BookChange::Delta(changes) => deltas += changes.len() as u64,
            BookChange::Gap(_) => gaps += 1,
            BookChange::Snapshot { .. } => {
                if let (Some(a), Some(b)) = (before, state.ladders()) {
                    keyframes += levels_differing(&a, b);
                }
            }
        }
    }
    (deltas, keyframes, gaps)
}

/// Levels (side, price) whose size differs between two ladders.
fn levels_differing(a: &crossbook_core::book::Ladders, b: &crossbook_core::book::Ladders) -> u64 {
    let map = |l: &crossbook_core::book::Ladders| {
        let mut m = std::collections::BTreeMap::new();
        for (side, ladder) in [(0u8, &l.bids), (1, &l.asks), (2, &l.no_bids)] {
            for lv in ladder {
                m.insert((side, lv.price), lv.size);
            }
        }
        m
    };
    let (a, b) = (map(a), map(b));
    let keys: std::collections::BTreeSet<_> = a.keys().chain(b.keys()).collect();
    keys.into_iter().filter(|k| a.get(*k) != b.get(*k)).count() as u64
}

/// Whole-venue capture loses nothing silently: the full-scale generator's changes (both venues, venue_b's
/// multi-level matches included) over a window of model time are, book by book, each in the event log as a
/// level change, or the book holds a recorded gap in the window. The window opens and closes with the model
/// held and ingestion caught up (every compared book equal to the venue's, and its last number in the log).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_generated_change_is_logged_or_the_book_holds_a_gap() {
    let _alone = FULL_SCALE.lock().await;
    let rates = SimRates {
        venue_a_per_sec: 300,
        venue_b_per_sec: 1_500,
        burst_multiple: 1,
        ..SimRates::default()
    };
    let sim_cfg = SimConfig {
        scale: SimScale::Full,
        rates,
        ..SimConfig::new(
            31,
            crossbook_sim::SimClock::Manual {
                start: Timestamp::now(),
            },
        )
    };
    let h = start_sim(sim_cfg, |sim| IngestConfig {
        // The model moves only when the test moves it: quiet sockets between windows are not dead ones.
        feed_silence_seconds: 600,
        catalog_sync_seconds: 600,
        ..config(sim, true)
    })
    .await;
    let markets: Vec<SimMarket> = [followed(&h.sim, A, ""), followed(&h.sim, B, "")]
        .concat()
        .into_iter()
        .filter(|m| m.is_bulk() && m.close_time.millis() - h.sim.now().millis() > 600_000)
        .collect();
    let books: Vec<(usize, BookKey)> = markets
        .iter()
        .enumerate()
        .flat_map(|(i, m)| (0..m.tokens.as_ref().map_or(1, |_| 2)).map(move |t| (i, key_of(m, t))))
        .collect();
    assert!(books.len() > 10_000, "{} books", books.len());
    // Caught up: every book equals the venue's and its last number is in the log.
    let caught_up = async |what: &str| {
        let store = h.db.store.clone();
        testing::eventually_seen(what, Duration::from_secs(120), async || {
            if let Some(m) = markets.iter().find(|m| !h.converged(m)) {
                return Err(format!("{} not converged", m.market_id));
            }
            let mut heads = HashMap::new();
            for ex in Exchange::ALL {
                for head in store.log_heads(ex).await.map_err(|e| e.to_string())? {
                    heads.insert(head.book, head.last_seq);
                }
            }
            match books
                .iter()
                .find(|(_, k)| heads.get(k).copied() != Some(h.live.last_seq(k)))
            {
                Some((_, k)) => Err(format!(
                    "{k:?}: log head {:?}, live {}",
                    heads.get(k),
                    h.live.last_seq(k)
                )),
                None => Ok(()),
            }
        })
        .await
    };
    caught_up("every compared book live and logged").await;
    // A first stretch of changes, so that each book's first event (a keyframe) is behind the window.
    h.sim.advance(Duration::from_secs(2));
    caught_up("the warm-up logged").await;

    let produced = |h: &Harness| -> Vec<u64> {
        h.sim.with_model(|model| {
            markets
                .iter()
                .map(|m| model.generated_changes_of(m.exchange, &m.market_id))
                .collect()
        })
    };
    let p0 = produced(&h);
    let t0 = Timestamp::now();
    for _ in 0..10 {
        h.sim.advance(Duration::from_secs(2));
    }
    caught_up("the window logged").await;
    let t1 = Timestamp::now();
    let p1 = produced(&h);

    let mut totals: HashMap<Exchange, [u64; 5]> = HashMap::new();
    let mut silent = Vec::new();
    for (i, key) in &books {
        let want = p1[*i] - p0[*i];
        let read = h.db.store.log_events(key, t0, t1).await.expect("log read");
        let (deltas, keyframes, gaps) = logged_changes(&read.events, t0, t1);
        let t = totals.entry(key.exchange).or_default();
        for (slot, n) in [want, deltas, keyframes, gaps, 1].into_iter().enumerate() {
            t[slot] += n;
        }
        if deltas + keyframes != want && gaps == 0 {
            silent.push(format!(
                "{key:?}: produced {want}, logged {deltas} in deltas + {keyframes} in keyframes"
            ));
        }
    }
    for (ex, [want, deltas, keyframes, gaps, n]) in &totals {
        eprintln!(
            "{ex}: {n} books, produced {want}, logged {deltas} in deltas + {keyframes} in keyframes, {gaps} gaps"
        );
    }
    assert!(totals.values().all(|t| t[0] > 0), "changes were generated: {totals:?}");
    assert!(
        silent.is_empty(),
        "{} books lost changes with no gap recorded, e.g. {:?}",
        silent.len(),
        &silent[..silent.len().min(5)]
    );
    h.stop().await;
}

/// venue_a refuses (error 26) a `subscribe` or `add_markets` that would take a connection past its market
/// limit. A connector configured for more markets per socket than the venue allows spreads the refused
/// markets over more sockets, within the limit it learned, instead of leaving them unfollowed: every
/// followed book goes live, and no socket holds more than the venue's limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markets_the_venue_refuses_for_its_connection_limit_move_to_other_sockets() {
    const VENUE_LIMIT: usize = 3;
    let h = start(17, |sim| {
        sim.faults().set_ws_limit(A, VENUE_LIMIT);
        IngestConfig {
            venue_a_ws_markets_per_connection: 1_000,
            venue_b_enabled: false,
            ..config(sim, true)
        }
    })
    .await;
    let faults = h.sim.faults();
    let markets = followed(&h.sim, A, "");
    assert!(markets.len() > 2 * VENUE_LIMIT, "{} venue_a markets", markets.len());
    wait_until("every followed venue_a book live", 60, || {
        followed(&h.sim, A, "")
            .iter()
            .all(|m| h.live.get(&key_of(m, 0)).is_some())
    })
    .await;
    let needed = markets.len().div_ceil(VENUE_LIMIT);
    wait_until("the markets spread over sockets within the venue's limit", 20, || {
        let c = h.health.get(A).unwrap().connections;
        c.total >= needed && c.connected == c.total && faults.sessions_open(A) == c.total as u64
    })
    .await;
    let health = h.health.get(A).unwrap();
    assert!(health.connected && health.mode == FeedMode::WebSocket, "{health:?}");
    assert_eq!(
        health.connections.reconnects, 0,
        "moving markets reconnects nothing: {health:?}"
    );
    h.stop().await;
}

/// venue_b serves nothing for assets past its per-connection limit, and says nothing about them. A connector
/// configured for more assets per socket than the venue allows cannot see a refusal, so it asks again for the
/// books that never come and, after several asks, counts them as missing in its health, where `/readyz` and
/// `/metrics` show them: the loss is visible, not silent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn books_the_venue_never_sends_are_counted_missing() {
    const VENUE_LIMIT: usize = 4;
    let h = start(19, |sim| {
        sim.faults().set_ws_limit(B, VENUE_LIMIT);
        IngestConfig {
            venue_b_ws_assets_per_connection: 1_000,
            venue_a_enabled: false,
            // The simulator's clock stands still here: the four books are quiet, and only keepalives
            // come. The silence watchdog must not start the asks over.
            feed_silence_seconds: 120,
            ..config(sim, true)
        }
    })
    .await;
    let books = 2 * followed(&h.sim, B, "").len();
    assert!(books > VENUE_LIMIT, "{books} venue_b books");
    // The venue's four books come; the rest are asked for again at 2, 4 and 8 s intervals, then counted.
    // (Markets closing within a minute are left out of `books`, so the count may be higher.)
    wait_until("the books past the venue's limit counted missing", 40, || {
        h.health
            .get(B)
            .is_some_and(|f| f.books_missing() >= books - VENUE_LIMIT)
    })
    .await;
    let health = h.health.get(B).unwrap();
    assert_eq!(health.connections.total, 1, "one socket holds them all: {health:?}");
    assert_eq!(h.live.counts(B), (VENUE_LIMIT, 0), "only the venue's books are live");
    h.stop().await;
}
