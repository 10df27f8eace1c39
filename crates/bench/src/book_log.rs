//! Book-log figures: book events per second through the real book writer (the task ingestion
//! runs, fed through its channel), the cost of compaction, and bytes per event at rest after compaction
//! (table and indexes, measured by the database).
//!
//! The load: `--books` books, each starting with a `--levels`-level keyframe, then deltas of 1–3 levels near
//! the top of the book, round-robin over the books; receive times advance so that each book changes 150
//! times a second. A generator thread builds every update (the venue connectors' part: the change and the
//! book it leaves) and sends it into the writer's channel; the figure is the time until the writer has
//! stored everything and returned.
//!
//! ```text
//! cargo run --release -p crossbook-bench -- log-write --database-url sqlite:///tmp/cb-log.db
//! cargo run --release -p crossbook-bench -- log-write --database-url postgres://postgres@127.0.0.1:5432/cb_bench
//! ```

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicI64, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::Context as _;
use clap::Args;
use crossbook_core::{
    Amount, BookSnapshot, Exchange, Market, Plan, Price, Timestamp,
    book::{KeyframePolicy, Level, LevelChange, Side},
};
use crossbook_server::config::Config;
use crossbook_venues::{
    BookUpdate,
    ingest::{
        book_writer::{BookInput, book_writer},
        compaction::compactor_with_clock,
    },
};
use rand::{Rng, SeedableRng, rngs::StdRng};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[derive(Args, Debug)]
pub struct LogWriteArgs {
    /// Database (sqlite://… is recreated; on postgres://… the log tables are emptied first).
    #[arg(long, default_value = "sqlite:///tmp/crossbook-bench-log.db")]
    database_url: String,
    /// Distinct books.
    #[arg(long, default_value_t = 2_000)]
    books: usize,
    /// Events per book (the first a keyframe).
    #[arg(long, default_value_t = 500)]
    events: usize,
    /// Levels per side of the keyframes.
    #[arg(long, default_value_t = 10)]
    levels: usize,
    /// Run the service's compaction worker beside the writer, as `serve` does, its clock following the
    /// generated receive times (the sustained figure: the log's indexes stay the size they have in service).
    #[arg(long)]
    live_compaction: bool,
}

/// One generated book: its ladders, kept up to date as deltas are made.
pub(crate) struct GenBook {
    pub(crate) key: String,
    bids: Vec<Level>,
    asks: Vec<Level>,
}

impl GenBook {
    pub(crate) fn new(rng: &mut StdRng, i: usize, levels: usize) -> Self {
        let mid: i64 = rng.random_range(20..80);
        let size = |rng: &mut StdRng| Amount::from_units(rng.random_range(1..500));
        GenBook {
            key: format!("KXBENCH-{i:05}"),
            bids: (0..levels as i64)
                .map(|l| Level {
                    price: Price::from_cents(mid - 1 - l),
                    size: size(rng),
                })
                .collect(),
            asks: (0..levels as i64)
                .map(|l| Level {
                    price: Price::from_cents(mid + 1 + l),
                    size: size(rng),
                })
                .collect(),
        }
    }

    pub(crate) fn snapshot(&self, ts: Timestamp) -> BookSnapshot {
        BookSnapshot {
            exchange: Exchange::VenueA,
            market_id: self.key.clone(),
            asset_id: None,
            timestamp: ts,
            bids: self.bids.clone(),
            asks: Vec::new(),
            no_bids: self.asks.clone(),
        }
    }

    /// 1–3 size changes among the top three levels of either side (a resting order added or taken).
    pub(crate) fn delta(&mut self, rng: &mut StdRng) -> Vec<LevelChange> {
        (0..rng.random_range(1..=3))
            .map(|_| {
                let (side, ladder) = if rng.random_bool(0.5) {
                    (Side::Bid, &mut self.bids)
                } else {
                    (Side::NoBid, &mut self.asks)
                };
                let top = 3.min(ladder.len());
                let l = &mut ladder[rng.random_range(0..top)];
                l.size = Amount::from_units(rng.random_range(1..500));
                LevelChange {
                    side,
                    price: l.price,
                    size: l.size,
                }
            })
            .collect()
    }
}

/// Builds every update in order, into `tx` (or drops them, to time the generator alone).
/// `now` follows the receive time of the round being generated.
fn generate(args: &LogWriteArgs, t0: i64, tx: Option<mpsc::Sender<BookInput>>, now: &AtomicI64) {
    let mut rng = StdRng::seed_from_u64(11);
    let mut books: Vec<GenBook> = (0..args.books)
        .map(|i| GenBook::new(&mut rng, i, args.levels))
        .collect();
    for round in 0..args.events {
        // 150 changes a second per book: round r at t0 + r × 6.67 ms.
        let ts = Timestamp::from_millis(t0 + round as i64 * 20 / 3);
        now.store(ts.millis(), Ordering::Relaxed);
        for b in &mut books {
            let update = if round == 0 {
                BookUpdate::snapshot(b.snapshot(ts), Some(1), None)
            } else {
                let changes = b.delta(&mut rng);
                BookUpdate::delta(b.snapshot(ts), changes, Some(round as i64 + 1), None)
            };
            let input = BookInput::Update {
                update,
                received_at: ts,
                seq: round as u64 + 1,
                restart_gap: None,
            };
            if let Some(tx) = &tx {
                if tx.blocking_send(input).is_err() {
                    return;
                }
            } else {
                std::hint::black_box(input);
            }
        }
    }
}

/// Bytes the database holds after a checkpoint (SQLite, after `VACUUM` so free pages of merged chunks do not
/// count) or the book log's tables with their indexes (PostgreSQL, after `VACUUM FULL` for the same reason).
/// The second figure is PostgreSQL's before `VACUUM FULL`: with the dead space the merged chunks left, which
/// later inserts reuse.
async fn log_bytes(url: &str) -> anyhow::Result<(i64, Option<i64>)> {
    use sqlx::Connection as _;
    if url.starts_with("sqlite:") {
        let mut c = sqlx::sqlite::SqliteConnection::connect(url).await?;
        // The writer still samples the snapshot table; only the log is measured.
        sqlx::query("DELETE FROM book_snapshots").execute(&mut c).await?;
        sqlx::query("VACUUM").execute(&mut c).await?;
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut c).await?;
        let pages: i64 = sqlx::query_scalar("PRAGMA page_count").fetch_one(&mut c).await?;
        let size: i64 = sqlx::query_scalar("PRAGMA page_size").fetch_one(&mut c).await?;
        c.close().await?;
        Ok((pages * size, None))
    } else {
        const SIZE: &str = "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::int8 FROM pg_class c \
             WHERE c.relkind IN ('r', 'p') AND (c.relname IN ('book_chunks', 'log_books') OR c.oid IN \
             (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'book_chunks'::regclass))";
        let mut c = sqlx::postgres::PgConnection::connect(url).await?;
        sqlx::query("VACUUM ANALYZE book_chunks, log_books")
            .execute(&mut c)
            .await?;
        let with_dead: i64 = sqlx::query_scalar(SIZE).fetch_one(&mut c).await?;
        sqlx::query("VACUUM FULL book_chunks, log_books")
            .execute(&mut c)
            .await?;
        let b: i64 = sqlx::query_scalar(SIZE).fetch_one(&mut c).await?;
        c.close().await?;
        Ok((b, Some(with_dead)))
    }
}

/// Peak resident memory of this process (Linux), in MiB.
pub(crate) fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

pub async fn write(args: LogWriteArgs) -> anyhow::Result<()> {
    let url = args.database_url.clone();
    let sqlite = url.starts_with("sqlite:");
    let store = crate::fresh_store(&url, "book_chunks, log_books, book_snapshots").await?;
    let args = Arc::new(args);
    let total = args.books * args.events;
    let deltas = total - args.books;
    // Receive times in the past, so that compaction's cutoff (now) covers every chunk.
    let t0 = Timestamp::now().millis() - (args.events as i64 * 20 / 3) - 600_000;

    // The generator alone, for reference: what the connectors' side costs in this process.
    let g = Instant::now();
    let a = args.clone();
    tokio::task::spawn_blocking(move || generate(&a, t0, None, &AtomicI64::new(0))).await?;
    let gen_only = g.elapsed();

    let (tx, rx) = mpsc::channel(16_384);
    let started = Instant::now();
    let writer = tokio::spawn(book_writer(
        store.clone(),
        rx,
        KeyframePolicy::DEFAULT,
        crossbook_venues::VenueHealth::new(&crossbook_live::LiveBooks::new()),
        crossbook_live::LiveBooks::new(),
        crossbook_live::Bus::default(),
        crossbook_venues::ingest::book_writer::MAX_UNWRITTEN_EVENTS,
    ));
    let a = args.clone();
    let now = Arc::new(AtomicI64::new(t0));
    let clock = now.clone();
    let generator = tokio::task::spawn_blocking(move || generate(&a, t0, Some(tx), &clock));
    let stop_compaction = CancellationToken::new();
    let compactor = args.live_compaction.then(|| {
        let now = now.clone();
        tokio::spawn(compactor_with_clock(
            store.clone(),
            move || Timestamp::from_millis(now.load(Ordering::Relaxed)),
            stop_compaction.clone(),
        ))
    });
    generator.await?;
    writer.await?;
    let write = started.elapsed();
    stop_compaction.cancel();
    if let Some(c) = compactor {
        c.await?;
    }
    println!(
        "log-write backend={} books={} events/book={} levels={}x2 events={total} (deltas {deltas}, 1–3 levels each)",
        if sqlite { "sqlite" } else { "postgres" },
        args.books,
        args.events,
        args.levels
    );
    println!(
        "  write: {:.0} events/s through the book writer{} ({:.2} s; the generator alone takes {:.2} s)",
        total as f64 / write.as_secs_f64(),
        if args.live_compaction {
            ", compaction running beside it"
        } else {
            ""
        },
        write.as_secs_f64(),
        gen_only.as_secs_f64()
    );
    if let Some(rss) = peak_rss_mib() {
        println!("  peak RSS while writing: {rss:.0} MiB");
    }
    let hot = log_chunks(&url).await?;

    let c = Instant::now();
    let (mut merged, mut steps, mut after) = (0u64, 0u32, 0i64);
    loop {
        let step = store.compact_log(Timestamp::now(), after, 5_000).await?;
        merged += step.chunks_in;
        steps += 1;
        match step.next {
            Some(next) => after = next,
            None => break,
        }
    }
    let compact = c.elapsed();
    let cold = log_chunks(&url).await?;
    store.close().await;
    let (bytes, with_dead) = log_bytes(&url).await?;

    println!(
        "  compaction: {hot} chunks → {cold} in {:.2} s ({steps} steps, {merged} chunks merged, {:.0} events/s)",
        compact.as_secs_f64(),
        total as f64 / compact.as_secs_f64()
    );
    println!(
        "  storage after compaction: {:.2} bytes per delta, keyframes included ({bytes} bytes: tables + indexes)",
        bytes as f64 / deltas as f64
    );
    if let Some(d) = with_dead {
        println!(
            "  (before VACUUM FULL: {:.2} bytes per delta, counting the dead space merged chunks left)",
            d as f64 / deltas as f64
        );
    }
    if let Some(rss) = peak_rss_mib() {
        println!("  peak RSS of the process (compaction included): {rss:.0} MiB");
    }
    Ok(())
}

async fn log_chunks(url: &str) -> anyhow::Result<i64> {
    use sqlx::Connection as _;
    const SQL: &str = "SELECT CAST(count(*) AS BIGINT) FROM book_chunks";
    Ok(if url.starts_with("sqlite:") {
        let mut c = sqlx::sqlite::SqliteConnection::connect(url).await?;
        sqlx::query_scalar(SQL).fetch_one(&mut c).await?
    } else {
        let mut c = sqlx::postgres::PgConnection::connect(url).await?;
        sqlx::query_scalar(SQL).fetch_one(&mut c).await?
    })
}

/// The book `read` writes and reads back.
const MARKET: &str = "KXBENCH-00000";

/// Options of `log-read`: a day of one book in the log, read at the store and over HTTP.
#[derive(Args, Debug)]
pub struct LogReadArgs {
    /// Database (sqlite://… is recreated; on postgres://… the log tables are emptied first).
    #[arg(long, default_value = "sqlite:///tmp/crossbook-bench-log-read.db")]
    database_url: String,
    /// Changes per second of the book over the day.
    #[arg(long, default_value_t = 10)]
    rate: u32,
    /// Times each read is repeated (the median is reported).
    #[arg(long, default_value_t = 20)]
    repeat: usize,
}

/// A day of one book at `--rate` changes a second, through the writer's numbering and keyframes, stored and
/// compacted; then the historical reads from the log, at the store (`log_history`) and over HTTP (the real
/// server on a loopback listener, a free key, `/v1/historical/venue_a/orderbook`): the latest 100 rows, and
/// the whole day at 1m walked in pages of 200; and the execution price of 100 contracts at instants of the day.
/// Seeds the UTC day from `start` of `books` venue_a books (`KXBENCH-00000`, …) at `rate` changes a second
/// each, through the ingest writer (its numbering and keyframes), then compacts it; returns the books' tickers.
/// The books change a millisecond apart, so readers of several interleave them.
/// The ingest writer over `store` with the default keyframes and bounds, as a bench seeds through it: its
/// input, and its task (which ends once the input is dropped and everything is written).
pub(crate) fn spawn_writer(
    store: &Arc<dyn crossbook_store::Store>,
) -> (mpsc::Sender<BookInput>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = mpsc::channel(16_384);
    let writer = tokio::spawn(book_writer(
        store.clone(),
        rx,
        KeyframePolicy::DEFAULT,
        crossbook_venues::VenueHealth::new(&crossbook_live::LiveBooks::new()),
        crossbook_live::LiveBooks::new(),
        crossbook_live::Bus::default(),
        crossbook_venues::ingest::book_writer::MAX_UNWRITTEN_EVENTS,
    ));
    (tx, writer)
}

pub(crate) async fn seed_day(
    store: &Arc<dyn crossbook_store::Store>,
    books: usize,
    rate: u32,
    start: i64,
) -> anyhow::Result<Vec<String>> {
    let per_book = (i64::from(rate) * crossbook_core::time::DAY_MS / 1000) as usize;
    let step = 1000 / i64::from(rate.max(1));
    let (tx, writer) = spawn_writer(store);
    let keys = tokio::task::spawn_blocking(move || {
        let mut rng = StdRng::seed_from_u64(5);
        let mut gen_books: Vec<GenBook> = (0..books).map(|i| GenBook::new(&mut rng, i, 10)).collect();
        let keys: Vec<String> = gen_books.iter().map(|b| b.key.clone()).collect();
        for i in 0..per_book {
            for (j, b) in gen_books.iter_mut().enumerate() {
                let ts = Timestamp::from_millis(start + i as i64 * step + j as i64 % step.max(1));
                let update = if i == 0 {
                    BookUpdate::snapshot(b.snapshot(ts), None, None)
                } else {
                    let changes = b.delta(&mut rng);
                    BookUpdate::delta(b.snapshot(ts), changes, None, None)
                };
                if tx
                    .blocking_send(BookInput::Update {
                        update,
                        received_at: ts,
                        seq: i as u64 + 1,
                        restart_gap: None,
                    })
                    .is_err()
                {
                    return keys;
                }
            }
        }
        keys
    })
    .await?;
    writer.await?;
    let mut after = 0;
    while let Some(n) = store.compact_log(Timestamp::now(), after, 5_000).await?.next {
        after = n;
    }
    Ok(keys)
}

pub async fn read(args: LogReadArgs) -> anyhow::Result<()> {
    use crossbook_core::book::BookKey;
    use crossbook_store::{HistoryWindow, books::history::log_history};

    let url = args.database_url.clone();
    let store = crate::fresh_store(&url, "book_chunks, log_books").await?;
    // Yesterday, UTC, so the day is whole and older than the compaction cutoff.
    let day = crossbook_core::time::DAY_MS;
    let start = (Timestamp::now().millis() / day - 1) * day;
    let events = (args.rate as i64 * day / 1000) as usize;
    seed_day(&store, 1, args.rate, start).await?;
    let key = BookKey::venue_a(MARKET);
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let mut latest = Vec::new();
    for _ in 0..args.repeat {
        let t = Instant::now();
        let page = log_history(store.as_ref(), &key, HistoryWindow::Latest { before: None }, 100).await?;
        latest.push(t.elapsed());
        anyhow::ensure!(page.rows.len() == 100, "latest: {} rows", page.rows.len());
    }
    let mut walks = Vec::new();
    for _ in 0..args.repeat.min(5) {
        let t = Instant::now();
        let (mut rows, mut cursor) = (0, None);
        loop {
            let window = HistoryWindow::Range {
                start: Timestamp::from_millis(start),
                end: Timestamp::from_millis(start + day - 1),
                bucket_ms: 60_000,
                after: cursor,
            };
            let page = log_history(store.as_ref(), &key, window, 200).await?;
            let Some(last) = page.rows.last() else { break };
            cursor = Some(last.at);
            rows += page.rows.len();
        }
        walks.push(t.elapsed());
        anyhow::ensure!(rows == 1_440, "day at 1m: {rows} rows");
    }

    // The execution price of 100 YES contracts at instants spread over the day: the book as it stood (the
    // log's keyframe at or before the instant and the changes after it), then the walk of its asks.
    let instants: Vec<i64> = {
        let mut rng = StdRng::seed_from_u64(9);
        (0..args.repeat).map(|_| start + rng.random_range(0..day)).collect()
    };
    let size = Amount::from_units(100);
    let mut executions = Vec::new();
    for &t in &instants {
        let began = Instant::now();
        let book = crossbook_store::books::history::books_as_of(store.as_ref(), &key, &[Timestamp::from_millis(t)])
            .await?
            .pop()
            .flatten()
            .context("a book at every instant of the day")?;
        let asks = crossbook_core::arb::AskLadders::from_venue_a(&book);
        let e = crossbook_core::arb::execute(asks.side(crossbook_core::Outcome::Yes), size, |p| {
            crossbook_core::arb::fees::taker_fee(Exchange::VenueA, p)
        });
        executions.push(began.elapsed());
        anyhow::ensure!(e.filled.micros() > 0, "the walk at {t} filled nothing");
    }

    // The same reads over HTTP, through the real server with a free key (the market in the catalog first).
    let market = Market::new(Exchange::VenueA, MARKET, "KXBENCH-E", "KXBENCH", "Bench KXBENCH-00000?");
    store.upsert_markets(&[market], Timestamp::now()).await?;
    let api_key = store.create_key("bench-log-read", Plan::Free).await?.key;
    store.close().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr: SocketAddr = listener.local_addr()?;
    let mut cfg = Config::for_tests(&url);
    cfg.retention_days = 0;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(crossbook_server::serve(cfg, listener, async {
        let _ = stop_rx.await;
    }));
    let client = reqwest::Client::new();
    let base = format!("http://{addr}/v1/historical/venue_a/orderbook?market_id={MARKET}");
    // The time from sending a request to holding the whole body; the client's JSON parsing is not counted.
    let get = async |url: &str| -> anyhow::Result<(Duration, serde_json::Value)> {
        let t = Instant::now();
        let resp = client.get(url).header("x-api-key", &api_key).send().await?;
        anyhow::ensure!(resp.status().is_success(), "{url}: status {}", resp.status());
        let body = resp.bytes().await?;
        let took = t.elapsed();
        Ok((took, serde_json::from_slice(&body)?))
    };
    let latest_url = format!("{base}&limit=100");
    let mut http_latest = Vec::new();
    for _ in 0..args.repeat {
        let (took, v) = get(&latest_url).await?;
        http_latest.push(took);
        let n = v["snapshots"].as_array().map_or(0, Vec::len);
        anyhow::ensure!(n == 100, "latest over HTTP: {n} rows");
    }
    // The same route for one row: what a request costs besides reading and rendering rows.
    let one_url = format!("{base}&limit=1");
    let mut http_one = Vec::new();
    for _ in 0..args.repeat {
        let (took, v) = get(&one_url).await?;
        http_one.push(took);
        anyhow::ensure!(v["snapshots"].as_array().map_or(0, Vec::len) == 1, "latest 1 over HTTP");
    }
    let range_url = format!(
        "{base}&start_time={start}&end_time={}&granularity=1m&limit=200",
        start + day - 1
    );
    let mut http_walks = Vec::new();
    for _ in 0..args.repeat.min(5) {
        let (mut rows, mut url, mut walk) = (0, range_url.clone(), Duration::ZERO);
        loop {
            let (took, v) = get(&url).await?;
            walk += took;
            rows += v["snapshots"].as_array().map_or(0, Vec::len);
            match v["pagination"]["pagination_key"].as_str() {
                Some(k) => url = format!("{range_url}&pagination_key={k}"),
                None => break,
            }
        }
        http_walks.push(walk);
        anyhow::ensure!(rows == 1_440, "day at 1m over HTTP: {rows} rows");
    }
    let mut http_executions = Vec::new();
    for &t in &instants {
        let url = format!(
            "http://{addr}/v1/historical/venue_a/execution-price?market_id={MARKET}&side=yes&size=100&time={t}"
        );
        let (took, v) = get(&url).await?;
        http_executions.push(took);
        anyhow::ensure!(v["continuous"] == true && v["filled_size"].as_f64() > Some(0.0), "{v}");
    }
    let _ = stop_tx.send(());
    server.await??;

    println!(
        "log-read backend={} events={events} ({} changes/s over one day, compacted)",
        if url.starts_with("sqlite:") {
            "sqlite"
        } else {
            "postgres"
        },
        args.rate
    );
    println!(
        "  latest 100 rows at the store: median {:.2} ms",
        median(latest).as_secs_f64() * 1e3
    );
    println!(
        "  the day at 1m (1,440 rows) in pages of 200 at the store: median {:.1} ms",
        median(walks).as_secs_f64() * 1e3
    );
    println!(
        "  latest 100 rows over HTTP: median {:.2} ms",
        median(http_latest).as_secs_f64() * 1e3
    );
    println!(
        "  latest 1 row over HTTP (a request's fixed cost): median {:.2} ms",
        median(http_one).as_secs_f64() * 1e3
    );
    println!(
        "  the day at 1m (1,440 rows) in pages of 200 over HTTP: median {:.1} ms",
        median(http_walks).as_secs_f64() * 1e3
    );
    println!(
        "  execution price of 100 contracts at an instant of the day, at the store: median {:.2} ms",
        median(executions).as_secs_f64() * 1e3
    );
    println!(
        "  the same over HTTP (/v1/historical/venue_a/execution-price): median {:.2} ms",
        median(http_executions).as_secs_f64() * 1e3
    );
    Ok(())
}
