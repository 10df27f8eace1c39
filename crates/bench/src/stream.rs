//! Live stream figures:
//!
//! - `stream-latency`: the delay from a simulator book change to a stream client's `book` message, to its
//!   `arbitrage` message, and to an `arbitrage.opportunity` webhook POST on loopback. The simulated venues run
//!   on a manual clock; each model step is published at `t0`, and every message (and POST) that follows it is
//!   timed against `t0`, as `ingest-latency` does for the in-memory book. The whole service runs in this
//!   process (`crossbook_server::serve`), with the real connectors, scanner, hub and webhook dispatcher.
//! - `stream-fanout`: many clients, each following the books of many markets, against a `crossbook serve`
//!   child process (so its memory is the server's alone) fed by the simulated venues on the wall clock. Each
//!   book message is timed from `received_at` (when the server received the venue frame) to its arrival at
//!   the client; the server's resident memory is sampled while the clients are connected. With
//!   `--api-processes N`, a leader publishes on the bus and N api processes mirror it and stream, `--clients`
//!   clients each; the delay then includes the bus.
//!
//! ```text
//! cargo run --release -p crossbook-bench -- stream-latency
//! cargo build --release -p crossbook && cargo run --release -p crossbook-bench -- stream-fanout --clients 1000 --markets 100
//! cargo run --release -p crossbook-bench -- stream-fanout --clients 1000 --markets 100 --api-processes 2
//! ```

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use anyhow::Context;
use clap::Args;
use crossbook_core::{Exchange, Plan, Timestamp};
use crossbook_server::config::Config;
use crossbook_sim::{Phase, SimClock, SimConfig, SimHandle, Simulator};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest};

#[derive(Args, Debug)]
pub struct LatencyArgs {
    /// Model steps (200 ms of model time each) to time.
    #[arg(long, default_value_t = 300)]
    steps: usize,
    /// Seed of the simulated venues.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

#[derive(Args, Debug)]
pub struct FanoutArgs {
    /// Concurrent stream clients.
    #[arg(long, default_value_t = 1_000)]
    clients: usize,
    /// Markets whose books each client follows (the same markets for every client: the worst case, where
    /// every change goes to every client).
    #[arg(long, default_value_t = 100)]
    markets: usize,
    /// Seconds of measurement once every client has its snapshots.
    #[arg(long, default_value_t = 30)]
    seconds: u64,
    /// The `crossbook` binary to run as the server.
    #[arg(long, default_value = "target/release/crossbook")]
    server_bin: String,
    /// Seed of the simulated venues.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Api processes to spread the clients over (`--clients` each). 0: one `serve` process ingests and
    /// streams, on SQLite. N > 0: a `serve --role ingest` leader publishes on a nats-server the bench starts
    /// (or `--nats-url`), and N `serve --role api` processes mirror it and stream; all share the PostgreSQL
    /// database of `CROSSBOOK_TEST_DATABASE_URL` (a fresh one is made on that server).
    #[arg(long, default_value_t = 0)]
    api_processes: usize,
    /// A running nats-server with JetStream for `--api-processes`; by default the bench starts its own.
    #[arg(long)]
    nats_url: Option<String>,
}

pub(crate) fn percentiles(name: &str, mut d: Vec<f64>) -> String {
    if d.is_empty() {
        return format!("{name}: none observed");
    }
    d.sort_by(f64::total_cmp);
    let q = |p: usize| d[(d.len() * p / 100).min(d.len() - 1)];
    format!(
        "{name}: {} messages, p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        d.len(),
        q(50),
        q(90),
        q(99),
        d[d.len() - 1]
    )
}

pub(crate) async fn create_key(url: &str, plan: Plan) -> anyhow::Result<String> {
    let store = crossbook_store::open(url).await?;
    store.migrate().await?;
    let key = store.create_key("bench", plan).await?.key;
    store.close().await;
    Ok(key)
}

pub(crate) type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub(crate) async fn connect(addr: SocketAddr, key: &str) -> anyhow::Result<Ws> {
    let mut req = format!("ws://{addr}/v1/stream").into_client_request()?;
    req.headers_mut().insert("x-api-key", key.parse()?);
    let (ws, _) = tokio_tungstenite::connect_async(req).await?;
    Ok(ws)
}

pub(crate) async fn subscribe(ws: &mut Ws, channel: &str, markets: &[String]) -> anyhow::Result<()> {
    let op = json!({"op": "subscribe", "channel": channel, "markets": markets});
    ws.send(Message::Text(op.to_string().into())).await?;
    Ok(())
}

/// Open markets of both venues, venue_a first, at most `n`.
fn open_markets(sim: &crossbook_sim::SimHandle, n: usize) -> Vec<String> {
    [Exchange::VenueA, Exchange::VenueB]
        .into_iter()
        .flat_map(|ex| sim.markets(ex))
        .filter(|m| m.phase == Phase::Open)
        .map(|m| m.market_id)
        .take(n)
        .collect()
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
    let (url, path) = crate::temp_sqlite("stream-latency");
    let key = create_key(&url, Plan::Trader).await?;

    // A webhook receiver on loopback: each POST's arrival, timed by the step loop.
    let posts: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let hooks = {
        let posts = posts.clone();
        axum::Router::new().route(
            "/hook",
            axum::routing::post(move || {
                let posts = posts.clone();
                async move {
                    posts.lock().unwrap().push(Instant::now());
                    "ok"
                }
            }),
        )
    };
    let hook_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let hook_addr = hook_listener.local_addr()?;
    tokio::spawn(async move { axum::serve(hook_listener, hooks).await });

    let mut config = Config {
        database_url: url.clone(),
        allow_private_webhook_targets: true,
        webhook_min_net_cents: 0.0,
        opportunity_cooldown_seconds: 0,
        // Webhooks then come from the book changes the steps make, not from the periodic safety-net pass
        // (which would post at any time in a step and be timed as if the step caused it).
        scan_interval_ms: 3_600_000,
        ..Config::for_tests(&url)
    };
    config = config
        .merged_with_toml(&sim.urls().config_toml())
        .map_err(anyhow::Error::msg)?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(crossbook_server::serve(config, listener, async move {
        let _ = stop_rx.await;
    }));

    let http = reqwest::Client::new();
    // Warm up: the model runs until the server is ready with books of both venues.
    let warm = Instant::now();
    loop {
        sim.advance(Duration::from_millis(200));
        tokio::time::sleep(Duration::from_millis(200)).await;
        let ready = http.get(format!("http://{addr}/readyz")).send().await;
        if let Ok(r) = ready
            && r.status() == 200
            && warm.elapsed() > Duration::from_secs(5)
        {
            break;
        }
        anyhow::ensure!(
            warm.elapsed() < Duration::from_secs(90),
            "the server did not become ready"
        );
    }
    let r = http
        .post(format!("http://{addr}/v1/webhooks/arbitrage"))
        .header("x-api-key", &key)
        .json(&json!({"url": format!("http://{hook_addr}/hook")}))
        .send()
        .await?;
    anyhow::ensure!(
        r.status() == 201,
        "webhook registration: {} {}",
        r.status(),
        r.text().await?
    );

    let markets = open_markets(&sim, 5_000);
    let mut ws = connect(addr, &key).await?;
    subscribe(&mut ws, "book", &markets).await?;
    subscribe(&mut ws, "arbitrage", &[]).await?;
    // Let the subscriptions' snapshots pass.
    for _ in 0..10 {
        sim.advance(Duration::from_millis(200));
        let until = Instant::now() + Duration::from_millis(200);
        while let Ok(Some(_)) = tokio::time::timeout_at(until.into(), ws.next()).await {}
    }
    posts.lock().unwrap().clear();

    let (mut book, mut arb, mut hook) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..args.steps {
        let t0 = Instant::now();
        sim.advance(Duration::from_millis(200));
        let window = t0 + Duration::from_millis(200);
        loop {
            match tokio::time::timeout_at(window.into(), ws.next()).await {
                Ok(Some(Ok(Message::Text(t)))) => {
                    let ms = t0.elapsed().as_secs_f64() * 1e3;
                    let v: Value = serde_json::from_str(t.as_str())?;
                    match (v["channel"].as_str(), v["type"].as_str()) {
                        (Some("book"), Some("change" | "snapshot")) => book.push(ms),
                        (Some("arbitrage"), Some("opportunity")) => arb.push(ms),
                        _ => {}
                    }
                }
                Ok(Some(Ok(_))) => {}
                Ok(Some(Err(e))) => anyhow::bail!("stream: {e}"),
                Ok(None) => anyhow::bail!("the stream closed"),
                Err(_) => break,
            }
        }
        hook.extend(
            posts
                .lock()
                .unwrap()
                .drain(..)
                .filter(|t| *t >= t0)
                .map(|t| (t - t0).as_secs_f64() * 1e3),
        );
    }
    let _ = stop_tx.send(());
    server.await?.context("the server")?;
    sim.shutdown().await;
    crate::remove_sqlite(&path);
    println!(
        "stream-latency: {} model steps, {} markets followed; simulator publish -> client message",
        args.steps,
        markets.len()
    );
    println!("  {}", percentiles("book", book));
    println!("  {}", percentiles("arbitrage", arb));
    println!("  {}", percentiles("webhook POST (arbitrage.opportunity)", hook));
    Ok(())
}

/// Resident memory of a process, in MiB.
pub(crate) fn rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

/// The `received_at` of a message, read without parsing the whole message (a thousand clients parse in this
/// process, beside the server).
pub(crate) fn received_at_ms(text: &str) -> Option<i64> {
    let i = text.find("\"received_at\":\"")? + "\"received_at\":\"".len();
    Timestamp::parse_iso(text.get(i..i + 24)?).ok().map(|t| t.millis())
}

/// The processes of a fan-out run: the ones clients connect to, and what must outlive them.
struct Serving {
    /// Every child process (the leader first when there are api processes).
    children: Vec<tokio::process::Child>,
    config_paths: Vec<std::path::PathBuf>,
    /// Where clients connect, with each process's pid (its memory is sampled).
    streams: Vec<(SocketAddr, u32)>,
    /// The process whose `/metrics` counts the captured changes.
    sqlite: Option<std::path::PathBuf>,
    _db: Option<crossbook_store::testing::TestDb>,
    _nats: Option<crossbook_live::testing::NatsServer>,
}

/// Starts the server(s) of a fan-out run and waits until every one is ready; returns them with a key.
async fn start_serving(args: &FanoutArgs, sim: &SimHandle) -> anyhow::Result<(Serving, String)> {
    // Every serving process: quiet logs, and no rate or connection limit on the bench's key.
    let serving = "log = \"warn\"\nrate_limit_trader = 0\nstream_connections_trader = 0\n";
    let common = format!("{serving}{}", sim.urls().config_toml());
    let mut s = Serving {
        children: Vec::new(),
        config_paths: Vec::new(),
        streams: Vec::new(),
        sqlite: None,
        _db: None,
        _nats: None,
    };
    let mut waits = Vec::new();
    let key;
    if args.api_processes == 0 {
        let (url, path) = crate::temp_sqlite("stream-fanout");
        key = create_key(&url, Plan::Trader).await?;
        let addr = crate::free_addr()?;
        let (child, config) = crate::spawn_server(
            &args.server_bin,
            "fanout",
            &format!("{common}database_url = \"{url}\"\nlisten = \"{addr}\"\n"),
            std::process::Stdio::inherit(),
        )?;
        s.streams.push((addr, child.id().context("server pid")?));
        s.children.push(child);
        s.config_paths.push(config);
        s.sqlite = Some(path);
        waits.push(addr);
    } else {
        let db = crossbook_store::testing::postgres_database()
            .await
            .context("--api-processes needs PostgreSQL: set CROSSBOOK_TEST_DATABASE_URL")?;
        key = create_key(&db.url, Plan::Trader).await?;
        let (nats_url, nats) = crate::nats(args.nats_url.clone())?;
        let leader = crate::free_addr()?;
        let (child, config) = crate::spawn_server(
            &args.server_bin,
            "fanout-leader",
            &format!(
                "{common}database_url = \"{}\"\nlisten = \"{leader}\"\nrole = \"ingest\"\nbus_url = \"{nats_url}\"\n",
                db.url
            ),
            std::process::Stdio::inherit(),
        )?;
        s.children.push(child);
        s.config_paths.push(config);
        waits.push(leader);
        for i in 0..args.api_processes {
            let addr = crate::free_addr()?;
            let (child, config) = crate::spawn_server(
                &args.server_bin,
                &format!("fanout-api{i}"),
                &format!(
                    "{serving}database_url = \"{}\"\nlisten = \"{addr}\"\nrole = \"api\"\nbus_url = \"{nats_url}\"\n",
                    db.url
                ),
                std::process::Stdio::inherit(),
            )?;
            s.streams.push((addr, child.id().context("api process pid")?));
            s.children.push(child);
            s.config_paths.push(config);
            waits.push(addr);
        }
        s._db = Some(db);
        s._nats = nats;
    }
    let http = reqwest::Client::new();
    let warm = Instant::now();
    for addr in waits {
        loop {
            if let Ok(r) = http.get(format!("http://{addr}/readyz")).send().await
                && r.status() == 200
            {
                break;
            }
            anyhow::ensure!(
                warm.elapsed() < Duration::from_secs(120),
                "the server at {addr} did not become ready"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    Ok((s, key))
}

pub async fn fanout(args: FanoutArgs) -> anyhow::Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let sim = Simulator::start(SimConfig::new(args.seed, SimClock::default())).await?;
    let (mut serving, key) = start_serving(&args, &sim).await?;
    let http = reqwest::Client::new();
    let pids: Vec<u32> = serving.streams.iter().map(|(_, pid)| *pid).collect();
    let rss_of = |pids: &[u32]| pids.iter().map(|p| rss_mib(*p).unwrap_or(0.0)).fold(0.0, f64::max);
    let rss_idle = rss_of(&pids);
    let markets = open_markets(&sim, args.markets);
    let clients = args.clients * serving.streams.len();
    anyhow::ensure!(!markets.is_empty(), "no open market");

    // Clients: each connects, follows the markets, and records the delay of every book message once
    // measuring starts.
    let measuring = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let delays: Arc<Mutex<Vec<f64>>> = Arc::default();
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel::<anyhow::Result<()>>(clients);
    // Each client says once when it has had as many messages as markets (its snapshots have arrived).
    let (primed_tx, mut primed_rx) = tokio::sync::mpsc::channel::<()>(clients);
    let stop = tokio_util::sync::CancellationToken::new();
    let mut tasks = Vec::new();
    for i in 0..clients {
        // Round robin over the serving processes.
        let addr = serving.streams[i % serving.streams.len()].0;
        let (key, markets, measuring, delays, ready_tx, primed_tx, stop) = (
            key.clone(),
            markets.clone(),
            measuring.clone(),
            delays.clone(),
            ready_tx.clone(),
            primed_tx.clone(),
            stop.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut ws = match connect(addr, &key).await {
                Ok(ws) => ws,
                Err(e) => {
                    let _ = ready_tx.send(Err(e)).await;
                    return 0u64;
                }
            };
            if let Err(e) = subscribe(&mut ws, "book", &markets).await {
                let _ = ready_tx.send(Err(e)).await;
                return 0;
            }
            let _ = ready_tx.send(Ok(())).await;
            drop(ready_tx);
            let mut mine = Vec::new();
            let mut messages = 0u64;
            loop {
                tokio::select! {
                    () = stop.cancelled() => break,
                    m = ws.next() => match m {
                        Some(Ok(Message::Text(t))) => {
                            let now = Timestamp::now().millis();
                            messages += 1;
                            if messages == markets.len() as u64 + 2 {
                                let _ = primed_tx.send(()).await;
                            }
                            if measuring.load(std::sync::atomic::Ordering::Relaxed)
                                && t.as_str().contains("\"channel\":\"book\"")
                                && let Some(at) = received_at_ms(t.as_str())
                            {
                                mine.push((now - at) as f64);
                            }
                        }
                        Some(Ok(_)) => {}
                        _ => break,
                    }
                }
            }
            delays.lock().unwrap().extend(mine);
            messages
        }));
    }
    drop(ready_tx);
    // Each client holds its sender until it ends: count the answers rather than wait for the channel to close.
    let mut connected = 0;
    while connected < clients {
        match ready_rx.recv().await {
            Some(r) => r?,
            None => break,
        }
        connected += 1;
    }
    anyhow::ensure!(connected == clients, "{connected} of {clients} clients connected");
    drop(primed_tx);
    let primed = async {
        for _ in 0..clients {
            primed_rx.recv().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), primed)
        .await
        .context("the clients' snapshots did not all arrive within 60 s")?;
    measuring.store(true, std::sync::atomic::Ordering::Relaxed);
    let t = Instant::now();
    let mut rss_peak: f64 = 0.0;
    while t.elapsed() < Duration::from_secs(args.seconds) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        rss_peak = rss_peak.max(rss_of(&pids));
    }
    measuring.store(false, std::sync::atomic::Ordering::Relaxed);
    stop.cancel();
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap_or(0);
    }
    // Slow consumers cut, over every serving process.
    let mut slow = 0u64;
    for (addr, _) in &serving.streams {
        let metrics = http.get(format!("http://{addr}/metrics")).send().await?.text().await?;
        slow += metrics
            .lines()
            .find(|l| l.starts_with("crossbook_stream_slow_consumers_total"))
            .and_then(|l| l.split_whitespace().last())
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0) as u64;
    }
    for child in &mut serving.children {
        let _ = child.kill().await;
    }
    sim.shutdown().await;
    if let Some(path) = &serving.sqlite {
        crate::remove_sqlite(path);
    }
    for path in &serving.config_paths {
        let _ = std::fs::remove_file(path);
    }
    let d = std::mem::take(&mut *delays.lock().unwrap());
    let topology = if args.api_processes == 0 {
        "one process ingesting and streaming".to_string()
    } else {
        format!(
            "{} api processes mirroring a leader over the bus, {} clients each",
            args.api_processes, args.clients
        )
    };
    println!(
        "stream-fanout: {clients} clients x {} markets' books ({topology}), {} s measured, {} messages in all, {:.0}/s while measuring; slow consumers cut: {slow}",
        markets.len(),
        args.seconds,
        total,
        d.len() as f64 / args.seconds as f64
    );
    println!("  {}", percentiles("server receive -> client (book)", d));
    println!(
        "  serving process RSS (largest): {:.0} MiB before the clients, {:.0} MiB peak with them",
        rss_idle, rss_peak
    );
    Ok(())
}
