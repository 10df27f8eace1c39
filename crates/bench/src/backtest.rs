//! `backtest`: a cross-venue arbitrage backtest over a recorded day of both venues' BTC windows, run at the
//! store as `crossbook backtest` and `POST /v1/backtests` run it. Seeds a UTC day of 15-minute and hourly window
//! pairs (each pair: a venue_a market and a venue_b market with its two tokens) whose books change `--rate`
//! times a second each while their window is open, through the ingest writer (its numbering and keyframes),
//! compacts it, settles every market, then runs the backtest and reports book events a second.
//!
//! The books quote around a shared fair price with noise of their own per venue, so the two venues now and
//! then cross by more than both fees and the scanner finds something to trade.

use std::{sync::Arc, time::Instant};

use clap::Args;
use crossbook_core::{
    Amount, BookSnapshot, Event, Exchange, IntervalCode, Market, Price, Status, Timestamp,
    arb::MicroUsd,
    backtest::BacktestParams,
    book::{Ladders, Level},
};
use crossbook_server::{backtests, export::ladder_changes};
use crossbook_venues::{BookUpdate, ingest::book_writer::BookInput};
use rand::{Rng, SeedableRng, rngs::StdRng};

#[derive(Args, Debug)]
pub struct BacktestArgs {
    /// Database (sqlite://… is recreated; on postgres://… the tables it uses are emptied first).
    #[arg(long, default_value = "sqlite:///tmp/crossbook-bench-backtest.db")]
    database_url: String,
    /// Changes per second of each book while its window is open.
    #[arg(long, default_value_t = 5)]
    rate: u32,
    /// Hours of the day seeded (from midnight UTC).
    #[arg(long, default_value_t = 24)]
    hours: i64,
    /// Runs of the backtest over the seeded day (each timed).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Latency of the run, ms.
    #[arg(long, default_value_t = 250)]
    latency_ms: i64,
    /// Run on the day an earlier run seeded (same `--hours` and `--rate`) instead of seeding it again.
    #[arg(long)]
    no_seed: bool,
}

/// One window pair being seeded.
struct Pair {
    start: i64,
    end: i64,
    /// venue_a ticker; venue_b condition id (tokens `<id>-up`, `<id>-down`).
    a: String,
    b: String,
    /// Fair YES price in cents, and each venue's own noise.
    fair: i64,
    noise: [i64; 3],
    /// Each book's resting size at each price (cents), so a quote that moves keeps the sizes it finds.
    sizes: [[i64; 100]; 3],
    seq: [u64; 3],
    last: [Option<Ladders>; 3],
}

/// Ten levels a cent apart from `best` (cents) away from the middle, at the sizes resting there.
fn ladder(best: i64, down: bool, sizes: &[i64; 100]) -> Vec<Level> {
    (0..10)
        .map(|i| best + if down { -i } else { i })
        .filter(|c| (1..=99).contains(c))
        .map(|c| Level {
            price: Price::from_cents(c),
            size: Amount::from_units(sizes[c as usize]),
        })
        .collect()
}

impl Pair {
    /// The three books now: venue_a (YES bids, NO bids), venue_b YES token, venue_b NO token.
    /// Book `k` now: venue_a (YES bids, NO bids), venue_b YES token, venue_b NO token.
    fn ladders(&self, k: usize) -> Ladders {
        let (p, [na, ny, nn], z) = (self.fair, self.noise, &self.sizes[k]);
        match k {
            0 => Ladders {
                bids: ladder(p - 1 + na, true, z),
                asks: vec![],
                // Sizes of NO bids rest at their own prices, in the upper half of the table.
                no_bids: ladder(100 - p - 1 - na, true, z),
            },
            1 => Ladders {
                bids: ladder(p - 1 + ny, true, z),
                asks: ladder(p + 1 + ny, false, z),
                no_bids: vec![],
            },
            _ => Ladders {
                bids: ladder(100 - p - 1 + nn, true, z),
                asks: ladder(100 - p + 1 + nn, false, z),
                no_bids: vec![],
            },
        }
    }

    fn snapshot(&self, book: usize, at: Timestamp, l: &Ladders) -> BookSnapshot {
        let (exchange, market_id, asset_id) = match book {
            0 => (Exchange::VenueA, self.a.clone(), None),
            1 => (Exchange::VenueB, self.b.clone(), Some(format!("{}-up", self.b))),
            _ => (Exchange::VenueB, self.b.clone(), Some(format!("{}-down", self.b))),
        };
        BookSnapshot {
            exchange,
            market_id,
            asset_id,
            timestamp: at,
            bids: l.bids.clone(),
            asks: l.asks.clone(),
            no_bids: l.no_bids.clone(),
        }
    }

    fn markets(&self, ic: IntervalCode, rng: &mut StdRng) -> [Market; 2] {
        let yes_won = rng.random_bool(0.5);
        [
            (Exchange::VenueA, &self.a, "KXBTC"),
            (Exchange::VenueB, &self.b, "btc-up-or-down"),
        ]
        .map(|(ex, id, series)| {
            let mut m = Market::new(ex, id, &format!("EV-{id}"), series, "Bitcoin up or down?");
            m.interval_code = Some(ic);
            m.window_start = Some(Timestamp::from_millis(self.start));
            m.window_end = Some(Timestamp::from_millis(self.end));
            m.status = Status::Closed;
            m.last_yes_price = Some(if yes_won { Price::ONE } else { Price::ZERO });
            m.settled_at = Some(Timestamp::from_millis(self.end + 60_000));
            if ex == Exchange::VenueB {
                m.yes_token_id = Some(format!("{id}-up"));
                m.no_token_id = Some(format!("{id}-down"));
            }
            m
        })
    }
}

pub async fn run(args: BacktestArgs) -> anyhow::Result<()> {
    let day = crossbook_core::time::DAY_MS;
    let start = (Timestamp::now().millis() / day - 1) * day;
    let end = start + args.hours * 3_600_000;
    let store = if args.no_seed {
        let store = crossbook_store::open(&args.database_url).await?;
        store.migrate().await?;
        store
    } else {
        let store =
            crate::fresh_store(&args.database_url, "book_chunks, log_books, markets, events, backtests").await?;
        seed(&store, start, end, args.rate, args.hours).await?;
        store
    };
    let params = BacktestParams {
        latency_ms: args.latency_ms,
        capital_per_trade: Some(MicroUsd(100_000_000)),
        capital_total: None,
        ..BacktestParams::new(Timestamp::from_millis(start), Timestamp::from_millis(end - 1))
    };
    let mut rates = Vec::new();
    for run in 0..args.runs.max(1) {
        let began = Instant::now();
        let report = backtests::run(Arc::clone(&store), params, None).await?;
        let secs = began.elapsed().as_secs_f64();
        let rate = report.events as f64 / secs;
        rates.push(rate);
        println!(
            "run {}: {} events of {} books, {} pairs in {secs:.2} s = {rate:.0} events/s; {} opportunities seen, \
             {} taken, P&L net {} dollars ({} with no latency)",
            run + 1,
            report.events,
            report.books,
            report.pairs,
            report.opportunities_seen,
            report.summary.opportunities_taken,
            crossbook_server::backtests::render::dollars(report.summary.pnl_net),
            crossbook_server::backtests::render::dollars(report.zero_latency.pnl_net),
        );
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "median {:.0} book events/s over {} runs",
        rates[rates.len() / 2],
        rates.len()
    );
    Ok(())
}

/// Seeds the windows of `[start, end)`, settled, and their books.
async fn seed(
    store: &Arc<dyn crossbook_store::Store>,
    start: i64,
    end: i64,
    rate: u32,
    hours: i64,
) -> anyhow::Result<()> {
    let mut rng = StdRng::seed_from_u64(7);

    // The windows of the range, and their markets.
    let mut pairs = Vec::new();
    let mut markets = Vec::new();
    for (ic, len) in [(IntervalCode::M15, 900_000i64), (IntervalCode::H1, 3_600_000)] {
        let mut t = start;
        while t + len <= end {
            let n = pairs.len();
            let p = Pair {
                start: t,
                end: t + len,
                a: format!("KXBTC{}-BENCH-{n:04}", ic.as_str().to_ascii_uppercase()),
                b: format!("0xbench{n:04}"),
                fair: rng.random_range(30..=70),
                noise: [0; 3],
                sizes: [(); 3].map(|_| std::array::from_fn(|_| rng.random_range(20..=200))),
                seq: [0; 3],
                last: [None, None, None],
            };
            markets.extend(p.markets(ic, &mut rng));
            pairs.push(p);
            t += len;
        }
    }
    let events: Vec<Event> = markets
        .iter()
        .map(|m| {
            let mut e = Event::new(m.exchange, &m.event_id, &m.series_id, "Bitcoin Up or Down");
            if m.exchange == Exchange::VenueB {
                e.slug = Some(format!(
                    "btc-updown-{}",
                    m.window_start.map_or(0, |t| t.millis() / 1000)
                ));
            }
            e
        })
        .collect();
    let at = Timestamp::from_millis(start);
    store.upsert_events(&events, at).await?;
    store.upsert_markets(&markets, at).await?;

    // The books, in time order, through the ingest writer.
    let seeding = Instant::now();
    let (tx, writer) = crate::book_log::spawn_writer(store);
    let step = 1000 / i64::from(rate.max(1));
    let seeded = tokio::task::spawn_blocking(move || {
        let mut n = 0u64;
        let mut t = start;
        while t < end {
            for (j, p) in pairs.iter_mut().enumerate().filter(|(_, p)| p.start <= t && t < p.end) {
                // Each book changes once a step: mostly one resting size, now and then its quotes move a
                // cent (the fair price wanders, and each venue's quotes wander around it), as venues' feeds do.
                if rng.random_bool(0.05) {
                    p.fair = (p.fair + rng.random_range(-1..=1)).clamp(15, 85);
                }
                for k in 0..3 {
                    if rng.random_bool(0.15) {
                        p.noise[k] = (p.noise[k] + rng.random_range(-1..=1)).clamp(-4, 4);
                    } else {
                        let c = rng.random_range(1..100usize);
                        p.sizes[k][c] = rng.random_range(20..=200);
                    }
                    let l = p.ladders(k);
                    let ts = Timestamp::from_millis(t + (j as i64 * 3 + k as i64) % step.max(1));
                    let snap = p.snapshot(k, ts, &l);
                    let update = match &p.last[k] {
                        None => BookUpdate::snapshot(snap, None, None),
                        Some(before) => {
                            let changes = ladder_changes(before, &l);
                            if changes.is_empty() {
                                continue;
                            }
                            BookUpdate::delta(snap, changes, None, None)
                        }
                    };
                    p.seq[k] += 1;
                    p.last[k] = Some(l);
                    n += 1;
                    let input = BookInput::Update {
                        update,
                        received_at: ts,
                        seq: p.seq[k],
                        restart_gap: None,
                    };
                    if tx.blocking_send(input).is_err() {
                        return n;
                    }
                }
            }
            t += step;
        }
        n
    })
    .await?;
    writer.await?;
    let mut after = 0;
    while let Some(n) = store.compact_log(Timestamp::now(), after, 5_000).await?.next {
        after = n;
    }
    println!(
        "seeded {seeded} book events of {} books over {} hours in {:.1} s",
        markets.len() / 2 * 3,
        hours,
        seeding.elapsed().as_secs_f64()
    );

    Ok(())
}
