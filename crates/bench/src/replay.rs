//! `replay`: `GET /v1/replay` over HTTP. Seeds a UTC day of `--books` books at `--rate` changes a second each
//! through the ingest writer (its numbering and keyframes), compacts it, then streams the whole day of every
//! book to a client that parses each line as JSON, and reports messages a second, the bytes, and the
//! process's resident memory before, during (the highest sample) and after the replay.

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use clap::Args;
use crossbook_core::{Exchange, Market, Plan, Timestamp};
use crossbook_server::config::Config;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Database (sqlite://… is recreated; on postgres://… the log tables are emptied first).
    #[arg(long, default_value = "sqlite:///tmp/crossbook-bench-replay.db")]
    database_url: String,
    /// Books (venue_a markets), each with a day of changes.
    #[arg(long, default_value_t = 1)]
    books: usize,
    /// Changes per second of each book.
    #[arg(long, default_value_t = 10)]
    rate: u32,
    /// Instead of the Rust client, read the day into a polars frame with the Python package
    /// (`clients/python`, with polars and pyarrow installed), this many times, each in a fresh interpreter.
    #[arg(long)]
    python: Option<u32>,
}

/// This process's anonymous resident memory now (Linux, `RssAnon`), in MiB: its heap and stacks. The whole
/// resident size also counts the pages of the SQLite file that its readers map (`mmap_size`), which grow with
/// what a replay reads and belong to the page cache, so they would hide whether the replay itself holds memory.
fn rss_mib() -> f64 {
    status_mib("RssAnon:")
}

fn status_mib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with(field))?;
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// A seeded day of books behind a running server.
pub(crate) struct Seeded {
    pub addr: SocketAddr,
    /// The books' markets (venue_a tickers).
    pub keys: Vec<String>,
    /// A Trader key.
    pub api_key: String,
    /// The day's first millisecond.
    pub start: i64,
    /// Changes seeded per book.
    pub per_book: usize,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Seeded {
    pub async fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.server.await?
    }
}

/// Seeds yesterday (UTC) of `books` books at `rate` changes a second each into `url`, and serves it.
pub(crate) async fn seed_and_serve(url: &str, books: usize, rate: u32) -> anyhow::Result<Seeded> {
    let store = crate::fresh_store(url, "book_chunks, log_books, trades").await?;
    let day = crossbook_core::time::DAY_MS;
    // Yesterday, UTC: a whole day, older than the compaction cutoff.
    let start = (Timestamp::now().millis() / day - 1) * day;
    let per_book = (i64::from(rate) * day / 1000) as usize;

    let seeding = Instant::now();
    let keys = crate::book_log::seed_day(&store, books, rate, start).await?;
    let markets: Vec<Market> = keys
        .iter()
        .map(|k| Market::new(Exchange::VenueA, k, "KXBENCH-E", "KXBENCH", "Bench market?"))
        .collect();
    store.upsert_markets(&markets, Timestamp::now()).await?;
    let api_key = store.create_key("bench-replay", Plan::Trader).await?.key;
    store.close().await;
    println!(
        "seeded {books} books × {per_book} changes ({} events) in {:.1} s",
        books * per_book,
        seeding.elapsed().as_secs_f64()
    );

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr: SocketAddr = listener.local_addr()?;
    let mut cfg = Config::for_tests(url);
    cfg.retention_days = 0;
    let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(crossbook_server::serve(cfg, listener, async {
        let _ = stop_rx.await;
    }));
    Ok(Seeded {
        addr,
        keys,
        api_key,
        start,
        per_book,
        stop,
        server,
    })
}

pub async fn run(args: ReplayArgs) -> anyhow::Result<()> {
    let day = crossbook_core::time::DAY_MS;
    let seeded = seed_and_serve(&args.database_url, args.books, args.rate).await?;
    let (addr, start, per_book, api_key) = (seeded.addr, seeded.start, seeded.per_book, seeded.api_key.clone());
    let ids: String = seeded.keys.iter().map(|k| format!("&market_id={k}")).collect();
    let replay_url = format!(
        "http://{addr}/v1/replay?exchange=venue_a{ids}&start_time={start}&end_time={}",
        start + day - 1
    );
    if let Some(runs) = args.python {
        let ids: Vec<String> = seeded.keys.iter().map(|k| format!("venue_a:{k}")).collect();
        for run in 1..=runs {
            python_frame(&format!("http://{addr}"), &api_key, &ids, start, start + day - 1, run).await?;
        }
        return seeded.stop().await;
    }
    // The listener is bound already: requests wait in its backlog until the server accepts them.
    let client = reqwest::Client::new();

    let before = rss_mib();
    let peak = Arc::new(AtomicU64::new(before.to_bits()));
    let sampling = Arc::new(AtomicBool::new(true));
    // Samples every 100 ms: flat memory shows as the same value from early in the stream to its end.
    let sampler = {
        let (peak, sampling) = (peak.clone(), sampling.clone());
        tokio::spawn(async move {
            let mut samples = Vec::new();
            while sampling.load(Ordering::Relaxed) {
                let now = rss_mib();
                samples.push(now);
                if now > f64::from_bits(peak.load(Ordering::Relaxed)) {
                    peak.store(now.to_bits(), Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            samples
        })
    };
    let t = Instant::now();
    let mut resp = client.get(&replay_url).header("x-api-key", &api_key).send().await?;
    anyhow::ensure!(resp.status().is_success(), "replay: status {}", resp.status());
    let (mut messages, mut bytes, mut changes, mut rest) = (0u64, 0u64, 0u64, Vec::<u8>::new());
    while let Some(piece) = resp.chunk().await? {
        bytes += piece.len() as u64;
        rest.extend_from_slice(&piece);
        let mut at = 0;
        while let Some(nl) = rest[at..].iter().position(|b| *b == b'\n') {
            let line = &rest[at..at + nl];
            let v: serde_json::Value = serde_json::from_slice(line)?;
            if v["type"] == "book_change" {
                changes += 1;
            }
            messages += 1;
            at += nl + 1;
        }
        rest.drain(..at);
    }
    let took = t.elapsed();
    sampling.store(false, Ordering::Relaxed);
    let samples = sampler.await?;
    let at = |q: usize| {
        samples
            .get(samples.len().saturating_sub(1) * q / 100)
            .copied()
            .unwrap_or(before)
    };
    let during = f64::from_bits(peak.load(Ordering::Relaxed));
    let after = rss_mib();
    anyhow::ensure!(
        changes as usize + args.books >= args.books * per_book * 99 / 100,
        "only {changes} changes replayed of {}",
        args.books * per_book
    );
    println!(
        "replay of {} book-day(s): {messages} messages ({changes} changes), {:.1} MiB, in {:.2} s: {:.0} messages/s parsed by the client",
        args.books,
        bytes as f64 / (1024.0 * 1024.0),
        took.as_secs_f64(),
        messages as f64 / took.as_secs_f64()
    );
    println!(
        "anonymous resident memory of the process (server and client): before {before:.0} MiB; during: {:.0} MiB at 10% of the stream, {:.0} at 50%, {:.0} at 90%, at most {during:.0}; after {after:.0} MiB",
        at(10),
        at(50),
        at(90)
    );
    println!(
        "resident memory with the mapped database pages (VmRSS) after: {:.0} MiB",
        status_mib("VmRSS:")
    );
    seeded.stop().await
}

/// One run of the Python package's `Client.replay(…, frame="polars")` over the day, in a fresh interpreter
/// (`clients/python/scripts/bench_replay.py`), which prints its figures.
async fn python_frame(base: &str, key: &str, ids: &[String], from: i64, to: i64, run: u32) -> anyhow::Result<()> {
    let package = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../clients/python");
    let out = tokio::process::Command::new("python3")
        .arg(package.join("scripts/bench_replay.py"))
        .args([base, key, &from.to_string(), &to.to_string()])
        .args(ids)
        .env("PYTHONPATH", package.join("src"))
        .output()
        .await?;
    anyhow::ensure!(
        out.status.success(),
        "bench_replay.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    print!("run {run}: {}", String::from_utf8_lossy(&out.stdout));
    Ok(())
}
