//! `ohlcv`: `GET /v1/markets/ohlcv` over real HTTP. Seeds `--trades` trades (10 million by default) over the
//! past year among `--markets` venue_a markets through the store's trade insert, which keeps the candle
//! aggregates as ingestion does (the seeding rate is that write path's rate), then times a year of one
//! market's daily candles, and two other shapes, sequentially on one connection.

use std::{net::SocketAddr, time::Instant};

use anyhow::Context;
use clap::Args;
use crossbook_core::{Amount, Exchange, Market, Outcome, Plan, Price, TakerSide, Timestamp, Trade, time::DAY_MS};
use crossbook_server::config::{Config, Role};
use crossbook_store::{Store, TradeQuery};
use rand::{Rng, SeedableRng, rngs::StdRng};

use crate::percentile;

#[derive(Args, Debug)]
pub struct OhlcvArgs {
    /// Database to seed and query (sqlite://… or postgres://…); reused when it already holds the trades.
    #[arg(long, default_value = "sqlite:///tmp/crossbook-bench-ohlcv.db")]
    database_url: String,
    /// Trades over the past year, in all.
    #[arg(long, default_value_t = 10_000_000)]
    trades: u64,
    /// Markets the trades fall on.
    #[arg(long, default_value_t = 20)]
    markets: u64,
    /// Requests to time per shape.
    #[arg(long, default_value_t = 200)]
    requests: usize,
}

const BATCH: u64 = 5_000;

fn market_id(i: u64) -> String {
    format!("KXOHLCV-{i:03}")
}

/// The newest stored trade of market 0, if the database was seeded by an earlier run.
async fn seeded_until(store: &dyn Store) -> anyhow::Result<Option<Timestamp>> {
    let id = market_id(0);
    let q = TradeQuery {
        exchange: Exchange::VenueA,
        market_id: &id,
        outcome: None,
        range: None,
        after: None,
        newest_first: true,
        limit: 1,
    };
    Ok(store.trade_page(&q).await?.first().map(|t| t.trade.executed_at))
}

async fn seed(store: &dyn Store, args: &OhlcvArgs, end: i64) -> anyhow::Result<()> {
    let markets: Vec<Market> = (0..args.markets)
        .map(|i| Market::new(Exchange::VenueA, &market_id(i), "KXOHLCV", "KXOHLCV", "Bench market?"))
        .collect();
    store.upsert_markets(&markets, Timestamp::now()).await?;
    let mut rng = StdRng::seed_from_u64(7);
    // Each market's YES price walks a cent at a time inside [0.05, 0.95].
    let mut price: Vec<i64> = vec![50; args.markets as usize];
    let span = 365 * DAY_MS;
    let started = Instant::now();
    let mut n = 0u64;
    while n < args.trades {
        let len = BATCH.min(args.trades - n);
        let batch: Vec<Trade> = (n..n + len)
            .map(|j| {
                // In time order, as ingestion mostly stores them.
                let at = end - span + (j as i64) * span / args.trades as i64;
                let m = rng.random_range(0..args.markets) as usize;
                price[m] = (price[m] + rng.random_range(-1..=1)).clamp(5, 95);
                let yes = rng.random_bool(0.5);
                Trade {
                    exchange: Exchange::VenueA,
                    source_trade_id: format!("T{j}"),
                    market_id: market_id(m as u64),
                    event_id: "KXOHLCV".into(),
                    executed_at: Timestamp::from_millis(at),
                    taker_side: TakerSide::Buy,
                    outcome: if yes { Outcome::Yes } else { Outcome::No },
                    price: Price::from_cents(if yes { price[m] } else { 100 - price[m] }),
                    size: Amount::from_units(rng.random_range(1..500)),
                }
            })
            .collect();
        store.insert_trades(&batch).await?;
        n += len;
        if n.is_multiple_of(1_000_000) || n == args.trades {
            eprintln!(
                "seeded {n} trades in {:.0} s ({:.0} trades/s, candle aggregates included)",
                started.elapsed().as_secs_f64(),
                n as f64 / started.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}

/// Runs the `ohlcv` benchmark.
pub async fn run(args: OhlcvArgs) -> anyhow::Result<()> {
    let backend = args.database_url.split(':').next().unwrap_or("?").to_string();
    let store = crossbook_store::open(&args.database_url).await.context("open store")?;
    store.migrate().await?;
    let end = match seeded_until(store.as_ref()).await? {
        Some(last) => {
            eprintln!("database already seeded; reusing it");
            last.millis() + 1
        }
        None => {
            let end = Timestamp::now().millis();
            seed(store.as_ref(), &args, end).await?;
            end
        }
    };
    let key = store.create_key("bench-ohlcv", Plan::Trader).await?.key;
    store.close().await;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr: SocketAddr = listener.local_addr()?;
    let mut cfg = Config::for_tests(&args.database_url);
    cfg.role = Role::Api;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(crossbook_server::serve(cfg, listener, async {
        let _ = stop_rx.await;
    }));
    let client = reqwest::Client::new();
    let year_ago = end - 365 * DAY_MS;
    let all: Vec<String> = (0..args.markets).map(market_id).collect();
    let shapes = [
        (
            "one market, a year of 1d candles",
            format!(
                "/v1/markets/ohlcv?market_ids={}&interval=1d&from={year_ago}&to={end}",
                market_id(0)
            ),
        ),
        (
            "one market, 62 days of 1h candles",
            format!(
                "/v1/markets/ohlcv?market_ids={}&interval=1h&from={}&to={end}",
                market_id(0),
                end - 62 * DAY_MS
            ),
        ),
        (
            "every market, a year of 1w candles",
            format!(
                "/v1/markets/ohlcv?market_ids={}&interval=1w&from={year_ago}&to={end}",
                all.join(",")
            ),
        ),
    ];
    for (label, path) in &shapes {
        let get = || {
            client
                .get(format!("http://{addr}{path}"))
                .header("x-api-key", key.as_str())
                .send()
        };
        let body = get().await?.error_for_status()?.json::<serde_json::Value>().await?;
        let candles = body["markets"][0]["candles"].as_array().map_or(0, Vec::len);
        let trades: i64 = body["markets"][0]["candles"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["trade_count"].as_i64())
            .sum();
        for _ in 0..10 {
            get().await?.error_for_status()?;
        }
        let mut lat = Vec::with_capacity(args.requests);
        for _ in 0..args.requests {
            let t = Instant::now();
            let resp = get().await?;
            anyhow::ensure!(resp.status().is_success(), "status {}", resp.status());
            let _ = resp.bytes().await?;
            lat.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        lat.sort_by(|a, b| a.total_cmp(b));
        println!(
            "ohlcv {backend} {} trades, {label}: {candles} candles over {trades} trades of the first market; \
             n={} median={:.2} ms p90={:.2} ms p99={:.2} ms",
            args.trades,
            lat.len(),
            percentile(&lat, 0.5),
            percentile(&lat, 0.9),
            percentile(&lat, 0.99),
        );
    }
    let _ = stop_tx.send(());
    server.await??;
    Ok(())
}
