//! `crossbook-bench`: seeds a database with realistic data and measures the API through real HTTP, so the
//! figures in docs/performance.md come from the same code path users hit. Not a test: run it by hand (see
//! that guide for each figure's command).
//!
//! ```text
//! cargo run --release -p crossbook-bench -- search --markets 1000000 --database-url sqlite:///tmp/cb-bench.db
//! ```

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod arbitrage;
mod backtest;
mod book_log;
mod bus;
mod dashboard;
mod export;
mod historical;
mod idle;
mod ingest;
mod ohlcv;
mod replay;
mod stream;
mod venue_scale;
mod webhooks;
mod whales;

use std::{net::SocketAddr, time::Instant};

use anyhow::Context;
use clap::{Parser, Subcommand};
use crossbook_core::{Amount, Event, Exchange, IntervalCode, Market, Series, Status, Timestamp};
use crossbook_live::testing::{NatsServer, nats_binary};
use crossbook_server::config::Config;
use rand::{Rng, SeedableRng, rngs::StdRng, seq::IndexedRandom};

#[derive(Parser)]
#[command(name = "crossbook-bench", about = "Benchmarks of crossbook through real HTTP")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// A scanner pass over N paired windows with 10-level books, and `/v1/arbitrage/current` over HTTP (and wrk).
    Arbitrage(arbitrage::ArbitrageArgs),
    /// One market with a day of 1-second snapshots among N markets: latest 100 rows and the day at 1m in pages
    /// of 200, at the store and over HTTP.
    Historical(historical::HistoricalArgs),
    /// The web dashboard in headless Chromium: cold first paint and page weight, and the live view's JS heap,
    /// DOM and Chromium memory over minutes (needs chromium and chromium-driver).
    Dashboard(dashboard::DashboardArgs),
    /// `/whales/user/feed` over millions of trades with a 50-event watchlist, and trade → `whale.entry` latency.
    Whales(whales::WhalesArgs),
    /// Snapshots per second through the store's batch write path, and bytes stored per snapshot.
    IngestWrite(ingest::WriteArgs),
    /// Book events per second through the book writer into the event log, compaction, and bytes per delta.
    LogWrite(book_log::LogWriteArgs),
    /// A day of one book in the event log: latest rows and the day at 1m, read from the log at the store and over HTTP.
    LogRead(book_log::LogReadArgs),
    /// `/v1/replay` of whole book-days over HTTP, parsed line by line: messages/s and memory.
    Replay(replay::ReplayArgs),
    /// A cross-venue arbitrage backtest over a recorded day of both venues' BTC windows, at the store: book
    /// events/s.
    Backtest(backtest::BacktestArgs),
    /// `/v1/export/books` of one book-day over HTTP, Parquet and CSV: time and file size.
    Export(export::ExportArgs),
    /// `/v1/markets/ohlcv` over millions of trades: a year of one market's daily candles, and the trade
    /// insert rate with the candle aggregates kept.
    Ohlcv(ohlcv::OhlcvArgs),
    /// Delay from a simulator book change to the in-memory book.
    IngestLatency(ingest::LatencyArgs),
    StreamLatency(stream::LatencyArgs),
    StreamFanout(stream::FanoutArgs),
    /// Book changes/s from the leader's publisher through nats-server to a mirror, sustained.
    BusThroughput(bus::ThroughputArgs),
    /// Leader book change -> stream client of a `--role api` process over NATS; its RSS with N mirrored books.
    BusLatency(bus::LatencyArgs),
    /// `crossbook serve` following the whole full-scale simulated venues for minutes: events produced against
    /// captured (or gapped), events/s, log bytes per day, CPU, memory, scanner pass, change → stream p99 and
    /// catalog syncs.
    VenueScale(venue_scale::VenueScaleArgs),
    /// The webhook dispatcher: one event fanned out to N loopback receivers, and sustained deliveries/s.
    Webhooks(webhooks::WebhooksArgs),
    /// N idle TCP connections held open: `/healthz` latency meanwhile, and when the server closes them.
    IdleSockets(idle::IdleArgs),
    /// Seed N markets (if the database has fewer) and time `/v1/search/markets?q=…`.
    Search {
        /// Database to seed and query (sqlite://… or postgres://…).
        #[arg(long, default_value = "sqlite:///tmp/crossbook-bench.db")]
        database_url: String,
        /// Markets in the catalog.
        #[arg(long, default_value_t = 1_000_000)]
        markets: u64,
        /// Requests to time (sequential, one connection).
        #[arg(long, default_value_t = 2_000)]
        requests: usize,
        /// Keep serving after the timing run so `wrk` can load the same server; prints the wrk command.
        #[arg(long)]
        serve_after: bool,
        /// The server's `search_cache_ms` (0 measures every request against the database).
        #[arg(long, default_value_t = 1000)]
        search_cache_ms: u64,
    },
}

/// The bench's own nats-server, or the one named.
fn nats(url: Option<String>) -> anyhow::Result<(String, Option<NatsServer>)> {
    if let Some(url) = url {
        return Ok((url, None));
    }
    let bin = nats_binary().context("nats-server is not installed: pass --nats-url")?;
    let server = NatsServer::start(bin);
    Ok((server.url(), Some(server)))
}

/// Needles of 3–12 letters, as users type them: common, rare, and matching nothing.
/// A loopback address with a free port, for a server the bench starts.
fn free_addr() -> anyhow::Result<SocketAddr> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    Ok(SocketAddr::from(([127, 0, 0, 1], port)))
}

/// `crossbook serve` (the binary `bin`, built beforehand) as a child process, with `config` (TOML) written to a
/// temporary file named after `tag`, and its warnings to `stderr`. The child is killed when dropped; the caller
/// removes the returned config file when done.
fn spawn_server(
    bin: &str,
    tag: &str,
    config: &str,
    stderr: std::process::Stdio,
) -> anyhow::Result<(tokio::process::Child, std::path::PathBuf)> {
    anyhow::ensure!(
        std::path::Path::new(bin).exists(),
        "{bin} not found: build it with `cargo build --release -p crossbook`"
    );
    let config_path = std::env::temp_dir().join(format!("crossbook-bench-{tag}-{}.toml", std::process::id()));
    std::fs::write(&config_path, config)?;
    let child = tokio::process::Command::new(bin)
        .arg("--config")
        .arg(&config_path)
        .arg("serve")
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("start {bin}"))?;
    Ok((child, config_path))
}

/// A fresh SQLite database file in the temporary directory for one bench run: its URL and path.
fn temp_sqlite(tag: &str) -> (String, std::path::PathBuf) {
    let path = std::env::temp_dir().join(format!("crossbook-bench-{tag}-{}.db", std::process::id()));
    remove_sqlite(&path);
    (format!("sqlite://{}", path.display()), path)
}

/// Removes a SQLite database file with its write-ahead log.
fn remove_sqlite(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

const NEEDLES: &[&str] = &[
    "bitcoin",
    "lakers",
    "fed",
    "rates",
    "celtics",
    "election",
    "above",
    "nov",
    "ethereum",
    "super bowl",
    "senate",
    "inflation",
    "xyzzyq",
    "temperature",
    "taylor",
    "champion",
    "recession",
    "arsenal",
    "gdp",
    "price",
];

const TEAMS: &[&str] = &[
    "Lakers",
    "Celtics",
    "Warriors",
    "Knicks",
    "Heat",
    "Bulls",
    "Arsenal",
    "Chelsea",
    "Liverpool",
    "Yankees",
    "Dodgers",
    "Chiefs",
    "Eagles",
    "Cowboys",
    "Real Madrid",
    "Barcelona",
    "Bayern",
    "Juventus",
    "Packers",
    "Mets",
];
const TOPICS: &[&str] = &[
    "Will the Fed cut rates in {m} {y}?",
    "Will CPI inflation exceed {p}% in {m} {y}?",
    "Will {a} beat {b} on {m} {d}?",
    "{a} vs {b}: will {a} win on {m} {d}, {y}?",
    "Will Bitcoin close above ${k} on {m} {d}?",
    "Will Ethereum trade above ${k} at the end of {m}?",
    "Will the Senate pass the {w} bill by {m} {y}?",
    "Will the high temperature in {c} be above {t}°F on {m} {d}?",
    "Will {a} win the {y} championship?",
    "US GDP growth above {p}% in Q{q} {y}?",
    "Will Taylor Swift announce a new album before {m} {d}?",
    "Will the US enter a recession in {y}?",
];
const MONTHS: &[&str] = &[
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const CITIES: &[&str] = &[
    "Chicago", "Miami", "Denver", "Austin", "Seattle", "Boston", "New York", "Phoenix",
];
const BILLS: &[&str] = &[
    "farm",
    "defense",
    "budget",
    "infrastructure",
    "tax",
    "energy",
    "housing",
];

fn title(rng: &mut StdRng) -> String {
    let t = *TOPICS.choose(rng).expect("non-empty");
    let a = *TEAMS.choose(rng).expect("non-empty");
    let mut b = *TEAMS.choose(rng).expect("non-empty");
    if a == b {
        b = "Rangers";
    }
    t.replace("{a}", a)
        .replace("{b}", b)
        .replace("{m}", MONTHS.choose(rng).expect("non-empty"))
        .replace("{d}", &rng.random_range(1..=28).to_string())
        .replace("{y}", &rng.random_range(2024..=2027).to_string())
        .replace(
            "{p}",
            &format!("{}.{}", rng.random_range(1..6), rng.random_range(0..10)),
        )
        .replace(
            "{k}",
            &format!("{},{:03}", rng.random_range(40..140), rng.random_range(0..1000)),
        )
        .replace("{w}", BILLS.choose(rng).expect("non-empty"))
        .replace("{c}", CITIES.choose(rng).expect("non-empty"))
        .replace("{t}", &rng.random_range(20..110).to_string())
        .replace("{q}", &rng.random_range(1..=4).to_string())
}

async fn seed(store: &dyn crossbook_store::Store, markets: u64) -> anyhow::Result<()> {
    let mut rng = StdRng::seed_from_u64(7);
    let now = Timestamp::now();
    let per_event = 10u64;
    let batch = 10_000u64;
    let series = [
        Series {
            category: Some("other".into()),
            ..Series::new(Exchange::VenueA, "KXBENCH", "Benchmark series A")
        },
        Series {
            category: Some("other".into()),
            ..Series::new(Exchange::VenueB, "bench-b", "Benchmark series B")
        },
    ];
    store.upsert_series(&series, now).await?;
    let started = Instant::now();
    let mut i = 0u64;
    while i < markets {
        let n = batch.min(markets - i);
        let mut evs = Vec::new();
        let mut mks = Vec::with_capacity(n as usize);
        for j in i..i + n {
            let ex = if j % 2 == 0 { Exchange::VenueA } else { Exchange::VenueB };
            let sid = if ex == Exchange::VenueA { "KXBENCH" } else { "bench-b" };
            let eid = format!("EVB-{}", j / per_event);
            if j % per_event == 0 || j == i {
                evs.push(Event::new(ex, &eid, sid, &title(&mut rng)));
            }
            let q = title(&mut rng);
            let mut m = Market::new(ex, &format!("MKB-{j:08}"), &eid, sid, &q);
            m.title = Some(q.clone());
            m.subtitle = Some(format!("Bench market {j}"));
            m.volume = Amount::from_units(rng.random_range(0..1_000_000));
            m.liquidity = Amount::from_units(rng.random_range(0..100_000));
            m.category = Some(if q.contains(" vs ") { "sports" } else { "other" }.into());
            if j % 97 == 0 {
                m.interval_code = Some(IntervalCode::M15);
            }
            if j % 5 == 0 {
                m.status = Status::Closed;
            }
            mks.push(m);
        }
        store.upsert_events(&evs, now).await?;
        store.upsert_markets(&mks, now).await?;
        i += n;
        if i.is_multiple_of(100_000) || i == markets {
            eprintln!(
                "seeded {i}/{markets} markets ({:.0} s)",
                started.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}

/// An empty, migrated store at `url`: a SQLite file is removed first; on PostgreSQL the `tables` (a
/// comma-separated list) are emptied after migrating.
async fn fresh_store(url: &str, tables: &str) -> anyhow::Result<std::sync::Arc<dyn crossbook_store::Store>> {
    if let Some(path) = url.strip_prefix("sqlite://") {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{path}{suffix}"));
        }
    }
    let store = crossbook_store::open(url).await.context("open")?;
    store.migrate().await.context("migrate")?;
    if !url.starts_with("sqlite:") {
        use sqlx::Connection as _;
        let mut c = sqlx::postgres::PgConnection::connect(url).await?;
        sqlx::query(sqlx::AssertSqlSafe(format!("TRUNCATE {tables}")))
            .execute(&mut c)
            .await?;
        c.close().await?;
    }
    Ok(store)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    match Cli::parse().cmd {
        Cmd::Arbitrage(args) => arbitrage::run(args).await?,
        Cmd::Historical(args) => historical::run(args).await?,
        Cmd::IngestWrite(args) => ingest::write(args).await?,
        Cmd::LogWrite(args) => book_log::write(args).await?,
        Cmd::LogRead(args) => book_log::read(args).await?,
        Cmd::Replay(args) => replay::run(args).await?,
        Cmd::Backtest(args) => backtest::run(args).await?,
        Cmd::Export(args) => export::run(args).await?,
        Cmd::Ohlcv(args) => ohlcv::run(args).await?,
        Cmd::IngestLatency(args) => ingest::latency(args).await?,
        Cmd::StreamLatency(args) => stream::latency(args).await?,
        Cmd::StreamFanout(args) => stream::fanout(args).await?,
        Cmd::BusThroughput(args) => bus::throughput(args).await?,
        Cmd::BusLatency(args) => bus::latency(args).await?,
        Cmd::VenueScale(args) => venue_scale::run(args).await?,
        Cmd::Webhooks(args) => webhooks::run(args).await?,
        Cmd::Whales(args) => whales::run(args).await?,
        Cmd::Dashboard(args) => dashboard::run(args).await?,
        Cmd::IdleSockets(args) => idle::run(args).await?,
        Cmd::Search {
            database_url,
            markets,
            requests,
            serve_after,
            search_cache_ms,
        } => {
            let store = crossbook_store::open(&database_url).await.context("open store")?;
            store.migrate().await?;
            let have = store
                .search_markets(&crossbook_store::MarketQuery {
                    q: None,
                    series_id: Some("KXBENCH".into()),
                    event_id: None,
                    exchange: None,
                    category: None,
                    status: Status::Active,
                    min_volume: None,
                    min_liquidity: None,
                    discovered_after: None,
                    settled_after: None,
                    settled_before: None,
                    sort: crossbook_store::MarketSort::Newest,
                    limit: 1,
                    offset: 0,
                })
                .await?;
            if have.is_empty() {
                seed(store.as_ref(), markets).await?;
            } else {
                eprintln!("database already seeded; reusing it");
            }
            store.close().await;

            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            let addr: SocketAddr = listener.local_addr()?;
            let mut cfg = Config::for_tests(&database_url);
            cfg.search_cache_ms = search_cache_ms;
            let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
            let server = tokio::spawn(crossbook_server::serve(cfg, listener, async {
                let _ = stop_rx.await;
            }));
            let client = reqwest::Client::new();
            let base = format!("http://{addr}");
            // Warm-up: page caches and prepared statements.
            for n in NEEDLES {
                client
                    .get(format!("{base}/v1/search/markets?q={n}"))
                    .send()
                    .await?
                    .error_for_status()?;
            }
            let mut lat = Vec::with_capacity(requests);
            for r in 0..requests {
                let n = NEEDLES[r % NEEDLES.len()];
                let t = Instant::now();
                let resp = client.get(format!("{base}/v1/search/markets?q={n}")).send().await?;
                anyhow::ensure!(resp.status().is_success(), "status {}", resp.status());
                let _ = resp.bytes().await?;
                lat.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            lat.sort_by(|a, b| a.total_cmp(b));
            println!(
                "search/markets over {markets} markets ({}, search_cache_ms={search_cache_ms}): n={} median={:.2} ms p90={:.2} ms p99={:.2} ms max={:.2} ms",
                database_url.split(':').next().unwrap_or("?"),
                lat.len(),
                percentile(&lat, 0.5),
                percentile(&lat, 0.9),
                percentile(&lat, 0.99),
                lat.last().copied().unwrap_or(0.0)
            );
            if serve_after {
                println!("serving on {base}; load it with e.g.:");
                println!("  wrk -t2 -c64 -d20s --latency -s crates/bench/wrk/search.lua {base}");
                println!("press Ctrl-C to stop");
                let _ = tokio::signal::ctrl_c().await;
            }
            let _ = stop_tx.send(());
            server.await??;
        }
    }
    Ok(())
}
