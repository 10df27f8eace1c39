//! Live plane across processes: the leader's events over NATS.
//!
//! - `bus-throughput`: book changes put on the leader's bus at a set rate, published by the real publisher
//!   (`crossbook_live::nats::publisher`) through a real `nats-server`, and counted where the real mirror
//!   (`crossbook_live::nats::mirror`) puts them on its own bus, in this process. Reports the rate the mirror
//!   kept up with, and the holes and drops on the way (a rate with holes is not sustained).
//! - `bus-latency`: a `crossbook serve --role api` child process mirrors the leader's books (many of them, so
//!   its resident memory is that of an api process holding them); a stream client of it follows some of
//!   those books, and each change ingested on the leader is timed until its message reaches the client.
//!
//! ```text
//! cargo run --release -p crossbook-bench -- bus-throughput --rate 100000
//! cargo build --release -p crossbook && cargo run --release -p crossbook-bench -- bus-latency --books 25000
//! ```

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::Context;
use clap::Args;
use crossbook_core::{
    Amount, BookSnapshot, Exchange, Plan, Price, Timestamp,
    book::{BookChange, BookKey, Level, LevelChange, Side},
};
use crossbook_live::{
    BookChanged, Bus, DomainEvent, LiveBooks,
    nats::{BusSettings, connect, mirror, publisher},
};
use futures_util::StreamExt;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

#[derive(Args, Debug)]
pub struct ThroughputArgs {
    /// Book changes per second offered on the leader's bus.
    #[arg(long, default_value_t = 100_000)]
    rate: u64,
    /// Books the changes go round.
    #[arg(long, default_value_t = 2_000)]
    books: usize,
    /// Seconds measured (after 2 s of warm-up).
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// A running nats-server with JetStream (`nats://host:port`); by default the bench starts its own.
    #[arg(long)]
    nats_url: Option<String>,
}

#[derive(Args, Debug)]
pub struct LatencyArgs {
    /// Books the leader holds (and the api process mirrors).
    #[arg(long, default_value_t = 25_000)]
    books: usize,
    /// Markets (one book each) the stream client follows.
    #[arg(long, default_value_t = 100)]
    follow: usize,
    /// Changes timed, one at a time.
    #[arg(long, default_value_t = 2_000)]
    changes: usize,
    /// The `crossbook` binary to run as the api process.
    #[arg(long, default_value = "target/release/crossbook")]
    server_bin: String,
    /// A running nats-server with JetStream (`nats://host:port`); by default the bench starts its own.
    #[arg(long)]
    nats_url: Option<String>,
}

fn level(cents: i64, units: i64) -> Level {
    Level {
        price: Price::from_cents(cents),
        size: Amount::from_units(units),
    }
}

/// Book `i` of the bench, its best bid at `bid` cents (5 to 94), five levels a side.
fn book(i: usize, bid: i64) -> BookSnapshot {
    BookSnapshot {
        exchange: Exchange::VenueA,
        market_id: format!("KXBUS-{i}"),
        asset_id: None,
        timestamp: Timestamp::now(),
        bids: (0..5).map(|d| level(bid - d, 100 + d)).collect(),
        asks: (1..6).map(|d| level(bid + d, 100 + d)).collect(),
        no_bids: vec![],
    }
}

/// What ingestion does: the live map first, then the bus. Returns the book's new number.
fn ingest(live: &LiveBooks, bus: &Bus, b: BookSnapshot, change: BookChange) -> u64 {
    let at = b.timestamp;
    let key = BookKey::of(&b);
    let seq = live.upsert(b).unwrap_or_else(|| live.last_seq(&key));
    bus.publish(DomainEvent::BookUpdated(Arc::new(BookChanged {
        key,
        book_seq: seq,
        timestamp: at,
        change,
        venue_ts: None,
        received_at: Timestamp::now(),
    })));
    seq
}

/// Changes book `i` to a best bid of `bid` cents: the whole book goes to the live map, the two levels that
/// moved to the bus.
fn change(live: &LiveBooks, bus: &Bus, i: usize, bid: i64) -> u64 {
    let b = book(i, bid);
    let delta = BookChange::Delta(vec![
        LevelChange {
            side: Side::Bid,
            price: Price::from_cents(bid),
            size: Amount::from_units(100),
        },
        LevelChange {
            side: Side::Bid,
            price: Price::from_cents(bid - 5),
            size: Amount::from_units(0),
        },
    ]);
    ingest(live, bus, b, delta)
}

/// Seeds `n` books on the leader, each as a whole-book change (its first keyframe follows).
fn seed(live: &LiveBooks, bus: &Bus, n: usize) {
    for i in 0..n {
        let b = book(i, 50);
        let whole = BookChange::Snapshot {
            bids: b.bids.clone(),
            asks: b.asks.clone(),
            no_bids: vec![],
        };
        ingest(live, bus, b, whole);
    }
}

/// Waits for `f` until `within`, checking every 50 ms.
async fn wait_for(what: &str, within: Duration, mut f: impl AsyncFnMut() -> bool) -> anyhow::Result<()> {
    let until = Instant::now() + within;
    while !f().await {
        anyhow::ensure!(Instant::now() < until, "{what} did not happen within {within:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// The leader: its live map, its bus, and the publisher on NATS.
async fn leader(settings: &BusSettings, cancel: &CancellationToken) -> anyhow::Result<(LiveBooks, Bus)> {
    let (live, bus) = (LiveBooks::new(), Bus::new(1 << 16));
    let rx = bus.subscribe();
    let conn = connect(settings, "bench-leader", true).await?;
    tokio::spawn(publisher::run(
        settings.clone(),
        conn,
        live.clone(),
        rx,
        publisher::PublisherStatus::default(),
        cancel.clone(),
    ));
    Ok((live, bus))
}

pub async fn throughput(args: ThroughputArgs) -> anyhow::Result<()> {
    let (url, _server) = crate::nats(args.nats_url)?;
    let settings = BusSettings {
        url,
        window: Duration::from_secs(120),
    };
    let cancel = CancellationToken::new();
    let (live, bus) = leader(&settings, &cancel).await?;

    // The mirror, and a counter of the book changes it puts on its bus.
    let (m_live, m_bus) = (LiveBooks::new(), Bus::new(1 << 16));
    let mut m_rx = m_bus.subscribe();
    let status = mirror::MirrorStatus::default();
    let conn = connect(&settings, "bench-mirror", true).await?;
    tokio::spawn(mirror::run(conn, m_live.clone(), m_bus, status.clone(), cancel.clone()));
    wait_for("the mirror to load", Duration::from_secs(30), async || status.serving()).await?;
    let received = Arc::new(AtomicU64::new(0));
    let lagged = Arc::new(AtomicU64::new(0));
    {
        let (received, lagged) = (received.clone(), lagged.clone());
        tokio::spawn(async move {
            loop {
                match m_rx.recv().await {
                    Ok(DomainEvent::BookUpdated(_)) => {
                        received.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        lagged.fetch_add(n, Ordering::Relaxed);
                    }
                    Err(_) => break,
                }
            }
        });
    }
    seed(&live, &bus, args.books);
    let seeded = args.books as u64;
    wait_for("the seeded books at the mirror", Duration::from_secs(60), async || {
        received.load(Ordering::Relaxed) >= seeded
    })
    .await?;

    // Offered at the rate, in 1 ms ticks; the producer counts what it put on the bus.
    let offered = Arc::new(AtomicU64::new(0));
    let stop = CancellationToken::new();
    let producer = {
        let (live, bus, offered, stop) = (live.clone(), bus.clone(), offered.clone(), stop.clone());
        let (books, rate) = (args.books, args.rate);
        tokio::spawn(async move {
            let t0 = Instant::now();
            let mut tick = tokio::time::interval(Duration::from_millis(1));
            let mut n: u64 = 0;
            while !stop.is_cancelled() {
                tick.tick().await;
                let due = (t0.elapsed().as_secs_f64() * rate as f64) as u64;
                while n < due {
                    let i = (n % books as u64) as usize;
                    let round = n / books as u64;
                    // Between 20 and 79 cents, a different bid each round.
                    change(&live, &bus, i, 20 + (round % 60) as i64);
                    n += 1;
                }
                offered.store(n, Ordering::Relaxed);
            }
        })
    };
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (o0, r0, t0) = (
        offered.load(Ordering::Relaxed),
        received.load(Ordering::Relaxed),
        Instant::now(),
    );
    let holes0 = status.read().holes;
    tokio::time::sleep(Duration::from_secs(args.seconds)).await;
    let (o1, r1, secs) = (
        offered.load(Ordering::Relaxed),
        received.load(Ordering::Relaxed),
        t0.elapsed().as_secs_f64(),
    );
    stop.cancel();
    producer.await?;
    // What was still on the way when measuring ended: drained, or left behind.
    let total = offered.load(Ordering::Relaxed) + seeded;
    let drained = wait_for("the mirror to catch up", Duration::from_secs(30), async || {
        received.load(Ordering::Relaxed) >= total
    })
    .await;
    let end = status.read();
    cancel.cancel();
    println!(
        "bus-throughput: leader publisher -> nats-server -> mirror, {} books, {:.0} s measured",
        args.books, secs
    );
    println!(
        "  offered {:.0} changes/s, received at the mirror's bus {:.0} changes/s",
        (o1 - o0) as f64 / secs,
        (r1 - r0) as f64 / secs
    );
    println!(
        "  holes while measuring: {}, mirror bus lagged: {} events, caught up after: {}",
        end.holes - holes0,
        lagged.load(Ordering::Relaxed),
        if drained.is_ok() { "yes" } else { "no (left behind)" }
    );
    Ok(())
}

pub async fn latency(args: LatencyArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.follow <= args.books, "--follow must be at most --books");
    let db = crossbook_store::testing::postgres_database()
        .await
        .context("an api process needs PostgreSQL: set CROSSBOOK_TEST_DATABASE_URL")?;
    let key = crate::stream::create_key(&db.url, Plan::Trader).await?;
    let (url, _server) = crate::nats(args.nats_url)?;
    let settings = BusSettings {
        url: url.clone(),
        window: Duration::from_secs(120),
    };
    let cancel = CancellationToken::new();
    let (live, bus) = leader(&settings, &cancel).await?;
    seed(&live, &bus, args.books);

    // The api process.
    let addr = crate::free_addr()?;
    let (mut child, config_path) = crate::spawn_server(
        &args.server_bin,
        "bus",
        &format!(
            "database_url = \"{}\"\nlisten = \"{addr}\"\nrole = \"api\"\nbus_url = \"{url}\"\nlog = \"warn\"\nrate_limit_trader = 0\nstream_connections_trader = 0\n",
            db.url
        ),
        std::process::Stdio::inherit(),
    )?;
    let pid = child.id().context("api process pid")?;
    let http = reqwest::Client::new();
    let books = args.books as u64;
    let mirrored = async || -> u64 {
        let Ok(r) = http.get(format!("http://{addr}/readyz")).send().await else {
            return 0;
        };
        let Ok(v) = r.json::<Value>().await else { return 0 };
        v["live"]["bus"]["books"].as_u64().unwrap_or(0)
    };
    let loading = Instant::now();
    wait_for(
        "the api process to mirror every book",
        Duration::from_secs(180),
        async || mirrored().await >= books,
    )
    .await?;
    let load_secs = loading.elapsed().as_secs_f64();
    let rss_loaded = crate::stream::rss_mib(pid);

    // A stream client following `follow` books, its snapshots read.
    let markets: Vec<String> = (0..args.follow).map(|i| format!("KXBUS-{i}")).collect();
    let mut ws = crate::stream::connect(addr, &key).await?;
    crate::stream::subscribe(&mut ws, "book", &markets).await?;
    let mut seen = 0;
    while seen < args.follow {
        match tokio::time::timeout(Duration::from_secs(10), ws.next()).await {
            Ok(Some(Ok(Message::Text(t)))) if t.as_str().contains("\"type\":\"snapshot\"") => seen += 1,
            Ok(Some(Ok(_))) => {}
            other => anyhow::bail!("the snapshots did not arrive: {other:?}"),
        }
    }

    // One change at a time: ingested on the leader, timed until its message (its book and number) arrives.
    let mut delays = Vec::with_capacity(args.changes);
    for n in 0..args.changes {
        let i = n % args.follow;
        let bid = 20 + ((n / args.follow) % 60) as i64 + 1;
        let market = &markets[i];
        let t0 = Instant::now();
        let seq = change(&live, &bus, i, bid);
        loop {
            match tokio::time::timeout(Duration::from_secs(5), ws.next()).await {
                Ok(Some(Ok(Message::Text(t)))) => {
                    let v: Value = serde_json::from_str(t.as_str())?;
                    if v["market_id"].as_str() == Some(market) && v["book_seq"].as_u64() == Some(seq) {
                        delays.push(t0.elapsed().as_secs_f64() * 1e3);
                        break;
                    }
                }
                Ok(Some(Ok(_))) => {}
                other => anyhow::bail!("change {n} did not arrive: {other:?}"),
            }
        }
    }
    let rss_end = crate::stream::rss_mib(pid);
    let _ = child.kill().await;
    cancel.cancel();
    let _ = std::fs::remove_file(&config_path);
    db.cleanup().await;
    println!(
        "bus-latency: leader -> nats-server -> api process ({} books mirrored, loaded in {load_secs:.1} s) -> stream client following {}",
        args.books, args.follow
    );
    println!(
        "  {}",
        crate::stream::percentiles("leader ingest -> client message (book)", delays)
    );
    println!(
        "  api process RSS: {:.0} MiB with the books mirrored, {:.0} MiB after the timed changes",
        rss_loaded.unwrap_or(0.0),
        rss_end.unwrap_or(0.0)
    );
    Ok(())
}
