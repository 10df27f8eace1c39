//! `crossbook-bench arbitrage`: (a) one scanner pass over N paired windows with 10-level books, through the
//! same function the scanner and `/v1/arbitrage/current` use ([`scan_live`] over [`LiveBooks`]): the first
//! pass over a new catalog (resolving the pairs' books to slots) and the median of many; then (b) a book
//! change becoming an updated opportunity: one book written to the live books and the scanner re-pricing the
//! pairs of that book ([`Scanner::reprice_books`]: episodes, cooldown, bus publications), and the same
//! through the bus to a running scanner, to its `ArbitrageChanged` event; then (c) the whole pass of the
//! worker (episodes, batch write, publication) against a real store; (d) `/v1/arbitrage/current` through
//! real HTTP over a seeded catalog and live books, sequentially, and then served for `wrk`
//! (`--serve-after`, prints the command).
//!
//! ```text
//! cargo run --release -p crossbook-bench -- arbitrage --windows 10000
//! cargo run --release -p crossbook-bench -- arbitrage --windows 10000 --serve-windows 1000 --serve-after
//! ```
//!
//! Data: N venue_a windows and N venue_b windows (interval codes in turn, consecutive start times, so each
//! venue_a window pairs with exactly one venue_b window), every book 10 levels deep on each side. One pair in
//! `--cross-every` crosses (nets a few cents after fees, so the depth walk and the rendering run); the others
//! cost more than 1 dollar. Books are time-stamped at the start of the run and the scan time is pinned to it,
//! so every pair passes the staleness check. A book change alternates the venue_b NO book of a pair between
//! crossing and not, so each change opens or closes an opportunity.

use std::{net::SocketAddr, sync::Arc, time::Instant};

use clap::Args;
use crossbook_core::{
    Amount, BookSnapshot, Exchange, IntervalCode, Level, Market, Plan, Price, Timestamp,
    arb::{ChangeKind, Listing, ScanParams},
};
use crossbook_live::{BookKey, DomainEvent, LiveBooks};
use crossbook_server::{
    AppState,
    arbitrage::{ArbCache, ArbCatalog, scan_live},
    config::Config,
    workers::scanner::{Scanner, Settings, spawn_with},
};

use crate::percentile;

/// Options of the `arbitrage` subcommand.
#[derive(Args)]
pub struct ArbitrageArgs {
    /// Paired windows in the scanner figure.
    #[arg(long, default_value_t = 10_000)]
    windows: usize,
    /// Scanner passes to time.
    #[arg(long, default_value_t = 200)]
    passes: usize,
    /// Book changes to time (re-pricing, and through the bus).
    #[arg(long, default_value_t = 5_000)]
    changes: usize,
    /// One pair in this many crosses.
    #[arg(long, default_value_t = 10)]
    cross_every: usize,
    /// Paired windows behind the HTTP figure.
    #[arg(long, default_value_t = 1_000)]
    serve_windows: usize,
    /// Sequential `/v1/arbitrage/current` requests to time.
    #[arg(long, default_value_t = 2_000)]
    requests: usize,
    /// Database of the worker pass and the server (keys, episodes).
    #[arg(long, default_value = "sqlite:///tmp/crossbook-bench-arb.db")]
    database_url: String,
    /// Keep serving after the timing run so `wrk` can load the same server; prints the wrk command.
    #[arg(long)]
    serve_after: bool,
    /// The server's `arbitrage_cache_ms` (0 scans on every request).
    #[arg(long, default_value_t = 200)]
    arbitrage_cache_ms: u64,
}

const INTERVALS: [IntervalCode; 5] = [
    IntervalCode::M5,
    IntervalCode::M15,
    IntervalCode::H1,
    IntervalCode::H24,
    IntervalCode::W1,
];

fn lvl(micros: i64, units: i64) -> Level {
    Level {
        price: Price::from_micros(micros),
        size: Amount::from_units(units),
    }
}

/// `n` paired windows (listings) and their books at `now`.
fn fixture(n: usize, cross_every: usize, now: Timestamp) -> (Vec<Listing>, Vec<BookSnapshot>) {
    let mut listings = Vec::with_capacity(2 * n);
    let mut books = Vec::with_capacity(3 * n);
    for i in 0..n {
        let ic = INTERVALS[i % INTERVALS.len()];
        // Consecutive windows of each interval, starting now, so none has ended.
        let k = (i / INTERVALS.len()) as i64;
        let start = Timestamp::from_millis(now.millis() - now.millis().rem_euclid(60_000) + k * ic.seconds() * 1000);
        let end = Timestamp::from_millis(start.millis() + ic.seconds() * 1000);
        let a_id = format!("KXBTCB{}-{i:06}", ic.as_str().to_uppercase());
        let b_id = format!("0xbench{i:06}");
        let mut a = Market::new(
            Exchange::VenueA,
            &a_id,
            &format!("EV-{a_id}"),
            "KXBTC",
            "Bitcoin up or down?",
        );
        let mut b = Market::new(
            Exchange::VenueB,
            &b_id,
            &format!("EV-{b_id}"),
            "btc-up-or-down",
            "Bitcoin up or down?",
        );
        for m in [&mut a, &mut b] {
            m.interval_code = Some(ic);
            m.window_start = Some(start);
            m.window_end = Some(end);
            m.volume = Amount::from_units(10_000);
        }
        let (yes_tok, no_tok) = (format!("{i}1"), format!("{i}2"));
        b.yes_token_id = Some(yes_tok.clone());
        b.no_token_id = Some(no_tok.clone());
        listings.push(Listing::new(a, "Bitcoin Up or Down", None));
        listings.push(Listing::new(b, "Bitcoin Up or Down", Some(format!("btc-updown-{i}"))));

        // venue_a: YES bids from 0.44 down, NO bids from 0.55 down (YES ask 0.45, NO ask 0.56). venue_b: YES
        // asks from 0.40, NO asks from 0.50 (crossing: 0.45 + 0.50 nets 1.25 c) or from 0.60 (no edge).
        let crosses = i % cross_every == 0;
        let ladder = |top: i64, step: i64| (0..10).map(|l| lvl(top + step * l, 10 + l)).collect::<Vec<_>>();
        books.push(BookSnapshot {
            exchange: Exchange::VenueA,
            market_id: a_id,
            asset_id: None,
            timestamp: now,
            bids: ladder(440_000, -5_000),
            asks: vec![],
            no_bids: ladder(550_000, -5_000),
        });
        books.push(BookSnapshot {
            exchange: Exchange::VenueB,
            market_id: b_id.clone(),
            asset_id: Some(yes_tok),
            timestamp: now,
            bids: vec![],
            asks: ladder(if crosses { 400_000 } else { 600_000 }, 5_000),
            no_bids: vec![],
        });
        books.push(BookSnapshot {
            exchange: Exchange::VenueB,
            market_id: b_id,
            asset_id: Some(no_tok),
            timestamp: now,
            bids: vec![],
            asks: ladder(if crosses { 500_000 } else { 600_000 }, 5_000),
            no_bids: vec![],
        });
    }
    (listings, books)
}

fn summary(label: &str, mut ms: Vec<f64>) {
    ms.sort_by(|a, b| a.total_cmp(b));
    println!(
        "{label}: n={} median={:.3} ms p90={:.3} ms p99={:.3} ms max={:.3} ms",
        ms.len(),
        percentile(&ms, 0.5),
        percentile(&ms, 0.9),
        percentile(&ms, 0.99),
        ms.last().copied().unwrap_or(0.0)
    );
}

/// An app state over `database_url` with `catalog` installed for a day and `books` in the live map.
async fn state_with(
    database_url: &str,
    cache_ms: u64,
    catalog: ArbCatalog,
    books: Vec<BookSnapshot>,
) -> anyhow::Result<AppState> {
    let store = crossbook_store::open(database_url).await?;
    store.migrate().await?;
    let mut config = Config::for_tests(database_url);
    config.arbitrage_cache_ms = cache_ms;
    let mut state = AppState::new(config, store);
    state.arb = Arc::new(ArbCache::new(std::time::Duration::from_secs(86_400)));
    state.arb.set(catalog);
    let live = LiveBooks::new();
    for b in books {
        live.upsert(b);
    }
    state.live = live;
    Ok(state)
}

pub async fn run(args: ArbitrageArgs) -> anyhow::Result<()> {
    // ---------------------------------------------------------------- (a) scanner pass
    let now = Timestamp::now();
    let (listings, books) = fixture(args.windows, args.cross_every.max(1), now);
    let t = Instant::now();
    let catalog = ArbCatalog::new(listings, vec![]);
    let pairing_ms = t.elapsed().as_secs_f64() * 1000.0;
    anyhow::ensure!(
        catalog.pair_count() == args.windows,
        "expected {} pairs, got {}",
        args.windows,
        catalog.pair_count()
    );
    println!(
        "catalog: {} paired windows, {} books of 10 levels; pairing (once per catalog refresh): {pairing_ms:.1} ms",
        args.windows,
        books.len()
    );
    let state = state_with(&args.database_url, 0, catalog, books.clone()).await?;
    let catalog = state.arb.catalog(&state.store).await?;
    let params = ScanParams {
        include_orderbook: true,
        ..ScanParams::new(now)
    };
    // The first pass over a new catalog also resolves every pair's books to live-book slots.
    let t = Instant::now();
    let found = scan_live(&catalog, &state.live, &params).len();
    println!(
        "first scan pass over a new catalog (resolves {} books to slots): {:.3} ms",
        books.len(),
        t.elapsed().as_secs_f64() * 1000.0
    );
    let mut ms = Vec::with_capacity(args.passes);
    for _ in 0..args.passes {
        let t = Instant::now();
        let opps = scan_live(&catalog, &state.live, &params);
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
        std::hint::black_box(opps);
    }
    summary(
        &format!("scan pass over {} paired windows ({found} opportunities)", args.windows),
        ms,
    );

    // ---------------------------------------------------------------- (b) a book change → opportunity
    let settings = Settings {
        interval: std::time::Duration::from_secs(3_600),
        webhook_min_net: crossbook_core::arb::MicroUsd::from_cents(1),
        cooldown_seconds: 300,
        clock: Arc::new(move || now),
    };
    // The NO book of pair `i`, crossing or not; the pairs chosen do not cross in the fixture, so the first
    // change opens an opportunity and the next closes it.
    let flip = |i: usize, cross: bool| {
        let mut b = books[3 * i + 2].clone();
        b.asks = (0..10)
            .map(|l| lvl(if cross { 500_000 } else { 600_000 } + 5_000 * l, 10 + l))
            .collect();
        b
    };
    let pick = |k: usize| {
        // Spread over the catalog, skipping the pairs that cross in the fixture.
        let i = (k * 7_919) % args.windows;
        if i.is_multiple_of(args.cross_every.max(1)) {
            (i + 1) % args.windows
        } else {
            i
        }
    };
    let mut scanner = Scanner::new(state.clone(), settings.clone());
    scanner.pass().await;
    let mut ms = Vec::with_capacity(args.changes);
    let mut crossing = std::collections::HashSet::new();
    let mut changes = 0;
    for k in 0..args.changes {
        let i = pick(k);
        let cross = !crossing.remove(&i) && crossing.insert(i);
        let book = flip(i, cross);
        let key = BookKey::of(&book);
        let t = Instant::now();
        state.live.upsert(book);
        let r = scanner.reprice_books(std::slice::from_ref(&key)).await;
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
        changes += r.changes;
    }
    anyhow::ensure!(
        changes == args.changes,
        "each change should open or close one opportunity"
    );
    summary(
        &format!(
            "book change -> re-priced opportunity at {} pairs (upsert + re-pricing + episodes + publication)",
            args.windows
        ),
        ms,
    );
    scanner.flush().await;
    // Back to the fixture, so the running scanner's first pass opens none of the pairs timed below.
    for i in crossing.drain() {
        state.live.upsert(flip(i, false));
    }

    // Through the bus: the running scanner hears `BookUpdated` and publishes `ArbitrageChanged`.
    let tracker = tokio_util::task::TaskTracker::new();
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut rx = state.bus.subscribe();
    spawn_with(&state, settings.clone(), &tracker, &cancel);
    let mut ms = Vec::with_capacity(args.changes);
    for k in 0..args.changes {
        let i = pick(k);
        let cross = !crossing.remove(&i) && crossing.insert(i);
        let expected = if cross { ChangeKind::Opened } else { ChangeKind::Closed };
        let token = books[3 * i + 2].asset_id.clone().unwrap_or_default();
        let book = flip(i, cross);
        let key = BookKey::of(&book);
        let timestamp = book.timestamp;
        let t = Instant::now();
        state.live.upsert(book);
        state.bus.publish(DomainEvent::book_touched(key, timestamp));
        loop {
            match tokio::time::timeout(std::time::Duration::from_secs(30), rx.recv()).await {
                Ok(Ok(DomainEvent::ArbitrageChanged(c)))
                    if c.kind == expected && c.opportunity.venue_b.no_token_id == token =>
                {
                    break;
                }
                Ok(Ok(_)) => {}
                Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {}
                other => anyhow::bail!("no change event: {other:?}"),
            }
        }
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    cancel.cancel();
    tracker.close();
    tracker.wait().await;
    // Back to the fixture again, so the worker pass below sees its 1 pair in `--cross-every`.
    for i in crossing.drain() {
        state.live.upsert(flip(i, false));
    }
    summary(
        &format!(
            "book change -> ArbitrageChanged on the bus at {} pairs (running scanner, episode writes batched)",
            args.windows
        ),
        ms,
    );

    // ---------------------------------------------------------------- (c) the worker's whole pass
    // Scan, episode book, batch upsert of every episode seen, publication.
    let mut scanner = Scanner::new(state.clone(), settings);
    let mut ms = Vec::new();
    for _ in 0..args.passes.min(50) {
        let t = Instant::now();
        let r = scanner.pass().await;
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
        std::hint::black_box(r);
    }
    summary(
        &format!(
            "worker pass incl. episode upserts of {found} episodes ({})",
            args.database_url.split(':').next().unwrap_or("?")
        ),
        ms,
    );

    // ---------------------------------------------------------------- (d) /v1/arbitrage/current over HTTP
    let now = Timestamp::now();
    let (listings, books) = fixture(args.serve_windows, args.cross_every.max(1), now);
    let state = state_with(
        &args.database_url,
        args.arbitrage_cache_ms,
        ArbCatalog::new(listings, vec![]),
        books,
    )
    .await?;
    // Books keep their time stamp: serve with a staleness that covers the run.
    let key = state.store.create_key("bench-arb", Plan::Trader).await?.key;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr: SocketAddr = listener.local_addr()?;
    let app = crossbook_server::app(state.clone());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let base = format!("http://{addr}");
    let path = "/v1/arbitrage/current?max_staleness_seconds=86400";
    let client = reqwest::Client::new();
    let body = client
        .get(format!("{base}{path}"))
        .header("x-api-key", &key)
        .send()
        .await?
        .error_for_status()?
        .text()
        .await?;
    let rows = serde_json::from_str::<serde_json::Value>(&body)?
        .as_array()
        .map_or(0, Vec::len);
    let mut ms = Vec::with_capacity(args.requests);
    for _ in 0..args.requests {
        let t = Instant::now();
        let resp = client
            .get(format!("{base}{path}"))
            .header("x-api-key", &key)
            .send()
            .await?;
        anyhow::ensure!(resp.status().is_success(), "status {}", resp.status());
        let _ = resp.bytes().await?;
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    summary(
        &format!(
            "GET {path} over {} paired windows ({rows} rows, {} bytes), sequential",
            args.serve_windows,
            body.len()
        ),
        ms,
    );
    if args.serve_after {
        println!("serving on {base}; load it with e.g.:");
        println!("  wrk -t2 -c64 -d20s --latency -H 'X-API-Key: {key}' '{base}{path}'");
        println!("press Ctrl-C to stop");
        let _ = tokio::signal::ctrl_c().await;
    }
    server.abort();
    Ok(())
}
