//! Ingestion figures:
//!
//! - `ingest-write`: order-book snapshots per second through the store's batch write path
//!   (`SnapshotStore::insert_snapshots`, the call ingestion's one snapshot writer makes once per tick with every
//!   due book), and bytes stored per snapshot (table and indexes, measured by the database) for a 10-level
//!   book (10 bid and 10 ask levels).
//! - `ingest-latency`: the delay from a simulator book change to the in-memory book: the simulated venues
//!   (manual clock) and the real connectors (venue_a over the signed WebSocket, venue_b over its WebSocket);
//!   each step of the model is published at `t0`, and every `BookUpdated` the ingestion bus carries for it
//!   (published right after the live book is updated) is timed against `t0`.
//!
//! ```text
//! cargo run --release -p crossbook-bench -- ingest-write --database-url sqlite:///tmp/cb-ingest.db
//! cargo run --release -p crossbook-bench -- ingest-write --database-url postgres://postgres@127.0.0.1:5432/cb_bench
//! cargo run --release -p crossbook-bench -- ingest-latency
//! ```

use std::time::{Duration, Instant};

use clap::Args;
use crossbook_core::{Amount, BookSnapshot, Exchange, Level, Price, Timestamp};
use crossbook_live::{Bus, DomainEvent, LiveBooks};
use crossbook_server::{config::Config, workers::ingest::ingest_config};
use crossbook_sim::{SimClock, SimConfig, Simulator};
use crossbook_venues::{Ingest, IngestConfig, VenueHealth};
use rand::{Rng, SeedableRng, rngs::StdRng};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

#[derive(Args, Debug)]
pub struct WriteArgs {
    /// Database (sqlite://… is recreated; on postgres://… the snapshot table is emptied first).
    #[arg(long, default_value = "sqlite:///tmp/crossbook-bench-ingest.db")]
    database_url: String,
    /// Distinct books (one batch holds one snapshot of each, as a writer tick does).
    #[arg(long, default_value_t = 2_000)]
    books: usize,
    /// Batches (ticks, one second of venue time apart).
    #[arg(long, default_value_t = 150)]
    rounds: usize,
    /// Levels per side.
    #[arg(long, default_value_t = 10)]
    levels: usize,
}

#[derive(Args, Debug)]
pub struct LatencyArgs {
    /// Model steps (200 ms of model time each) to time.
    #[arg(long, default_value_t = 300)]
    steps: usize,
    /// Seed of the simulated venues.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

/// A 10-level book around `mid` cents, sizes heavy-tailed.
fn book(rng: &mut StdRng, i: usize, ts: Timestamp, mid: i64, levels: usize) -> BookSnapshot {
    let (exchange, market_id, asset_id) = if i.is_multiple_of(2) {
        (
            Exchange::VenueA,
            format!("KXBTC15M-26MAY12{:04}-{:02}", i / 2, i % 60),
            None,
        )
    } else {
        (
            Exchange::VenueB,
            format!("0x{:064x}", i as u128 * 0x9e37_79b9_7f4a_7c15),
            Some(format!("{}{:040}", 7_125_698_234_u64 + i as u64, i)),
        )
    };
    let size = |rng: &mut StdRng| {
        let u: f64 = rng.random_range(0.0001..1.0);
        Amount::from_units((20.0 / u.powf(0.7)).min(1e6) as i64 + 1)
    };
    let bids = (0..levels)
        .map(|k| Level {
            price: Price::from_cents((mid - 1 - k as i64).max(1)),
            size: size(rng),
        })
        .collect();
    let asks = (0..levels)
        .map(|k| Level {
            price: Price::from_cents((mid + 1 + k as i64).min(99)),
            size: size(rng),
        })
        .collect();
    BookSnapshot {
        exchange,
        market_id,
        asset_id,
        timestamp: ts,
        bids,
        asks,
        no_bids: Vec::new(),
    }
}

/// Bytes the snapshot table (with its indexes) takes.
async fn snapshot_bytes(url: &str) -> anyhow::Result<i64> {
    use sqlx::Connection as _;
    if url.starts_with("sqlite:") {
        let mut c = sqlx::sqlite::SqliteConnection::connect(url).await?;
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut c).await?;
        let pages: i64 = sqlx::query_scalar("PRAGMA page_count").fetch_one(&mut c).await?;
        let free: i64 = sqlx::query_scalar("PRAGMA freelist_count").fetch_one(&mut c).await?;
        let size: i64 = sqlx::query_scalar("PRAGMA page_size").fetch_one(&mut c).await?;
        c.close().await?;
        Ok((pages - free) * size)
    } else {
        let mut c = sqlx::postgres::PgConnection::connect(url).await?;
        sqlx::query("VACUUM ANALYZE book_snapshots").execute(&mut c).await?;
        let b: i64 = sqlx::query_scalar(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::int8 FROM pg_class c \
             WHERE c.relkind IN ('r', 'p') AND (c.relname = 'book_snapshots' OR c.oid IN \
             (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'book_snapshots'::regclass))",
        )
        .fetch_one(&mut c)
        .await?;
        c.close().await?;
        Ok(b)
    }
}

pub async fn write(args: WriteArgs) -> anyhow::Result<()> {
    let url = args.database_url.clone();
    let store = crate::fresh_store(&url, "book_snapshots").await?;
    let before = snapshot_bytes(&url).await?;

    // Every batch built before timing: the figure is the writer's store cost, not the generator's.
    let mut rng = StdRng::seed_from_u64(7);
    let mut mids: Vec<i64> = (0..args.books).map(|_| rng.random_range(20..80)).collect();
    let t0 = Timestamp::now().millis() - (args.rounds as i64) * 1000;
    let batches: Vec<Vec<BookSnapshot>> = (0..args.rounds)
        .map(|r| {
            let ts = Timestamp::from_millis(t0 + r as i64 * 1000);
            (0..args.books)
                .map(|i| {
                    mids[i] = (mids[i] + rng.random_range(-1..=1)).clamp(15, 85);
                    book(&mut rng, i, ts, mids[i], args.levels)
                })
                .collect()
        })
        .collect();
    let total = args.books * args.rounds;

    let started = Instant::now();
    let mut per_batch = Vec::with_capacity(args.rounds);
    for b in &batches {
        let s = Instant::now();
        store.insert_snapshots(b).await?;
        per_batch.push(s.elapsed());
    }
    let elapsed = started.elapsed();
    store.close().await;
    let after = snapshot_bytes(&url).await?;
    per_batch.sort();
    let p50 = per_batch[per_batch.len() / 2];
    let p99 = per_batch[(per_batch.len() * 99 / 100).min(per_batch.len() - 1)];
    println!(
        "ingest-write backend={} books={} rounds={} levels={}x2 snapshots={total}",
        if url.starts_with("sqlite:") {
            "sqlite"
        } else {
            "postgres"
        },
        args.books,
        args.rounds,
        args.levels
    );
    println!(
        "  throughput: {:.0} snapshots/s ({:.2} s total); batch of {} p50 {:.1} ms, p99 {:.1} ms",
        total as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64(),
        args.books,
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3
    );
    println!(
        "  storage: {:.1} bytes per snapshot (table + indexes: {} bytes for {total})",
        (after - before) as f64 / total as f64,
        after - before
    );
    Ok(())
}

pub async fn latency(args: LatencyArgs) -> anyhow::Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let sim = Simulator::start(SimConfig::new(
        args.seed,
        SimClock::Manual {
            start: Timestamp::now(),
        },
    ))
    .await?;
    let (url, path) = crate::temp_sqlite("latency");
    let store = crossbook_store::open(&url).await?;
    store.migrate().await?;
    let (live, bus, health) = {
        let live = LiveBooks::new();
        let health = VenueHealth::new(&live);
        (live, Bus::new(1 << 16), health)
    };
    let mut rx = bus.subscribe();
    let u = sim.urls();
    let cfg = IngestConfig {
        venue_a_rest_url: u.venue_a_rest_url.clone(),
        venue_a_ws_url: u.venue_a_ws_url.clone(),
        venue_a_key_id: u.venue_a_key_id.clone(),
        venue_a_private_key_file: u.venue_a_private_key_file.display().to_string(),
        venue_a_series: Vec::new(),
        venue_b_gamma_url: u.venue_b_gamma_url.clone(),
        venue_b_clob_url: u.venue_b_clob_url.clone(),
        venue_b_data_url: u.venue_b_data_url.clone(),
        venue_b_ws_url: u.venue_b_ws_url.clone(),
        venue_b_series: Vec::new(),
        venue_a_requests_per_second: 200,
        venue_b_requests_per_second: 200,
        // Everything else as the server runs by default (`config.default.toml`).
        ..ingest_config(&Config::default())
    };
    let (cancel, tracker) = (CancellationToken::new(), TaskTracker::new());
    Ingest::start(
        cfg,
        store.clone(),
        live.clone(),
        bus,
        health.clone(),
        cancel.clone(),
        &tracker,
    )?;

    // Warm up: both feeds connected with books.
    let warm = Instant::now();
    loop {
        sim.advance(Duration::from_millis(200));
        tokio::time::sleep(Duration::from_millis(200)).await;
        while rx.try_recv().is_ok() {}
        let ok = [Exchange::VenueA, Exchange::VenueB].iter().all(|ex| {
            health
                .get(*ex)
                .is_some_and(|h| h.connected && h.books > 0 && h.mode == crossbook_venues::FeedMode::WebSocket)
        });
        if ok && warm.elapsed() > Duration::from_secs(5) {
            break;
        }
        anyhow::ensure!(
            warm.elapsed() < Duration::from_secs(90),
            "feeds did not connect: {:?}",
            health.snapshot()
        );
    }

    let mut delays: Vec<Duration> = Vec::new();
    for _ in 0..args.steps {
        let t0 = Instant::now();
        sim.advance(Duration::from_millis(200));
        let window = t0 + Duration::from_millis(200);
        loop {
            let left = window.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, rx.recv()).await {
                Ok(Ok(DomainEvent::BookUpdated(_))) => delays.push(t0.elapsed()),
                Ok(Ok(_)) => {}
                Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(n))) => {
                    anyhow::bail!("bench subscriber lagged by {n}")
                }
                Ok(Err(_)) | Err(_) => break,
            }
        }
    }
    cancel.cancel();
    tracker.close();
    tracker.wait().await;
    store.close().await;
    sim.shutdown().await;
    crate::remove_sqlite(&path);
    anyhow::ensure!(!delays.is_empty(), "no book updates observed");
    delays.sort();
    let q = |p: usize| delays[(delays.len() * p / 100).min(delays.len() - 1)].as_secs_f64() * 1e3;
    println!(
        "ingest-latency: {} book updates over {} model steps; simulator publish -> in-memory book: \
         p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        delays.len(),
        args.steps,
        q(50),
        q(90),
        q(99),
        delays.last().unwrap().as_secs_f64() * 1e3
    );
    Ok(())
}
