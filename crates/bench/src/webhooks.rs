//! `crossbook-bench webhooks`: the webhook dispatcher fanning events out to N registered receivers on loopback
//! (each its own HTTP server on `127.0.0.1:0`), measured from publishing on the bus to the last delivery
//! arriving at a receiver.
//!
//! ```text
//! cargo run --release -p crossbook-bench -- webhooks --receivers 1000 --events 50
//! ```
//!
//! Figures: (1) one event to every receiver, with new connections (the first event) and then with warm
//! connections (median and worst of `--fanouts` events, one at a time); (2) sustained: `--events` events
//! published back to back, deliveries per second until the last one arrives, and how long the delivery log
//! took to hold every attempt. The real dispatcher runs (signing, SSRF-guarded client, log writer); only the
//! address check is lifted (`allow_private_webhook_targets`) because the receivers are on loopback.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::Context;
use clap::Args;
use crossbook_core::{Amount, Exchange, Outcome, Plan, Price, TakerSide, Timestamp, Trade, whale::WhaleEntry};
use crossbook_live::DomainEvent;
use crossbook_server::{
    AppState,
    config::Config,
    workers::webhooks::{Settings, spawn_with},
};
use crossbook_store::{Store, WebhookKind};
use tokio::sync::Notify;
use tokio_util::{sync::CancellationToken, task::TaskTracker};

/// Options of the `webhooks` subcommand.
#[derive(Args)]
pub struct WebhooksArgs {
    /// Database holding the registrations and the delivery log (sqlite://… or postgres://…).
    #[arg(long, default_value = "sqlite:///tmp/crossbook-bench-webhooks.db")]
    database_url: String,
    /// Registered receivers, each its own loopback HTTP server.
    #[arg(long, default_value_t = 1_000)]
    receivers: usize,
    /// Single-event fan-outs timed after the first (warm connections).
    #[arg(long, default_value_t = 10)]
    fanouts: usize,
    /// Events published back to back for the sustained figure.
    #[arg(long, default_value_t = 50)]
    events: usize,
    /// Deliveries in flight at most (`webhook_concurrency`; the default is the service's).
    #[arg(long)]
    concurrency: Option<usize>,
}

/// Counts deliveries across every receiver and wakes the bench when a target count is reached.
struct Arrivals {
    count: AtomicUsize,
    notify: Notify,
}

impl Arrivals {
    async fn wait_for(&self, n: usize) {
        loop {
            let notified = self.notify.notified();
            if self.count.load(Ordering::SeqCst) >= n {
                return;
            }
            notified.await;
        }
    }
}

async fn start_receiver(arrivals: Arc<Arrivals>) -> anyhow::Result<String> {
    let app = axum::Router::new()
        .route(
            "/hook",
            axum::routing::post(
                |axum::extract::State(a): axum::extract::State<Arc<Arrivals>>, _body: axum::body::Bytes| async move {
                    a.count.fetch_add(1, Ordering::SeqCst);
                    a.notify.notify_waiters();
                    axum::http::StatusCode::NO_CONTENT
                },
            ),
        )
        .with_state(arrivals);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/hook", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(url)
}

fn event(n: usize) -> DomainEvent {
    DomainEvent::WhaleEntry(Arc::new(WhaleEntry {
        trade: Trade {
            exchange: Exchange::VenueA,
            source_trade_id: format!("bench-{n}"),
            market_id: "KXBTC15M-26NOV211915-15".into(),
            event_id: "KXBTC15M-26NOV211915".into(),
            executed_at: Timestamp::now(),
            taker_side: TakerSide::Buy,
            outcome: Outcome::Yes,
            price: Price::from_cents(53),
            size: Amount::from_units(2_500),
        },
        market: None,
        event_title: None,
    }))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub async fn run(args: WebhooksArgs) -> anyhow::Result<()> {
    let n = args.receivers;
    let store = crossbook_store::open(&args.database_url).await.context("open store")?;
    store.migrate().await?;

    let arrivals = Arc::new(Arrivals {
        count: AtomicUsize::new(0),
        notify: Notify::new(),
    });
    let t = Instant::now();
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let url = start_receiver(arrivals.clone()).await?;
        ids.push(register(store.as_ref(), i, &url).await?);
    }
    println!("{n} receivers started and registered in {:.0} ms", ms(t.elapsed()));

    let mut config = Config::for_tests(&args.database_url);
    config.allow_private_webhook_targets = true;
    if let Some(c) = args.concurrency {
        config.webhook_concurrency = c;
    }
    let concurrency = config.webhook_concurrency;
    let state = AppState::new(config, store.clone());
    let (tracker, cancel) = (TaskTracker::new(), CancellationToken::new());
    spawn_with(&state, Settings::default(), &tracker, &cancel);
    let deadline = Instant::now() + Duration::from_secs(30);
    while state.webhooks.targets(WebhookKind::Whale).len() < n {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the dispatcher did not load the registrations"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    println!("dispatcher: webhook_concurrency = {concurrency}");

    // (1) Fan-out of one event to every receiver.
    let mut published = 0usize;
    let mut fanout = |label: &'static str| {
        let (state, arrivals) = (state.clone(), arrivals.clone());
        published += 1;
        let (target, seq) = (published * n, published);
        async move {
            let t = Instant::now();
            state.bus.publish(event(seq));
            tokio::time::timeout(Duration::from_secs(60), arrivals.wait_for(target))
                .await
                .with_context(|| format!("{label}: not every delivery arrived within 60 s"))?;
            anyhow::Ok(t.elapsed())
        }
    };
    let cold = fanout("cold fan-out").await?;
    println!(
        "fan-out of 1 event to {n} receivers, new connections: {:.1} ms",
        ms(cold)
    );
    let mut warm = Vec::with_capacity(args.fanouts);
    for _ in 0..args.fanouts {
        warm.push(fanout("warm fan-out").await?);
    }
    warm.sort();
    if let (Some(mid), Some(worst)) = (warm.get(warm.len() / 2), warm.last()) {
        println!(
            "fan-out of 1 event to {n} receivers, warm connections ({} runs): median {:.1} ms, worst {:.1} ms",
            warm.len(),
            ms(*mid),
            ms(*worst)
        );
    }

    // (2) Sustained: events back to back.
    let before = published * n;
    let total = args.events * n;
    let t = Instant::now();
    for i in 0..args.events {
        state.bus.publish(event(published + 1 + i));
    }
    tokio::time::timeout(Duration::from_secs(300), arrivals.wait_for(before + total))
        .await
        .context("sustained run: not every delivery arrived within 300 s")?;
    let took = t.elapsed();
    println!(
        "sustained: {} events x {n} receivers = {total} deliveries in {:.0} ms = {:.0} deliveries/s",
        args.events,
        ms(took),
        total as f64 / took.as_secs_f64()
    );

    // The log holds the newest 100 attempts per registration; wait until the last registration's is full.
    let want = (args.fanouts + 1 + args.events).min(100);
    let last = *ids.last().context("no receivers")?;
    let deadline = Instant::now() + Duration::from_secs(120);
    while store.deliveries(last, 100).await?.len() < want {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the delivery log did not catch up within 120 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!(
        "delivery log complete {:.0} ms after the sustained run started",
        ms(t.elapsed())
    );

    cancel.cancel();
    tracker.close();
    tracker.wait().await;
    store.close().await;
    Ok(())
}

/// Registers receiver `i` (a customer of its own), reusing the registration of an earlier run.
async fn register(store: &dyn Store, i: usize, url: &str) -> anyhow::Result<i64> {
    let name = format!("webhook-bench-{i}");
    // Keys of the same name belong to the same customer: a rerun finds its registration again.
    let customer = store.create_key(&name, Plan::Trader).await?.info.customer_id;
    let now = Timestamp::now();
    let hook = match store
        .create_webhook(
            customer,
            WebhookKind::Whale,
            url,
            &crossbook_server::webhooks::new_secret(),
            true,
            now,
        )
        .await?
    {
        Some(h) => h,
        None => store
            .update_webhook(customer, WebhookKind::Whale, url, Some(true), now)
            .await?
            .context("registration vanished")?,
    };
    Ok(hook.id)
}
