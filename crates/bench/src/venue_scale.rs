//! Whole-venue capture, end to end (`venue-scale`): a `crossbook serve` child process follows every market of
//! the full-scale simulated venues (about 25,000 books) for minutes, with the default change rates and their
//! bursts, and the bench reports:
//!
//! - book changes the simulator produced against level changes captured in the event log, book by book over
//!   one measured window (a book whose counts differ must hold a recorded gap in that window);
//! - captured events/s, sustained (the whole window) and in the busiest 10 s (a burst);
//! - the log's bytes over the window, extrapolated to a day;
//! - the server's CPU (user + system) and resident memory (steady: median of the samples; peak);
//! - the scanner's pass time at the full catalog (from `/metrics`);
//! - server receive → stream client delay (p99) of the book messages of a client following some books;
//! - catalog syncs seen per venue against `catalog_sync_seconds`.
//!
//! The simulator runs in this process on a manual clock that a thread moves with the wall clock, so that it
//! can be held still at both ends of the measured window: when the window opens and when it closes, the model
//! is paused until the server has written what it received, and the per-book counters are read then.
//!
//! ```text
//! cargo build --release -p crossbook -p crossbook-bench
//! target/release/crossbook-bench venue-scale --minutes 10
//! target/release/crossbook-bench venue-scale --minutes 10 --database-url postgres://postgres@127.0.0.1:5432/bench
//! ```

use std::{
    collections::{BTreeMap, BTreeSet},
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::Context;
use clap::Args;
use crossbook_core::{
    Amount, Exchange, Plan, Price, Timestamp,
    book::{BookChange, BookEvent, BookKey, BookState, Ladders},
};
use crossbook_sim::{Phase, SimClock, SimConfig, SimHandle, SimMarket, SimRates, SimScale, Simulator};
use futures_util::StreamExt;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

use crate::stream::{connect, create_key, percentiles, received_at_ms, rss_mib, subscribe};

#[derive(Args, Debug)]
pub struct VenueScaleArgs {
    /// Minutes of the measured window (fractions allowed, e.g. 2.5).
    #[arg(long, default_value_t = 10.0)]
    minutes: f64,
    /// Database of the server (sqlite://… or postgres://…); a fresh SQLite file by default. A PostgreSQL
    /// database should be empty: the comparison reads the whole log of each book.
    #[arg(long)]
    database_url: Option<String>,
    /// Markets whose books the stream client follows.
    #[arg(long, default_value_t = 100)]
    follow: usize,
    /// The server's `catalog_sync_seconds`.
    #[arg(long, default_value_t = 60)]
    catalog_sync_seconds: u64,
    /// The `crossbook` binary to run as the server.
    #[arg(long, default_value = "target/release/crossbook")]
    server_bin: String,
    /// Seed of the simulated venues.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

/// Moves the simulator's manual clock with the wall clock, in 100 ms steps, unless held.
struct Clock {
    hold: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Clock {
    fn start(sim: Arc<SimHandle>) -> Clock {
        let hold = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let (h, s) = (hold.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                if h.load(Ordering::Relaxed) {
                    continue;
                }
                let behind = Timestamp::now().millis() - sim.now().millis();
                if behind > 0 {
                    sim.advance(Duration::from_millis(behind as u64));
                }
            }
        });
        Clock {
            hold,
            stop,
            thread: Some(thread),
        }
    }

    /// Holds the model still; model time jumps to the wall clock when released (the simulator limits the
    /// changes one jump makes to 5 s worth, so hold briefly).
    fn hold(&self, on: bool) {
        self.hold.store(on, Ordering::Relaxed);
    }
}

impl Drop for Clock {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One value of a Prometheus text exposition: the line starting with `name` (labels included).
fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|v| v.parse().ok())
}

/// The sum of every series of `name` (all label sets).
fn sum_of(text: &str, name: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(name) && matches!(l.as_bytes().get(name.len()), Some(b' ' | b'{')))
        .filter_map(|l| l.split_whitespace().last()?.parse::<f64>().ok())
        .sum()
}

fn written(text: &str) -> [f64; 2] {
    [Exchange::VenueA, Exchange::VenueB]
        .map(|ex| metric(text, &format!("crossbook_book_events_written_total{{venue=\"{ex}\"}}")).unwrap_or(0.0))
}

/// CPU seconds (user + system) a process has used.
fn cpu_secs(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    // USER_HZ is 100 on Linux.
    Some(ticks / 100.0)
}

/// The books the comparison covers: bulk markets (the change generator's) open for the whole window.
fn window_markets(sim: &SimHandle, until: Timestamp) -> Vec<SimMarket> {
    Exchange::ALL
        .into_iter()
        .flat_map(|ex| sim.markets(ex))
        .filter(|m| m.is_bulk() && m.phase == Phase::Open && m.close_time.millis() > until.millis())
        .filter(|m| m.exchange == Exchange::VenueA || m.tokens.is_some())
        .collect()
}

fn book_keys(m: &SimMarket) -> Vec<BookKey> {
    match &m.tokens {
        Some(tokens) => tokens
            .iter()
            .map(|t| BookKey {
                exchange: m.exchange,
                market_id: m.market_id.clone(),
                asset_id: Some(t.clone()),
            })
            .collect(),
        None => vec![BookKey {
            exchange: m.exchange,
            market_id: m.market_id.clone(),
            asset_id: None,
        }],
    }
}

/// Waits, the model being held, until the simulator has written every change to the sockets and then the
/// server's written-events counters stop moving: what the model produced is in the log. A server that
/// falls behind holds a backlog in the sockets; its counters may stand still for seconds while one slow log
/// write runs, so they alone do not say it caught up. Returns how long it took.
async fn settle(http: &reqwest::Client, addr: SocketAddr, sim: &SimHandle) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let deadline = started + Duration::from_secs(600);
    let mut last = [f64::NAN; 2];
    let mut still = 0;
    while still < 4 {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the server's log writes did not settle within 600 s"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
        let Ok(text) = get_text(http, &format!("http://{addr}/metrics")).await else {
            still = 0;
            continue;
        };
        let now = written(&text);
        still = if now == last && sim.idle() { still + 1 } else { 0 };
        last = now;
    }
    Ok(started.elapsed())
}

async fn get_text(http: &reqwest::Client, url: &str) -> reqwest::Result<String> {
    http.get(url).send().await?.text().await
}

/// [`get_text`], tried up to five times: a server at full load may drop a request.
async fn get_text_retry(http: &reqwest::Client, url: &str) -> anyhow::Result<String> {
    let mut last = String::new();
    for _ in 0..5 {
        match get_text(http, url).await {
            Ok(t) => return Ok(t),
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    anyhow::bail!("GET {url}: {last}")
}

/// Bytes of the log's chunks whose events all fall in `[from, to]`.
async fn window_bytes(url: &str, from: i64, to: i64) -> anyhow::Result<i64> {
    use sqlx::Connection as _;
    if url.starts_with("sqlite:") {
        let mut c = sqlx::sqlite::SqliteConnection::connect(url).await?;
        let n: i64 = sqlx::query_scalar(
            "SELECT COALESCE(SUM(length(data)), 0) FROM book_chunks WHERE first_ts >= ? AND last_ts <= ?",
        )
        .bind(from)
        .bind(to)
        .fetch_one(&mut c)
        .await?;
        c.close().await?;
        Ok(n)
    } else {
        let mut c = sqlx::postgres::PgConnection::connect(url).await?;
        let n: i64 = sqlx::query_scalar(
            "SELECT COALESCE(SUM(octet_length(data)), 0)::int8 FROM book_chunks WHERE first_ts >= $1 AND last_ts <= $2",
        )
        .bind(from)
        .bind(to)
        .fetch_one(&mut c)
        .await?;
        c.close().await?;
        Ok(n)
    }
}

/// Level changes of one book in its log over `[from, to]` (receive times; events at the bounds belong to
/// the window): `(in deltas, in keyframes, gap events)`. The writer writes a keyframe (the whole book) in place
/// of a delta when one is due, so a keyframe counts the levels it changed against the book before it, rebuilt
/// from the keyframe the read starts at; a keyframe after a gap has no book before it and counts nothing.
fn logged_changes(events: &[BookEvent], from: Timestamp, to: Timestamp) -> (u64, u64, u64) {
    let (mut deltas, mut keyframes, mut gaps) = (0, 0, 0);
    let mut state = BookState::default();
    for e in events {
        let before = state.ladders().cloned();
        let _ = state.apply(&e.change);
        if e.received_at < from || e.received_at > to {
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

/// Levels (side, price) whose size differs between two books.
fn levels_differing(a: &Ladders, b: &Ladders) -> u64 {
    let levels = |l: &Ladders| -> BTreeMap<(u8, Price), Amount> {
        [(0, &l.bids), (1, &l.asks), (2, &l.no_bids)]
            .into_iter()
            .flat_map(|(side, ladder)| ladder.iter().map(move |lv| ((side, lv.price), lv.size)))
            .collect()
    };
    let (a, b) = (levels(a), levels(b));
    let keys: BTreeSet<&(u8, Price)> = a.keys().chain(b.keys()).collect();
    keys.into_iter().filter(|k| a.get(*k) != b.get(*k)).count() as u64
}

#[derive(Default, Debug)]
struct Tally {
    books: u64,
    produced: u64,
    captured: u64,
    /// Books whose counts differ and that hold a recorded gap in the window (their loss is on record).
    gapped_books: u64,
    gapped_missing: u64,
    /// Books whose counts differ with no gap recorded: unrecorded losses (or extra events).
    unexplained_books: u64,
    unexplained_missing: i64,
    gap_events: u64,
    examples: Vec<String>,
}

pub async fn run(args: VenueScaleArgs) -> anyhow::Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    anyhow::ensure!(args.minutes > 0.0, "--minutes must be positive");
    let rates = SimRates::default();
    let sim = Arc::new(
        Simulator::start(SimConfig {
            scale: SimScale::Full,
            rates,
            ..SimConfig::new(
                args.seed,
                SimClock::Manual {
                    start: Timestamp::now(),
                },
            )
        })
        .await?,
    );
    let clock = Clock::start(sim.clone());
    let (url, sqlite_path) = match &args.database_url {
        Some(u) => (u.clone(), None),
        None => {
            let (u, p) = crate::temp_sqlite("venue-scale");
            (u, Some(p))
        }
    };
    let key = create_key(&url, Plan::Trader).await?;
    let addr = crate::free_addr()?;
    // The server's warnings go to a file (a whole venue's trade polls make long lines); its path is printed.
    let log_path = std::env::temp_dir().join(format!("crossbook-bench-venue-scale-{}.log", std::process::id()));
    let started = Instant::now();
    let (mut child, config_path) = crate::spawn_server(
        &args.server_bin,
        "venue-scale",
        &format!(
            "{}database_url = \"{url}\"\nlisten = \"{addr}\"\nlog = \"warn\"\nrate_limit_trader = 0\n\
             stream_connections_trader = 0\ncatalog_sync_seconds = {}\n",
            sim.urls().config_toml(),
            args.catalog_sync_seconds
        ),
        std::fs::File::create(&log_path)?.into(),
    )?;
    let pid = child.id().context("server pid")?;
    let http = reqwest::Client::new();

    // Every open bulk market's books live: the server's book counts reach what the simulator lists.
    let expect = |ex: Exchange| -> u64 {
        sim.markets(ex)
            .iter()
            .filter(|m| m.phase == Phase::Open)
            .map(|m| m.tokens.as_ref().map_or(1, |_| 2))
            .sum()
    };
    let mut readyz = Value::Null;
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        if let Ok(r) = http.get(format!("http://{addr}/readyz")).send().await
            && let Ok(v) = r.json::<Value>().await
        {
            readyz = v;
            let books = |ex: &str| readyz["venues"][ex]["books"].as_u64().unwrap_or(0);
            // Within 1 %: windows open and close while the server subscribes.
            if books("venue_a") * 100 >= expect(Exchange::VenueA) * 99
                && books("venue_b") * 100 >= expect(Exchange::VenueB) * 99
            {
                break;
            }
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(300),
            "the server did not follow the whole catalog within 300 s: {}",
            readyz["venues"]
        );
    }
    let warm_up = started.elapsed();
    let connections = |v: &Value, ex: &str| v["venues"][ex]["connections"]["total"].as_u64().unwrap_or(0);
    println!(
        "venue-scale: server following {} venue_a and {} venue_b books over {} + {} connections after {:.0} s",
        readyz["venues"]["venue_a"]["books"],
        readyz["venues"]["venue_b"]["books"],
        connections(&readyz, "venue_a"),
        connections(&readyz, "venue_b"),
        warm_up.as_secs_f64()
    );

    // The stream client follows some bulk books of both venues.
    let follow: Vec<String> = {
        let now = sim.now();
        let mut a: Vec<String> = Vec::new();
        let mut b: Vec<String> = Vec::new();
        for m in window_markets(&sim, Timestamp::from_millis(now.millis() + 3_600_000)) {
            match m.exchange {
                Exchange::VenueA => a.push(m.market_id),
                Exchange::VenueB => b.push(m.market_id),
            }
        }
        let half = args.follow / 2;
        a.into_iter()
            .take(half)
            .chain(b.into_iter().take(args.follow - half))
            .collect()
    };
    let measuring = Arc::new(AtomicBool::new(false));
    let delays: Arc<Mutex<Vec<f64>>> = Arc::default();
    let stop = tokio_util::sync::CancellationToken::new();
    // The client reads on a thread of its own, with its own runtime: on the bench's runtime it would wait
    // behind the simulator's tasks, and their delay would be counted as the server's.
    let client = {
        let (measuring, delays, stop, key, follow) = (
            measuring.clone(),
            delays.clone(),
            stop.clone(),
            key.clone(),
            follow.clone(),
        );
        let (subscribed_tx, subscribed_rx) = tokio::sync::oneshot::channel::<anyhow::Result<()>>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            rt.block_on(async move {
                let mut ws = match connect(addr, &key).await {
                    Ok(ws) => ws,
                    Err(e) => {
                        let _ = subscribed_tx.send(Err(e));
                        return Ok(());
                    }
                };
                let _ = subscribed_tx.send(subscribe(&mut ws, "book", &follow).await);
                loop {
                    tokio::select! {
                        () = stop.cancelled() => break,
                        m = ws.next() => match m {
                            Some(Ok(Message::Text(t))) => {
                                let now = Timestamp::now().millis();
                                if measuring.load(Ordering::Relaxed)
                                    && t.as_str().contains("\"channel\":\"book\"")
                                    && t.as_str().contains("\"type\":\"change\"")
                                    && let Some(at) = received_at_ms(t.as_str())
                                {
                                    delays.lock().unwrap().push((now - at) as f64);
                                }
                            }
                            Some(Ok(_)) => {}
                            _ => break,
                        }
                    }
                }
                anyhow::Ok(())
            })
        });
        subscribed_rx.await.context("the stream client's thread ended")??;
        thread
    };

    // Opening the window: the model held, the server's writes settled, the counters read.
    let secs = (args.minutes * 60.0).round() as u64;
    let end_by = Timestamp::from_millis(Timestamp::now().millis() + (secs as i64 + 30) * 1000);
    clock.hold(true);
    settle(&http, addr, &sim).await?;
    let t0 = Timestamp::now();
    let markets = window_markets(&sim, end_by);
    let produced0: Vec<u64> = sim.with_model(|m| {
        markets
            .iter()
            .map(|x| m.generated_changes_of(x.exchange, &x.market_id))
            .collect()
    });
    let generated0 = sim.with_model(|m| Exchange::ALL.map(|ex| m.generated_changes(ex)));
    let cpu0 = cpu_secs(pid).unwrap_or(0.0);
    let metrics0 = get_text_retry(&http, &format!("http://{addr}/metrics")).await?;
    let written0 = written(&metrics0);
    clock.hold(false);
    measuring.store(true, Ordering::Relaxed);

    // The window: one sample a second.
    let mut per_sec: Vec<f64> = Vec::new();
    let mut rss: Vec<f64> = Vec::new();
    let mut last_written = written0;
    let mut syncs: [BTreeSet<String>; 2] = [BTreeSet::new(), BTreeSet::new()];
    let started_window = Instant::now();
    let mut next = started_window;
    while started_window.elapsed() < Duration::from_secs(secs) {
        next += Duration::from_secs(1);
        tokio::time::sleep_until(next.into()).await;
        let Ok(text) = get_text(&http, &format!("http://{addr}/metrics")).await else {
            anyhow::ensure!(child.try_wait()?.is_none(), "the server exited");
            continue;
        };
        let w = written(&text);
        per_sec.push(w[0] - last_written[0] + w[1] - last_written[1]);
        last_written = w;
        rss.push(rss_mib(pid).unwrap_or(0.0));
        if let Ok(r) = http.get(format!("http://{addr}/readyz")).send().await
            && let Ok(v) = r.json::<Value>().await
        {
            for (i, ex) in ["venue_a", "venue_b"].into_iter().enumerate() {
                if let Some(at) = v["venues"][ex]["last_catalog_sync_at"].as_str() {
                    syncs[i].insert(at.to_string());
                }
            }
            readyz = v;
        }
    }

    // Closing the window.
    measuring.store(false, Ordering::Relaxed);
    clock.hold(true);
    let caught_up = settle(&http, addr, &sim).await?;
    let t1 = Timestamp::now();
    let produced1: Vec<u64> = sim.with_model(|m| {
        markets
            .iter()
            .map(|x| m.generated_changes_of(x.exchange, &x.market_id))
            .collect()
    });
    let generated1 = sim.with_model(|m| Exchange::ALL.map(|ex| m.generated_changes(ex)));
    let cpu1 = cpu_secs(pid).unwrap_or(0.0);
    let metrics1 = get_text_retry(&http, &format!("http://{addr}/metrics")).await?;
    let written1 = written(&metrics1);
    stop.cancel();
    let _ = tokio::task::spawn_blocking(move || client.join()).await;
    let elapsed = (t1.millis() - t0.millis()) as f64 / 1e3;
    println!(
        "  the server caught up {:.1} s after the model was held at the window's end",
        caught_up.as_secs_f64()
    );
    let _ = child.kill().await;
    drop(clock);

    // Book by book: produced in the window against level changes captured in the log.
    let store = crossbook_store::open(&url).await?;
    let mut tally = [Tally::default(), Tally::default()];
    for (m, (p0, p1)) in markets.iter().zip(produced0.iter().zip(&produced1)) {
        let produced = p1 - p0;
        let t = &mut tally[if m.exchange == Exchange::VenueA { 0 } else { 1 }];
        for book in book_keys(m) {
            let read = store.log_events(&book, t0, t1).await?;
            let (captured, keyframed, gaps) = logged_changes(&read.events, t0, t1);
            let captured = captured + keyframed;
            t.books += 1;
            t.produced += produced;
            t.captured += captured;
            t.gap_events += gaps;
            if captured != produced {
                if gaps > 0 {
                    t.gapped_books += 1;
                    t.gapped_missing += produced.saturating_sub(captured);
                } else {
                    t.unexplained_books += 1;
                    t.unexplained_missing += produced as i64 - captured as i64;
                    if t.examples.len() < 5 {
                        t.examples
                            .push(format!("{book:?}: produced {produced}, captured {captured}"));
                    }
                }
            }
        }
    }
    store.close().await;
    let bytes = window_bytes(&url, t0.millis(), t1.millis()).await?;

    // Figures.
    let total_written = written1[0] - written0[0] + written1[1] - written0[1];
    let burst = per_sec
        .windows(10)
        .map(|w| w.iter().sum::<f64>() / 10.0)
        .fold(0.0, f64::max);
    let mut rss_sorted = rss.clone();
    rss_sorted.sort_by(f64::total_cmp);
    let steady = rss_sorted.get(rss_sorted.len() / 2).copied().unwrap_or(0.0);
    let peak = rss_sorted.last().copied().unwrap_or(0.0);
    let cpu = cpu1 - cpu0;
    println!(
        "  window: {elapsed:.0} s on {}; simulator rates venue_a {}/s, venue_b {}/s, bursts {} s at {}x every {} s",
        if url.starts_with("sqlite:") {
            "SQLite"
        } else {
            "PostgreSQL"
        },
        rates.venue_a_per_sec,
        rates.venue_b_per_sec,
        rates.burst_secs,
        rates.burst_multiple,
        rates.burst_every_secs
    );
    for (ex, (t, i)) in Exchange::ALL.into_iter().zip(tally.iter().zip(0..)) {
        println!(
            "  {ex}: {} books compared; changes produced {} (generator total {}), level changes captured {}; \
             {} books differ with a recorded gap ({} changes short), {} differ with none ({} changes short); {} gap events",
            t.books,
            t.produced,
            generated1[i] - generated0[i],
            t.captured,
            t.gapped_books,
            t.gapped_missing,
            t.unexplained_books,
            t.unexplained_missing,
            t.gap_events
        );
        for e in &t.examples {
            println!("    unexplained: {e}");
        }
    }
    println!(
        "  log events written: {:.0} in all, {:.0}/s sustained, {:.0}/s in the busiest 10 s",
        total_written,
        total_written / elapsed,
        burst
    );
    println!(
        "  log bytes: {:.1} MiB in the window, {:.1} GiB per day extrapolated ({:.1} bytes per event)",
        bytes as f64 / 1048576.0,
        bytes as f64 / elapsed * 86_400.0 / 1073741824.0,
        bytes as f64 / total_written.max(1.0)
    );
    println!(
        "  server CPU: {:.1} s user+system over {elapsed:.0} s = {:.0} % of one core ({:.1} core-hours per day); \
         RSS steady {steady:.0} MiB, peak {peak:.0} MiB",
        cpu,
        cpu / elapsed * 100.0,
        cpu / elapsed * 24.0
    );
    let scan: Vec<String> = metrics1
        .lines()
        .filter(|l| l.starts_with("crossbook_arbitrage_scan_seconds"))
        .map(str::to_string)
        .collect();
    println!("  scanner pass (crossbook_arbitrage_scan_seconds): {}", scan.join("; "));
    println!(
        "  {}",
        percentiles(
            &format!("server receive -> stream client ({} books followed)", follow.len()),
            std::mem::take(&mut *delays.lock().unwrap())
        )
    );
    for (i, ex) in ["venue_a", "venue_b"].into_iter().enumerate() {
        println!(
            "  {ex}: {} catalog syncs seen in {elapsed:.0} s (catalog_sync_seconds = {}: at most {} expected); \
             connections {}, reconnects {}",
            syncs[i].len(),
            args.catalog_sync_seconds,
            (elapsed / args.catalog_sync_seconds as f64).ceil() as u64 + 1,
            connections(&readyz, ex),
            readyz["venues"][ex]["connections"]["reconnects"]
        );
    }
    // Where the server counts what it could not log: each should be 0 over the window, or show with gaps.
    let lossy = [
        "crossbook_book_events_dropped_total",
        "crossbook_venue_bad_deltas_total",
        "crossbook_venue_malformed_total",
        "crossbook_venue_seq_gaps_total",
        "crossbook_capture_gaps_total",
        "crossbook_venue_reconnects_total",
    ];
    let counted: Vec<String> = lossy
        .iter()
        .map(|name| format!("{name} +{:.0}", sum_of(&metrics1, name) - sum_of(&metrics0, name)))
        .collect();
    println!("  server loss counters over the window: {}", counted.join(", "));
    println!("  server log: {}", log_path.display());
    if let Some(p) = sqlite_path {
        crate::remove_sqlite(&p);
    }
    let _ = std::fs::remove_file(&config_path);
    match Arc::try_unwrap(sim) {
        Ok(sim) => sim.shutdown().await,
        Err(_) => anyhow::bail!("the simulator is still shared"),
    }
    Ok(())
}
