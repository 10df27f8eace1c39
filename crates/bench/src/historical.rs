//! `crossbook-bench historical`: one market with a day of 1-second snapshots (86,400 rows) among 1,000
//! markets, then (a) the latest 100 rows and (b) the whole day downsampled to 1m, walked in pages of 200 —
//! measured at the store (the calls the handlers make) and over HTTP (the real server, real key).
//!
//! ```text
//! cargo run --release -p crossbook-bench -- historical --database-url sqlite:///tmp/cb-hist.db
//! cargo run --release -p crossbook-bench -- historical --database-url postgres://postgres@127.0.0.1:5432/cb_hist
//! ```
//!
//! The day is fixed (2025-11-13 UTC), so a second run reuses the seeded database; the server started here has
//! retention off so that it does not remove it.

use std::{net::SocketAddr, time::Instant};

use anyhow::Context;
use clap::Args;
use crossbook_core::{Amount, BookSnapshot, Exchange, Level, Market, Plan, Price, Timestamp};
use crossbook_server::config::Config;
use crossbook_store::{BookHistoryQuery, HistoryWindow, Store};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// Options of the `historical` subcommand.
#[derive(Args)]
pub struct HistoricalArgs {
    /// Database to seed and query (sqlite://… or postgres://…).
    #[arg(long, default_value = "sqlite:///tmp/crossbook-bench-historical.db")]
    database_url: String,
    /// Markets with snapshots (one of them has a snapshot every second of the day).
    #[arg(long, default_value_t = 1_000)]
    markets: u32,
    /// Seconds between two snapshots of every other market over the same day.
    #[arg(long, default_value_t = 60)]
    others_every_secs: i64,
    /// Timed reads of the latest 100 rows.
    #[arg(long, default_value_t = 1_000)]
    latest_reads: usize,
    /// Timed walks of the downsampled day.
    #[arg(long, default_value_t = 50)]
    walks: usize,
    /// Store-level figures only (no HTTP server).
    #[arg(long)]
    store_only: bool,
}

const HOT: &str = "KXHB-HOT";
/// 2025-11-13T00:00:00Z.
const DAY_START: i64 = 1_762_992_000_000;
const DAY_MS: i64 = 86_400_000;
const MINUTE: i64 = 60_000;
const PAGE: u32 = 200;
const LATEST: u32 = 100;

fn ladder(rng: &mut StdRng, top: i64, down: bool) -> Vec<Level> {
    (0..10)
        .map(|i| Level {
            price: Price::from_micros(if down { top - i * 10_000 } else { top + i * 10_000 }),
            size: Amount::from_units(rng.random_range(1..5_000)),
        })
        .collect()
}

fn snapshot(rng: &mut StdRng, market: &str, ts: i64) -> BookSnapshot {
    let yes = rng.random_range(30..60) * 10_000;
    let no = 1_000_000 - yes - rng.random_range(1..4) * 10_000;
    BookSnapshot {
        exchange: Exchange::VenueA,
        market_id: market.to_string(),
        asset_id: None,
        timestamp: Timestamp::from_millis(ts),
        bids: ladder(rng, yes, true),
        asks: Vec::new(),
        no_bids: ladder(rng, no, true),
    }
}

async fn seed(store: &dyn Store, args: &HistoricalArgs) -> anyhow::Result<()> {
    let now = Timestamp::now();
    let names: Vec<String> = (0..args.markets)
        .map(|i| {
            if i == 0 {
                HOT.to_string()
            } else {
                format!("KXHB-{i:05}")
            }
        })
        .collect();
    let markets: Vec<Market> = names
        .iter()
        .map(|m| Market::new(Exchange::VenueA, m, "KXHB-E", "KXHB", &format!("Bench {m}?")))
        .collect();
    store.upsert_markets(&markets, now).await?;
    let mut rng = StdRng::seed_from_u64(11);
    let started = Instant::now();
    let mut batch = Vec::with_capacity(5_000);
    let mut total = 0u64;
    let mut flush = async |batch: &mut Vec<BookSnapshot>| -> anyhow::Result<()> {
        store.insert_snapshots(batch).await?;
        total += batch.len() as u64;
        batch.clear();
        Ok(())
    };
    for s in 0..DAY_MS / 1000 {
        batch.push(snapshot(&mut rng, HOT, DAY_START + s * 1000));
        if batch.len() == 5_000 {
            flush(&mut batch).await?;
        }
    }
    let step = args.others_every_secs.max(1) * 1000;
    for m in names.iter().skip(1) {
        let offset = rng.random_range(0..step);
        let mut t = DAY_START + offset;
        while t < DAY_START + DAY_MS {
            batch.push(snapshot(&mut rng, m, t));
            if batch.len() == 5_000 {
                flush(&mut batch).await?;
            }
            t += step;
        }
    }
    flush(&mut batch).await?;
    eprintln!(
        "seeded {total} snapshots of {} markets in {:.0} s",
        args.markets,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn stats(label: &str, mut ms: Vec<f64>) {
    ms.sort_by(|a, b| a.total_cmp(b));
    let pick = |p: f64| ms[(((ms.len() - 1) as f64) * p).round() as usize];
    println!(
        "{label}: n={} median={:.2} ms p90={:.2} ms p99={:.2} ms max={:.2} ms",
        ms.len(),
        pick(0.5),
        pick(0.9),
        pick(0.99),
        ms.last().copied().unwrap_or(0.0)
    );
}

fn query(window: HistoryWindow, limit: u32) -> BookHistoryQuery {
    BookHistoryQuery {
        exchange: Exchange::VenueA,
        market_id: HOT.into(),
        asset_id: None,
        window,
        limit,
    }
}

/// The reads the venue_a handler makes: `limit + 1` rows per page, resuming after the last row's bucket.
async fn store_walk(store: &dyn Store) -> anyhow::Result<(usize, usize)> {
    let (mut rows, mut pages, mut after) = (0, 0, None);
    loop {
        let window = HistoryWindow::Range {
            start: Timestamp::from_millis(DAY_START),
            end: Timestamp::from_millis(DAY_START + DAY_MS - 1),
            bucket_ms: MINUTE,
            after,
        };
        let mut page = store.snapshots(&query(window, PAGE + 1)).await?;
        pages += 1;
        let more = page.len() > PAGE as usize;
        page.truncate(PAGE as usize);
        rows += page.len();
        match page.last() {
            Some(last) if more => after = Some(last.timestamp),
            _ => return Ok((rows, pages)),
        }
    }
}

pub async fn run(args: HistoricalArgs) -> anyhow::Result<()> {
    let backend = args.database_url.split(':').next().unwrap_or("?").to_string();
    let store = crossbook_store::open(&args.database_url).await.context("open store")?;
    store.migrate().await?;
    let have = store
        .snapshots(&query(HistoryWindow::Latest { before: None }, 1))
        .await?;
    if have.is_empty() {
        seed(store.as_ref(), &args).await?;
    } else {
        eprintln!("database already seeded; reusing it");
    }

    // (a) at the store: the latest 100 rows (the handler reads 101 to know whether more follow).
    for _ in 0..50 {
        store
            .snapshots(&query(HistoryWindow::Latest { before: None }, LATEST + 1))
            .await?;
    }
    let mut lat = Vec::with_capacity(args.latest_reads);
    for _ in 0..args.latest_reads {
        let t = Instant::now();
        let rows = store
            .snapshots(&query(HistoryWindow::Latest { before: None }, LATEST + 1))
            .await?;
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
        anyhow::ensure!(rows.len() == LATEST as usize + 1, "{} rows", rows.len());
    }
    stats(&format!("({backend}) store  (a) latest 100 rows"), lat);

    // (b) at the store: the day at 1m, pages of 200.
    let (rows, pages) = store_walk(store.as_ref()).await?;
    anyhow::ensure!(rows == 1_440, "the walk returned {rows} rows");
    let mut walks = Vec::with_capacity(args.walks);
    for _ in 0..args.walks {
        let t = Instant::now();
        store_walk(store.as_ref()).await?;
        walks.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    stats(
        &format!("({backend}) store  (b) 1 day at 1m = {rows} rows in {pages} pages of {PAGE}, whole walk"),
        walks,
    );
    if args.store_only {
        store.close().await;
        return Ok(());
    }

    // The same over HTTP, through the real server with a free key.
    let key = store.create_key("bench-historical", Plan::Free).await?.key;
    store.close().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr: SocketAddr = listener.local_addr()?;
    let mut cfg = Config::for_tests(&args.database_url);
    cfg.retention_days = 0;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(crossbook_server::serve(cfg, listener, async {
        let _ = stop_rx.await;
    }));
    let client = reqwest::Client::new();
    let base = format!("http://{addr}/v1/historical/venue_a/orderbook?market_id={HOT}");
    let get = async |url: &str| -> anyhow::Result<serde_json::Value> {
        let resp = client.get(url).header("x-api-key", &key).send().await?;
        anyhow::ensure!(resp.status().is_success(), "status {}", resp.status());
        Ok(resp.json().await?)
    };
    let latest_url = format!("{base}&limit={LATEST}");
    for _ in 0..50 {
        get(&latest_url).await?;
    }
    let mut lat = Vec::with_capacity(args.latest_reads);
    for _ in 0..args.latest_reads {
        let t = Instant::now();
        let v = get(&latest_url).await?;
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
        anyhow::ensure!(v["pagination"]["count"] == LATEST, "{}", v["pagination"]);
    }
    stats(&format!("({backend}) HTTP   (a) latest 100 rows"), lat);

    let range_url = format!(
        "{base}&start_time={DAY_START}&end_time={}&granularity=1m&limit={PAGE}",
        DAY_START + DAY_MS - 1
    );
    let http_walk = async || -> anyhow::Result<(u64, usize)> {
        let (mut rows, mut pages, mut url) = (0, 0, range_url.clone());
        loop {
            let v = get(&url).await?;
            pages += 1;
            rows += v["pagination"]["count"].as_u64().unwrap_or(0);
            match v["pagination"]["pagination_key"].as_str() {
                Some(k) => url = format!("{range_url}&pagination_key={k}"),
                None => return Ok((rows, pages)),
            }
        }
    };
    let (rows, pages) = http_walk().await?;
    anyhow::ensure!(rows == 1_440, "the HTTP walk returned {rows} rows");
    let mut walks = Vec::with_capacity(args.walks);
    for _ in 0..args.walks {
        let t = Instant::now();
        http_walk().await?;
        walks.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    stats(
        &format!("({backend}) HTTP   (b) 1 day at 1m = {rows} rows in {pages} pages of {PAGE}, whole walk"),
        walks,
    );
    let _ = stop_tx.send(());
    server.await??;
    Ok(())
}
