//! `crossbook-bench whales`: (a) `/whales/user/feed` over a large trade table with a 50-event watchlist,
//! through the real server and a real key; (b) the time from a trade reaching the trade writer to its
//! `whale.entry` on the bus.
//!
//! ```text
//! cargo run --release -p crossbook-bench -- whales --database-url sqlite:///tmp/cb-whales.db
//! cargo run --release -p crossbook-bench -- whales --database-url postgres://postgres@127.0.0.1:5432/cb_whales
//! ```
//!
//! Data: `--events` active events (2 markets each) and `--trades` trades spread evenly in time over the last
//! 30 days (inserted in time order, as ingestion stores them), each on a random event; sizes are heavy-tailed:
//! 2% of trades are whales (1,000 to 20,000 USD notional), 3% are between 500 and 1,000 USD, the rest below
//! 500. The watchlist is 50 events spread over the catalog, each at
//! 1,000 USD. A second run on the same database reuses the data (a marker trade is written last).
//!
//! The latency figure (b) times what happens after a venue's trade message is parsed: the trade writer's
//! insert (one trade per batch, the worst case) and publish, then the whale tracker's catalog lookup, payload
//! and publish, until a subscriber of the bus receives the `whale.entry`.

use std::{net::SocketAddr, sync::Arc, time::Instant};

use anyhow::Context;
use clap::Args;
use crossbook_core::{Amount, Event, Exchange, Market, Outcome, Plan, Price, Series, TakerSide, Timestamp, Trade};
use crossbook_live::DomainEvent;
use crossbook_server::{AppState, config::Config};
use crossbook_store::{Store, StoreError, WhaleQuery, WhaleTarget};
use rand::{Rng, SeedableRng, rngs::StdRng};
use tokio_util::sync::CancellationToken;

use crate::percentile;

/// Options of the `whales` subcommand.
#[derive(Args)]
pub struct WhalesArgs {
    /// Database to seed and query (sqlite://… or postgres://…).
    #[arg(long, default_value = "sqlite:///tmp/crossbook-bench-whales.db")]
    database_url: String,
    /// Trades stored.
    #[arg(long, default_value_t = 10_000_000)]
    trades: u64,
    /// Events the trades are spread over.
    #[arg(long, default_value_t = 2_000)]
    events: u64,
    /// Timed feed requests per variant (sequential, one connection).
    #[arg(long, default_value_t = 1_000)]
    requests: usize,
    /// Whale trades timed from the trade writer to the bus.
    #[arg(long, default_value_t = 1_000)]
    whales: usize,
}

const WATCHED: u64 = 50;
const MARKER: &str = "WB-DONE";
const DAY_MS: i64 = 86_400_000;
const BATCH: u64 = 20_000;

fn event_id(i: u64) -> String {
    format!("WEV-{i:05}")
}

fn exchange_of(i: u64) -> Exchange {
    if i.is_multiple_of(2) {
        Exchange::VenueA
    } else {
        Exchange::VenueB
    }
}

/// The watched events: 50 spread evenly over the catalog.
fn watched(events: u64) -> Vec<u64> {
    (0..WATCHED).map(|k| k * events / WATCHED).collect()
}

/// A trade with a heavy-tailed notional (see the module doc).
fn random_trade(rng: &mut StdRng, n: u64, event: u64, at: i64) -> Trade {
    let cents = rng.random_range(5..96);
    let price = Price::from_cents(cents);
    let roll: f64 = rng.random();
    let notional_usd = if roll < 0.02 {
        rng.random_range(1_000..20_000)
    } else if roll < 0.05 {
        rng.random_range(500..1_000)
    } else {
        rng.random_range(1..500)
    };
    // size = notional / price, in whole contracts (so the stored notional is exact).
    let size = (notional_usd * 100 / cents).max(1);
    let ex = exchange_of(event);
    Trade {
        exchange: ex,
        source_trade_id: format!("WT{n:010}"),
        market_id: format!("WM-{event:05}-{}", n % 2),
        event_id: event_id(event),
        executed_at: Timestamp::from_millis(at),
        taker_side: if n.is_multiple_of(3) {
            TakerSide::Sell
        } else {
            TakerSide::Buy
        },
        outcome: if n.is_multiple_of(2) { Outcome::Yes } else { Outcome::No },
        price,
        size: Amount::from_units(size),
    }
}

async fn seeded(store: &dyn Store) -> anyhow::Result<bool> {
    let q = WhaleQuery {
        targets: vec![WhaleTarget {
            exchange: Exchange::VenueA,
            event_id: MARKER.into(),
            min_notional: Amount::ZERO,
            market_id: None,
        }],
        start: None,
        end: None,
        limit: 1,
        offset: 0,
        stats_since: Timestamp::from_millis(0),
    };
    Ok(store.whale_trades(&q).await?.total > 0)
}

async fn seed(store: &dyn Store, args: &WhalesArgs) -> anyhow::Result<()> {
    let now = Timestamp::now();
    store
        .upsert_series(
            &[
                Series::new(Exchange::VenueA, "WSER", "Whale bench A"),
                Series::new(Exchange::VenueB, "wser-b", "Whale bench B"),
            ],
            now,
        )
        .await?;
    let mut rng = StdRng::seed_from_u64(11);
    for chunk in (0..args.events).collect::<Vec<_>>().chunks(1_000) {
        let mut evs = Vec::new();
        let mut mks = Vec::new();
        for &i in chunk {
            let ex = exchange_of(i);
            let sid = if ex == Exchange::VenueA { "WSER" } else { "wser-b" };
            let mut e = Event::new(ex, &event_id(i), sid, &format!("Whale bench event {i}"));
            e.volume_24h = Some(Amount::from_units(rng.random_range(1_000..5_000_000)));
            evs.push(e);
            for k in 0..2 {
                let mut m = Market::new(
                    ex,
                    &format!("WM-{i:05}-{k}"),
                    &event_id(i),
                    sid,
                    &format!("Outcome {k} of {i}?"),
                );
                m.title = Some(format!("Outcome {k} of event {i}"));
                if ex == Exchange::VenueB {
                    m.slug = Some(format!("wm-{i}-{k}"));
                }
                mks.push(m);
            }
        }
        store.upsert_events(&evs, now).await?;
        store.upsert_markets(&mks, now).await?;
    }
    let started = Instant::now();
    let span = 30 * DAY_MS;
    let mut n = 0u64;
    while n < args.trades {
        let len = BATCH.min(args.trades - n);
        let batch: Vec<Trade> = (n..n + len)
            .map(|j| {
                // In time order, as ingestion stores them; the event of each trade is random.
                let at = now.millis() - span + (j as i64) * span / args.trades as i64;
                let event = rng.random_range(0..args.events);
                random_trade(&mut rng, j, event, at)
            })
            .collect();
        store.insert_trades(&batch).await?;
        n += len;
        if n.is_multiple_of(1_000_000) || n == args.trades {
            eprintln!(
                "seeded {n} trades in {:.0} s ({:.0} trades/s)",
                started.elapsed().as_secs_f64(),
                n as f64 / started.elapsed().as_secs_f64()
            );
        }
    }
    let mut marker = random_trade(&mut rng, u64::MAX / 2, 0, now.millis());
    marker.event_id = MARKER.into();
    marker.source_trade_id = MARKER.into();
    marker.exchange = Exchange::VenueA;
    store.insert_trades(&[marker]).await?;
    Ok(())
}

fn report(label: &str, mut lat: Vec<f64>) {
    lat.sort_by(|a, b| a.total_cmp(b));
    println!(
        "{label}: n={} median={:.2} ms p90={:.2} ms p99={:.2} ms max={:.2} ms",
        lat.len(),
        percentile(&lat, 0.5),
        percentile(&lat, 0.9),
        percentile(&lat, 0.99),
        lat.last().copied().unwrap_or(0.0)
    );
}

/// Runs the `whales` benchmark.
pub async fn run(args: WhalesArgs) -> anyhow::Result<()> {
    let backend = args.database_url.split(':').next().unwrap_or("?").to_string();
    let store = crossbook_store::open(&args.database_url).await.context("open store")?;
    store.migrate().await?;
    if seeded(store.as_ref()).await? {
        eprintln!("database already seeded; reusing it");
    } else {
        seed(store.as_ref(), &args).await?;
    }
    let key = store.create_key("bench-whales", Plan::Trader).await?;
    let customer = key.info.customer_id;
    for i in watched(args.events) {
        match store
            .add_watch(
                customer,
                exchange_of(i),
                &event_id(i),
                Amount::from_units(1_000),
                Timestamp::now(),
            )
            .await
        {
            Ok(_) | Err(StoreError::Conflict(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    store.close().await;

    // (a) The feed through the real server. `role = api`: no ingestion or other workers in this process.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr: SocketAddr = listener.local_addr()?;
    let mut cfg = Config::for_tests(&args.database_url);
    cfg.role = crossbook_server::config::Role::Api;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(crossbook_server::serve(cfg, listener, async {
        let _ = stop_rx.await;
    }));
    let client = reqwest::Client::new();
    let base = format!("http://{addr}");
    let variants = [
        (
            "feed (default: 50 newest whales of 50 events)",
            "/whales/user/feed".to_string(),
        ),
        (
            "feed (platform + 7-day range + offset 200)",
            format!(
                "/whales/user/feed?platform=venue_a&start_date={}&offset=200",
                Timestamp::from_millis(Timestamp::now().millis() - 7 * DAY_MS).to_iso()
            ),
        ),
        (
            "feed (min_trade_size=10000)",
            "/whales/user/feed?min_trade_size=10000".to_string(),
        ),
    ];
    let get = |path: &str| {
        client
            .get(format!("{base}{path}"))
            .header("x-api-key", key.key.as_str())
            .send()
    };
    let first = get(&variants[0].1)
        .await?
        .error_for_status()?
        .json::<serde_json::Value>()
        .await?;
    eprintln!(
        "watchlist feed: {} whale trades in all, {} in the last 24 h",
        first["pagination"]["total"], first["stats"]["total_trades_24h"]
    );
    for (label, path) in &variants {
        for _ in 0..20 {
            get(path).await?.error_for_status()?;
        }
        let mut lat = Vec::with_capacity(args.requests);
        for _ in 0..args.requests {
            let t = Instant::now();
            let resp = get(path).await?;
            anyhow::ensure!(resp.status().is_success(), "status {}", resp.status());
            let _ = resp.bytes().await?;
            lat.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        report(&format!("whales {backend} {} trades, {label}", args.trades), lat);
    }
    let _ = stop_tx.send(());
    server.await??;

    // (b) Trade writer → bus → whale tracker → `whale.entry` on the bus.
    let store: Arc<dyn Store> = crossbook_store::open(&args.database_url).await?;
    let state = AppState::new(Config::for_tests(&args.database_url), store.clone());
    let mut rx = state.bus.subscribe();
    let cancel = CancellationToken::new();
    let tracker_rx = state.bus.subscribe();
    let tracker = tokio::spawn(crossbook_server::workers::whales::run(
        state.clone(),
        tracker_rx,
        cancel.clone(),
    ));
    let mut rng = StdRng::seed_from_u64(Timestamp::now().millis() as u64);
    let run_id: u64 = rng.random_range(0..1_000_000_000);
    let mut lat = Vec::with_capacity(args.whales);
    for i in 0..args.whales {
        let event = watched(args.events)[i % WATCHED as usize];
        let mut t = random_trade(&mut rng, 0, event, Timestamp::now().millis());
        t.source_trade_id = format!("WL-{run_id}-{i}");
        t.price = Price::from_cents(50);
        t.size = Amount::from_units(rng.random_range(2_000..40_000));
        let started = Instant::now();
        for new in store.insert_trades(&[t]).await? {
            state.bus.publish(DomainEvent::TradeIngested(new));
        }
        loop {
            match rx.recv().await? {
                DomainEvent::WhaleEntry(_) => break,
                _ => continue,
            }
        }
        lat.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    report(&format!("whales {backend} trade writer → whale.entry on the bus"), lat);
    cancel.cancel();
    tracker.await?;
    store.close().await;
    Ok(())
}
